#!/usr/bin/env bash
# call 54 (2026-12-06): the whole GPU suite on this tree (a fresh card now tries the lending card's
# tuned configs), then, on a card other than the H200 (which has runs of its own), twelve layer
# shapes of no list for each GEMM as a new user of that card brings them: the variants within 15% of
# the model's pick, the pick and the model-alone pick, cuBLAS beside (rows kept out of results/:
# $OUT/unlisted-*.csv). The card's folder gets the H100 ceilings of calls 46-48 after the suite, so
# the suite runs as on a clean clone and the bench does not measure them again.
# Ran on an H100 80GB HBM3 (2026-12-06) on ece9163: the GPU suite "3325 passed, 1 skipped in
# 361.72s", exclusive "2 passed, 1 skipped" (probes/gpu_suite/call54-h100/); the best row within 5% of
# the fastest gpulab row at 10 of 12 unlisted gemm_bf16 shapes and 11 of 12 sgemm ones, 0.59-1.04x
# cuBLAS BF16 and 0.57-2.21x cuBLAS FP32 (probes/alone-h100/call54/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call54.sh
set -u
source scripts/device_step.sh
call_begin "call54" 585
gpu_suite 420 60
if grep -q H200 "$OUT/gpu.txt"; then
    call_end "call54"; exit 0
fi
mkdir -p results/h100-80gb-hbm3 && cp notebook/probes/alone-h100/ceilings.csv results/h100-80gb-hbm3/
SHAPES=1x11008x4096,4x4608x3584,8x14336x4096,32x4096x11008,64x18944x3584,256x3072x768,512x11008x4096
SHAPES=$SHAPES,2048x4096x11008,3x2304x768,96x14336x4096,4096x3072x768,1x3584x18944
for e in gemm_bf16 sgemm; do
    TAIL=4 trial "unlisted_$e" 85 gpulab bench $e --contenders 1.15 --alone --no-sanitize \
        --out "$OUT/unlisted-$e.csv" --shape $SHAPES
done
rm -rf results/*/reports
call_end "call54"
exit 0
