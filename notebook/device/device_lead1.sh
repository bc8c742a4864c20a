#!/usr/bin/env bash
# The lead's first call of 2026-12-01 (session 10): tunes that the best row reads, on the shape
# classes issue 15 names (sx on the skinny and few-tile shapes, v11 on the large squares and the
# ragged 4097^3), the tensor-core ladder's fidelity rows, and `gpulab compare` between its
# consecutive rungs at 4096^3. Writes results/<gpu>/ (tuned.json, tune-*.csv, fidelity.csv,
# profile.csv); logs in $OUT/lead1/.
# Usage: bash scripts/device_trial.sh lead1:560
source scripts/device_step.sh
dir=$OUT/lead1; mkdir -p "$dir"
TAIL=12 step tune_sx 120 gpulab tune sgemm sx \
    --shape 4096x64x4096 --shape 64x4096x4096 --shape 512x512x512 --shape 1024x1024x1024 \
    -p BM=64 -p BN=64,128 -p BK=8,16 -p WM=32 -p WN=64 -p WNITER=2 -p STAGES=2,3 -p MINB=2 -p GROUP_M=8 -p S=2,4,8
TAIL=12 step tune_v11 170 gpulab tune sgemm v11 \
    --shape 2048x2048x2048 --shape 4096x4096x4096 --shape 4097x4097x4097 --shape 8192x8192x8192 \
    -p BM=64,128 -p BN=128,256 -p BK=8,16 -p WM=32,64 -p WN=64 -p WNITER=2 -p STAGES=2 -p MINB=1 -p GROUP_M=8
TAIL=30 step fidelity_bf16 90 gpulab fidelity gemm_bf16 --variant t0,t1,t2,t3
for pair in "t0 t1" "t1 t2" "t2 t3" "t3 t4"; do
    set -- $pair
    TAIL=40 step "compare_$1_$2" 45 gpulab compare gemm_bf16 "$1" "$2" --size 4096
done
