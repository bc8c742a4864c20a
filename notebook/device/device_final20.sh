#!/usr/bin/env bash
# The other GPU tests that run gemm_bf16 (t4 among them) on the final tree, after t4's copy-out change:
# the experiment's own tests, the best-row tests and the profiling tests. Logs in $OUT/final20/.
# Usage: bash scripts/device_trial.sh final20:250
set -u
source scripts/device_step.sh
trials_begin final20 240
TAIL=6 trial tests 230 python3 -m pytest -q -p no:cacheprovider -n 16 -m "gpu and not exclusive" \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_skinny_gpu.py tests/gpu/test_profile_gpu.py
trials_end
