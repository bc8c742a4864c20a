#!/usr/bin/env bash
# call 99 (2026-12-07, fifteenth session): after Variant.canonical (t4's EDGE) and Variant.best_shapes
# (gv weighed at 16 rows or fewer).
#   On an H200: each llm suite's best row, cuBLAS and the model alone's pick timed again (--alone),
#          then the sgemm shapes of no list whose picks this session's changes moved.
#   Elsewhere, as a fresh card: those sgemm shapes alone (best row, cuBLAS): v1 became the pick at
#          129x67x33 and 257x131x77, untimed on any card.
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call99.sh
set -u
source scripts/device_step.sh
call_begin "call99" 540
MOVED=1x31x1000,3x2000x1000,3x2304x768,4x16384x2048,7x5120x3072,12x4800x1600,129x67x33,257x131x77,300x31x1000,300x31x2048
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 200 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 200 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
else
    fresh_card "call99" notebook/probes/alone-h100/ceilings.csv
fi
TAIL=30 trial moved 90 gpulab bench sgemm -v best,v12,cublas --shape $MOVED --no-sanitize --out "$OUT/moved.csv"
rm -rf results/*/reports
call_end "call99"
