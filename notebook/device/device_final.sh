#!/usr/bin/env bash
# The session's last device call: every GPU test on the final tree, then the benches the README
# quotes (into results/<gpu>/, cuBLAS beside each shape). Logs under $OUT/final/.
# Usage: bash scripts/device_trial.sh final:560
source scripts/device_step.sh
dir=$OUT/final; mkdir -p "$dir"
TAIL=12 step pytest_gpu 230 python3 -m pytest -m "gpu and not exclusive" -q -n 8 -p no:cacheprovider --maxfail=30
TAIL=4 step pytest_exclusive 60 python3 -m pytest -m "gpu and exclusive" -q -p no:xdist -p no:cacheprovider
TAIL=20 step bench_bf16 110 gpulab bench gemm_bf16 --size 2048,4096,8192
TAIL=12 step bench_bf16_ragged 45 gpulab bench gemm_bf16 --variant t1,t3,t4 --shape 4097x4097x4097 \
    --shape 4000x4000x4000 --shape 1000x3000x777 --shape 1000x3000x776
TAIL=20 step bench_sgemm 60 gpulab bench sgemm --variant v9,v10,v11,best --size 2048,4096,8192
TAIL=20 step bench_skinny 50 gpulab bench sgemm --variant v9,sk,sx,gv,gt,best --shape 4096x64x4096 \
    --shape 64x4096x4096 --shape 1x8192x8192 --shape 8192x1x8192 --shape 512x512x512
