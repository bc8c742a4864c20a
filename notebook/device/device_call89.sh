#!/usr/bin/env bash
# call 89 (2026-12-06, ninth session, its last; 454 s of device time left, too few for a start and the
# whole GPU suite, which call 87 ran on the same code but for a comment): the best row beside the
# vendor library at shapes of my own choosing that no suite, test or tune lists (an N of 31, an M of
# 1, 7 and 300, a K of 1000), then the best row's GPU tests on the final tree.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call89.sh
set -u
source scripts/device_step.sh
call_begin "call89" 230
OWN=1x31x1000,7x31x4096,300x31x1000,300x3000x1000,7x2500x1000
TAIL=12 trial own_bf16 40 gpulab bench gemm_bf16 -v best --shape $OWN --no-sanitize --out "$OUT/own-gemm_bf16.csv"
TAIL=12 trial own_sgemm 40 gpulab bench sgemm -v best --shape $OWN --no-sanitize --out "$OUT/own-sgemm.csv"
best_tests 150
rm -rf results/*/reports
call_end "call89"
exit 0
