#!/usr/bin/env bash
# The vendor library under Nsight Compute as `gpulab profile EXP cublas` and `gpulab compare EXP A cublas`
# take it: its recorded fixtures (scripts/ncu_capture_fixtures.py --library), the GPU tests of profiling,
# and the comparisons the README quotes (sgemm v13 against cuBLAS at 2048^3, 4096^3 and 8192^3, gemm_bf16 t4
# at 4096^3), joined to results/h200/profile.csv. Logs go to $OUT/libprof/.
# Usage: bash scripts/device_trial.sh libprof:420
set -u
source scripts/device_step.sh
trials_begin libprof 410
TAIL=12 trial fixtures 60 python3 scripts/ncu_capture_fixtures.py --library
TAIL=30 trial tests 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_profile_gpu.py
TAIL=60 trial profile512 40 gpulab profile sgemm cublas --size 512 --csv "$dir/scratch.csv"
TAIL=60 trial fp32_4096 60 gpulab compare sgemm v13:S=16 cublas --size 4096
TAIL=60 trial bf16_4096 40 gpulab compare gemm_bf16 t4 cublas --size 4096
TAIL=60 trial fp32_2048 40 gpulab compare sgemm v13:S=16 cublas --size 2048
TAIL=60 trial fp32_8192 80 gpulab compare sgemm v13:S=16 cublas --size 8192
trials_end
