#!/usr/bin/env bash
# call 49 (2026-12-06): on an H200 only (another card stops at once): the llm rows of gemm_bf16 timed
# again with each shape's model-alone pick beside its best row in one run (bench --alone), the
# verdict, kc's 96-wide fidelity rows, then shapes of no list against cuBLAS (rows kept out of
# results/: $OUT/offlist-*.csv).
# Stopped at once on an H100 (2026-12-06), as its guard says: no H200 came.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call49.sh
set -u
source scripts/device_step.sh
call_begin "call49" 560
if ! grep -q H200 "$OUT/gpu.txt"; then
    call_end "call49"; exit 0
fi
TAIL=20 trial bench_alone_bf16 230 gpulab bench gemm_bf16 --suite llm -v best --alone --no-sanitize
TAIL=6 trial judge_bf16 40 gpulab best gemm_bf16 --suite llm --alone
TAIL=14 trial offlist_bf16 60 gpulab bench gemm_bf16 -v best --alone --no-sanitize --out "$OUT/offlist-bf16.csv" \
    --shape 1x11008x4096,7x5120x3072,300x2048x1000,2000x31x1000
TAIL=12 trial offlist_sgemm 50 gpulab bench sgemm -v best --alone --no-sanitize --out "$OUT/offlist-sgemm.csv" \
    --shape 7x5120x3072,300x2048x1000,2000x31x1000
TAIL=12 trial fidelity_kc_bn96 120 gpulab fidelity gemm_bf16 -v kc -p BN=96
rm -rf results/*/reports
call_end "call49"
exit 0
