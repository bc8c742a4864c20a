#!/usr/bin/env bash
# call 108 (2026-12-07, seventeenth session, the last 284 s of device time): on the tree whose model
# compares d0's configs only where their warps' chains of steps stood alike (5dda4ed), the best
# row's GPU tests, then the best row and cuBLAS at decode and small shapes no suite, test or tune
# names (M of 1, 7 and 300, N of 31, K of 1000), to $OUT/unlisted-gemm_bf16.csv (not results/,
# whose rows the model reads).
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call108.sh
set -u
source scripts/device_step.sh
call_begin "call108" "${BUDGET:-200}"
best_tests 150
TAIL=14 trial unlisted 40 gpulab bench gemm_bf16 -v best,cublas --no-sanitize --out "$OUT/unlisted-gemm_bf16.csv" \
    --shape 1x7000x3000,7x5000x1000,300x3000x1000,2000x31x1000
rm -rf results/*/reports
call_end "call108"
