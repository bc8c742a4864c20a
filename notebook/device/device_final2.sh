#!/usr/bin/env bash
# The last call of 2026-12-01 (session 10): v12 tuned where it pays (1024^3: few tiles), the benches
# the README quotes (FP32 squares and ragged shapes with v9/v11/v12 and the best row, the skinny
# shapes after sx's tune, t4 at every gemm_bf16 target shape), then the GPU tests on this tree.
# Results land in results/<gpu>/; logs in $OUT/final2/. Usage: bash scripts/device_trial.sh final2:560
source scripts/device_step.sh
dir=$OUT/final2; mkdir -p "$dir"
TAIL=14 step tune_v12 70 gpulab tune sgemm v12 --shape 1024x1024x1024 \
    -p BM=64 -p BN=64,128 -p BK=8,16 -p WM=32 -p WN=64 -p WNITER=2 -p STAGES=2 -p MINB=2 -p GROUP_M=8 -p SK_ROUNDS=1,99
SQUARES="--shape 1024x1024x1024 --shape 2048x2048x2048 --shape 4000x4000x4000 --shape 4096x4096x4096 --shape 4097x4097x4097 --shape 8192x8192x8192 --shape 1000x3000x777"
TAIL=14 step bench_sgemm 110 gpulab bench sgemm --variant v9,v11,v12 $SQUARES
TAIL=14 step bench_skinny 50 gpulab bench sgemm --variant sx \
    --shape 4096x64x4096 --shape 64x4096x4096 --shape 512x512x512 --shape 1x8192x8192 --shape 8192x1x8192
TAIL=14 step bench_bf16 70 gpulab bench gemm_bf16 --variant t4 --shape 2048x2048x2048 --shape 4096x4096x4096 \
    --shape 8192x8192x8192 --shape 4000x4000x4000 --shape 4097x4097x4097 --shape 1000x3000x777 --shape 1000x3000x776
TAIL=12 step pytest_gpu 200 python3 -m pytest -m "gpu and not exclusive" -q -n 12 -p no:cacheprovider --maxfail=30
TAIL=4 step pytest_exclusive 45 python3 -m pytest -m "gpu and exclusive" -q -p no:xdist -p no:cacheprovider
