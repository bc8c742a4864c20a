#!/usr/bin/env bash
# call 102 (2026-12-07, fifteenth session): on an H200 only (another card stops at once), in the
# session's last device time: each llm suite's best row, cuBLAS and the model alone's pick (--alone),
# then sx tuned in its decode tiles (16 x 256) at 16x5120x5120, a 16-row shape of no list: the model
# reads sx's efficiency at 16 rows from its 64 x 64 tiles only, which run 2.2-3.3x slower there.
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call102.sh
set -u
source scripts/device_step.sh
call_begin "call102" 330
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 130 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 130 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
    TAIL=20 trial sx_decode 60 gpulab tune sgemm sx --shape 16x5120x5120 -p BM=16 -p BN=256 -p WM=16 --budget 40s
else
    echo "not an H200: nothing to do here" >>"$dir/summary.txt"
fi
rm -rf results/*/reports
call_end "call102"
