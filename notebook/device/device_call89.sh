#!/usr/bin/env bash
# call 89 (2026-12-06, ninth session, its last): the whole GPU suite on the final tree (call 87 ran it
# on the same code but for a comment), then the best row beside the vendor library at shapes of my
# own choosing that no suite, test or tune lists (an N of 31, an M of 1, 7 and 300, a K of 1000).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call89.sh
set -u
source scripts/device_step.sh
call_begin "call89" 420
gpu_suite 350 30
OWN=1x31x1000,7x31x4096,300x31x1000,300x3000x1000,7x2500x1000
TAIL=12 trial own_bf16 40 gpulab bench gemm_bf16 -v best --shape $OWN --no-sanitize --out "$OUT/own-gemm_bf16.csv"
TAIL=12 trial own_sgemm 40 gpulab bench sgemm -v best --shape $OWN --no-sanitize --out "$OUT/own-sgemm.csv"
rm -rf results/*/reports
call_end "call89"
exit 0
