#!/usr/bin/env bash
# call 91 (2026-12-06, tenth session, on 8d592c3: a variant never timed on a kind borrows the weakest
# efficiency with its fixed cost): gemm_bf16's best row at 3x2304x768, where call 90's pick (t1) ran
# 1.82x d0 and the model now picks d0; and sgemm at the four shapes of no list where call 90's best
# row ran under 0.9x cuBLAS FP32 on an H100 (300x3000x1000 0.67x, 300x31x1000 0.85x, 48x11008x4096
# 0.86x, 96x6400x1600 0.89x): every tiled rung from v9 beside the best row, to learn whether a faster
# gpulab row was there to pick. On a card other than the H200 the model lends the H200's runs.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call91.sh
set -u
source scripts/device_step.sh
call_begin "call91" 200
grep -q H200 "$OUT/gpu.txt" || fresh_card "call91" notebook/probes/alone-h100/ceilings.csv
TAIL=8 trial bf16 60 gpulab bench gemm_bf16 -v best,d0 --shape 3x2304x768 --no-sanitize --out "$OUT/moved-gemm_bf16.csv"
TAIL=30 trial fp32 150 gpulab bench sgemm -v best,v9,v10,v11,v12,v13,v14,sx,gv,gt \
    --shape 300x3000x1000,300x31x1000,48x11008x4096,96x6400x1600 --no-sanitize --out "$OUT/off-sgemm.csv"
rm -rf results/*/reports
call_end "call91"
