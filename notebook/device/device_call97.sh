#!/usr/bin/env bash
# call 97 (2026-12-07, fifteenth session): since 46aca5b (sk's k-loop counted as waiting on its own
# loads every step: Variant.k_step_param).
#   On an H200: each llm suite's best row, cuBLAS and the model alone's pick timed again (--alone),
#          as call 96 would have (gemm_bf16's pick at 1024x6144x4096 untimed there, six recorded best
#          rows stale), then the best row's GPU tests.
#   Elsewhere: the best row's GPU tests alone (best_tests), the change being the best row's model.
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call97.sh
set -u
source scripts/device_step.sh
call_begin "call97" 560
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 200 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 200 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
fi
best_tests 170
rm -rf results/*/reports
call_end "call97"
