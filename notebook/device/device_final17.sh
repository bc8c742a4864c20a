#!/usr/bin/env bash
# A library call's counts summed over its kernels (profiling, quantities.measure_call): the profiling GPU
# tests, and cuBLAS FP32 at 512^3 (a split-K GEMM and its reduction on the H200) profiled as a user
# would. Logs in $OUT/final17/. Usage: bash scripts/device_trial.sh final17:240
set -u
source scripts/device_step.sh
trials_begin final17 230
TAIL=30 trial profile 40 gpulab profile sgemm cublas --size 512 --csv "$dir/profile.csv"
TAIL=8 trial tests 170 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_profile_gpu.py
trials_end
