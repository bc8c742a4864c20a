#!/usr/bin/env bash
# call 105 (2026-12-07, sixteenth session; the H200 was asked for and an H100 came): the best row's
# pick on a fresh card (its folder: the H100's ceilings only, the H200's runs lent) at the 14 holdout
# shapes where that pick had never been timed on an H100 (12 of gemm_bf16, 2 of sgemm; the holdout:
# shapes recorded under notebook/ and never read by the model), cuBLAS beside, rows to $OUT. With
# them the fresh H100's holdout figure has every pick timed.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call105.sh
set -u
source scripts/device_step.sh
call_begin "call105" 330
fresh_card "call105" notebook/probes/alone-h100/ceilings.csv
BF=12288x512x12288,1536x1600x6400,16x1024x4096,1x4097x4096,2048x2048x5632,2048x4096x11008,32x2048x1000
BF2=32x27648x5120,4096x3072x768,4x37888x3584,7x3000x1000,8x14336x4096
SG=4096x32x4096,7x3000x1000
TAIL=20 trial bf16_a 120 gpulab bench gemm_bf16 -v best,cublas --shape $BF --no-sanitize --out "$OUT/holdout-gemm_bf16-a.csv"
TAIL=20 trial bf16_b 100 gpulab bench gemm_bf16 -v best,cublas --shape $BF2 --no-sanitize --out "$OUT/holdout-gemm_bf16-b.csv"
TAIL=8 trial sgemm 60 gpulab bench sgemm -v best,cublas --shape $SG --no-sanitize --out "$OUT/holdout-sgemm.csv"
rm -rf results/*/reports
call_end "call105"
