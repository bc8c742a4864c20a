#!/usr/bin/env bash
# call 62 (2026-12-06, third session): ten layer shapes of no list and of no earlier call, chosen
# before the run, brought to a fresh card (its folder: the H100's ceilings only; the H200's runs and
# tunes lent) on the tree of the fill-alike config factor: Llama-2-13B (QKV 15360x5120, O 5120x5120,
# gate+up 27648x5120, down 5120x13824), Phi-3-mini (QKV 9216x3072, gate+up 16384x3072, down 3072x8192)
# and BERT-large (QKV 3072x1024, FFN down 1024x4096), at M = 1 to 4096 tokens other than the llm
# suite's. For each GEMM: the variants within 15% of the model's pick, the pick (the best row),
# cuBLAS beside (rows to $OUT, kept out of results/).
# Ran on an H100 80GB HBM3 (2026-12-06, on 582f70b's model): the best row within 5% of the fastest
# gpulab row at 8 of 10 gemm_bf16 shapes (0.69-1.02x cuBLAS BF16; off: 1x9216x3072, t3 at 1.26x ks's
# time, and 4096x3072x1024, t4's stream-K at 1.23x its SCHEDULE=0 in clusters of two) and 10 of 10
# sgemm ones (0.95-2.09x cuBLAS FP32) (probes/alone-h100/call62/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call62.sh
set -u
source scripts/device_step.sh
call_begin "call62" 330
fresh_card "call62" notebook/probes/alone-h100/ceilings.csv
SHAPES=1x15360x5120,8x5120x13824,32x27648x5120,256x5120x5120,2048x15360x5120
SHAPES=$SHAPES,1x9216x3072,64x16384x3072,512x3072x8192,4096x3072x1024,2048x1024x4096
for e in gemm_bf16 sgemm; do
    TAIL=4 trial "fresh_$e" 130 gpulab bench $e --contenders 1.15 --no-sanitize --out "$OUT/fresh-$e.csv" --shape $SHAPES
done
rm -rf results/*/reports
call_end "call62"
exit 0
