#!/usr/bin/env bash
# Issue 14, deliverable 4: tune the three gemm_bf16 rungs never tuned on the card (t3, t1, t0) at
# 2048^3 and 4096^3, each space stated up front by `gpulab tune` (t3: 32 feasible configs; t0: 53;
# t1: 376, cut here to BK = 64, MINB = 1, GROUP_M = 8, STAGES = 3-4: 52), then the gemm_bf16 GPU tests, which run
# every tuned config (tests/gpu/configs.py) random and exact. Logs go to $OUT/tune14/.
# Usage: bash scripts/device_trial.sh tune14:560
set -u
source scripts/device_step.sh
trials_begin tune14 560
trial tune_t3 130 gpulab tune gemm_bf16 t3 --size 2048,4096
trial tune_t1 200 gpulab tune gemm_bf16 t1 -p BK=64 -p MINB=1 -p GROUP_M=8 -p STAGES=3,4 --size 2048,4096
trial tune_t0 110 gpulab tune gemm_bf16 t0 --size 2048,4096
trial tests_bf16 100 python3 -m pytest -m gpu -q -n 8 -p no:cacheprovider tests/gpu/test_gemm_bf16_gpu.py
trials_end
