#!/usr/bin/env bash
# call 100 (2026-12-07, fifteenth session): the llm suites on an H200 only (best row, cuBLAS and the
# model alone's pick, --alone), after Variant.canonical and Variant.best_shapes; on another card it
# stops at once (calls 96-99 got H100s and did that card's work).
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call100.sh
set -u
source scripts/device_step.sh
call_begin "call100" 540
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 240 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 240 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
else
    echo "not an H200: nothing to do here" >>"$dir/summary.txt"
fi
rm -rf results/*/reports
call_end "call100"
