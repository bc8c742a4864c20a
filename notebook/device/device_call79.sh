#!/usr/bin/env bash
# call 79 (2026-12-06, sixth session, on e11e8bd, whose src/ is a769af7's): the best row beside cuBLAS at
# shapes of no suite, test or tune (an M of 1, 7 and 300; an N of 31; a K of 1000), as a user brings
# them, on a fresh card (its folder: the H100's ceilings only, the H200's runs lent); rows to $OUT.
# Not run: too little device time was left to start a machine (282 s).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call79.sh
set -u
source scripts/device_step.sh
call_begin "call79" 150
grep -q H200 "$OUT/gpu.txt" || fresh_card "call79" notebook/probes/alone-h100/ceilings.csv
SHAPES=7x3000x1000,300x1536x1000,1x4096x1000,300x31x2048
TAIL=12 trial bf16 70 gpulab bench gemm_bf16 -v best --shape $SHAPES --no-sanitize --out "$OUT/offlist-gemm_bf16.csv"
TAIL=12 trial sgemm 60 gpulab bench sgemm -v best --shape $SHAPES --no-sanitize --out "$OUT/offlist-sgemm.csv"
rm -rf results/*/reports
call_end "call79"
exit 0
