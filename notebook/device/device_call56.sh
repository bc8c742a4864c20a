#!/usr/bin/env bash
# call 56 (2026-12-06): a config the lending card timed at the shape counts as measured there (its
# own efficiency, said to be the other card's): on a card other than the H200, the best row at every
# llm shape of gemm_bf16 and at 2049x31x4093 for sgemm, cuBLAS beside (rows to $OUT/best-*.csv, kept
# out of results/), to set beside call 53-55's rows: 14 picks moved to configs that card had not timed.
# Ran on an H100 80GB HBM3 (2026-12-06): with calls 53-55's rows, the best row within 5% of the
# fastest at 52 of 55 gemm_bf16 shapes (45 before the change) and 53 of 57 sgemm ones (52); sx at
# 2049x31x4093 0.92x cuBLAS FP32 (v12 0.44x before). probes/alone-h100/call56/summary.txt.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call56.sh
set -u
source scripts/device_step.sh
call_begin "call56" 280
if grep -q H200 "$OUT/gpu.txt"; then
    echo "an H200: nothing is lent there; this call is for another card"; call_end "call56"; exit 0
fi
mkdir -p results/h100-80gb-hbm3 && cp notebook/probes/alone-h100/ceilings.csv results/h100-80gb-hbm3/
TAIL=4 trial best_llm_bf16 160 gpulab bench gemm_bf16 --suite llm -v best --no-sanitize --out "$OUT/best-gemm_bf16.csv"
TAIL=4 trial best_sgemm 60 gpulab bench sgemm -v best --no-sanitize --out "$OUT/best-sgemm.csv" --shape 2049x31x4093
rm -rf results/*/reports
call_end "call56"
exit 0
