#!/usr/bin/env bash
# device_pdl2.sh's GPU tests again, given the time they need and with each failure's reason: that
# call's limit cut them after 9 failures that pytest had not yet named. Logs in $OUT/pdl3/.
# Usage: bash scripts/device_trial.sh pdl3:300
set -u
source scripts/device_step.sh
trials_begin pdl3 295
TAIL=60 trial tests 290 python3 -m pytest -m "gpu and not exclusive" -n 16 -rfE --tb=short -p no:cacheprovider \
    tests/gpu/test_wgmma_gpu.py tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_profile_gpu.py \
    tests/gpu/test_faults_gpu.py tests/gpu/test_timing_gpu.py tests/gpu/test_own_kernels_gpu.py
trials_end
