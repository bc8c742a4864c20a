#!/usr/bin/env bash
# call 74 (written 2026-12-06, fifth session; not run: no H200 came): for an H200 only. sgemm's llm
# rows timed again with each shape's model-alone pick beside its best row (two of those picks,
# 8192x4096x4096 and 1024x10240x8192, new on 2026-12-06, were never timed on the H200: timed within
# 5% they bring the model alone to 37 of 40), then the verdict. gemm_bf16's part is
# device_call71.sh's H200 branch. On another card it does nothing: these rows count on the H200 only.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call74.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call74" 560
if grep -q H200 "$OUT/gpu.txt"; then
    alone_verdict sgemm 480
else
    echo "not an H200: nothing to do (the llm rows the judge reads are the H200's)"
fi
rm -rf results/*/reports
call_end "call74"
exit 0
