#!/usr/bin/env bash
# A short measuring call: the BF16 ceilings, the tensor-core ladder with cuBLAS at three sizes and
# ragged shapes, and the FP32 skinny classes with cuBLAS beside. CSVs and logs under $OUT/quick/.
# Usage: bash scripts/device_trial.sh quick:420   (or source scripts/device_setup.sh first)
source scripts/device_step.sh
dir=$OUT/quick; mkdir -p "$dir"
TAIL=20 step ceilings 90 gpulab ceilings
TAIL=30 step bf16 150 gpulab bench gemm_bf16 --size 2048,4096,8192 --out "$dir/bf16.csv"
TAIL=20 step bf16_ragged 70 gpulab bench gemm_bf16 --variant t1,t2,t3 --shape 4097x4097x4097 \
    --shape 4000x4000x4000 --shape 1000x3000x777 --out "$dir/bf16_ragged.csv"
TAIL=20 step skinny 90 gpulab bench sgemm --variant v9,sk,best --shape 4096x64x4096 --shape 64x4096x4096 \
    --shape 1x8192x8192 --shape 512x512x512 --out "$dir/skinny.csv"
cp results/h200/ceilings.csv "$dir/"
