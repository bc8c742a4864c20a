#!/usr/bin/env bash
# The ncu evidence the FP32 rungs above v9 still lacked in profile.csv (v10 against v9, v11 against
# v10, v12 against v11, at 4096^3), the best row benched again so its records carry the ceiling of
# the variant it picked (tensor_tf32/3 for v14), and the exclusive GPU test of the full ceilings
# (with the TF32 row). Logs in $OUT/rungs29/.
# Usage: bash scripts/device_trial.sh rungs29:300
set -u
source scripts/device_step.sh
trials_begin rungs29 295
TAIL=40 trial bench 90 gpulab bench sgemm --variant best
TAIL=45 trial v9_v10 45 gpulab compare sgemm v9 v10 --size 4096
TAIL=45 trial v10_v11 45 gpulab compare sgemm v10 v11 --size 4096
TAIL=45 trial v11_v12 45 gpulab compare sgemm v11 v12 --size 4096
TAIL=12 trial ceilings_test 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m "gpu and exclusive" \
    tests/gpu/test_memory_experiments_gpu.py -k ceilings_measured
trials_end
