#!/usr/bin/env bash
# gemm_bf16 at small shapes: the best row took t4 tuned at 1000x3000x776 (128x256 tiles in clusters of
# 2) for 1024^3, 32 blocks for 132 SMs (16.6 us under ncu where cuBLAS ran 7.4, device_probecheck).
# Tune t2 (one warpgroup per 64 rows, any BM x BN of 64-256) at 512^3 and 1024^3, bench t2, t4 and the
# best row there with cuBLAS beside, then the GPU tests of gemm_bf16 (now over every tuned config) and
# of sgemm (whose tuned-config list moved to tests/gpu/configs.py). Logs go to $OUT/small_bf16/.
# Usage: bash scripts/device_trial.sh small_bf16:330
set -u
source scripts/device_step.sh
trials_begin small_bf16 320
trial tune 80 gpulab tune gemm_bf16 t2 -p BM=64,128 -p BN=64,128 -p STAGES=4,6 -p GROUP_M=8 --size 512,1024
trial bench 50 gpulab bench gemm_bf16 --variant t2,t4,best --size 512,1024
trial tests_bf16 90 python3 -m pytest -m gpu -q -n 8 -p no:cacheprovider tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_wgmma_gpu.py
trial tests_sgemm 100 python3 -m pytest -m gpu -q -n 16 -p no:cacheprovider tests/gpu/test_sgemm_gpu.py
trials_end
