#!/usr/bin/env bash
# The session's last call: t4 at its default schedule (SCHEDULE=0) where the tuned pick is SCHEDULE=1
# (512^3, 4097^3, 8192^3), so the ladder's t4 column is one config on the current source; then every
# GPU test. Results in results/<gpu>/; logs in $OUT/final16/. Usage: bash scripts/device_trial.sh final16:560
set -u
source scripts/device_step.sh
trials_begin final16 550
TAIL=12 trial bench 90 gpulab bench gemm_bf16 --variant t4 -p SCHEDULE=0 --shape 512x512x512 \
    --shape 4097x4097x4097 --shape 8192x8192x8192
TAIL=12 trial pytest_gpu 330 python3 -m pytest -m "gpu and not exclusive" -q -n 16 -p no:cacheprovider --maxfail=30 tests/gpu
TAIL=4 trial pytest_exclusive 60 python3 -m pytest -m "gpu and exclusive" -q -p no:xdist -p no:cacheprovider tests/gpu
trials_end
