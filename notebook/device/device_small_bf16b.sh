#!/usr/bin/env bash
# device_small_bf16.sh again, with t2 also tuned at 4096^3 (its declared 128x256 tile among the
# candidates): a tune recorded at 512^3 and 1024^3 only would become t2's default at every shape
# (the nearest tuned shape), 64x64 tiles at 4096^3 too. Then the bench rows at 512^3 and 1024^3
# (t2, t4, best, cuBLAS) and the GPU tests of gemm_bf16 over every tuned config.
# Logs go to $OUT/small_bf16b/.
# Usage: bash scripts/device_trial.sh small_bf16b:300
set -u
source scripts/device_step.sh
trials_begin small_bf16b 290
trial tune 130 gpulab tune gemm_bf16 t2 -p BM=64,128 -p BN=64,128,256 -p STAGES=4,6 -p GROUP_M=8 --size 512,1024,4096
trial bench 50 gpulab bench gemm_bf16 --variant t2,t4,best --size 512,1024
trial tests_bf16 90 python3 -m pytest -m gpu -q -n 8 -p no:cacheprovider tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_wgmma_gpu.py
trials_end
