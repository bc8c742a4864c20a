#!/usr/bin/env bash
# call 103 (2026-12-07, sixteenth session), the session's first: on an H200, each llm suite's best
# row, cuBLAS and the model alone's pick (--alone), then sx tuned in its decode tiles (16 x 256) at
# 16x5120x5120 (call 102's plan, never run: no H200 came). On any other card, the whole GPU suite on
# this tree (3694031's changes after 9cf00ad are CPU-only, but pytest -m gpu never ran on it).
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call103.sh
set -u
source scripts/device_step.sh
call_begin "call103" 560
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 130 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 130 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
    TAIL=20 trial sx_decode 60 gpulab tune sgemm sx --shape 16x5120x5120 -p BM=16 -p BN=256 -p WM=16 --budget 40s
    best_tests 200
else
    gpu_suite 430 70
fi
rm -rf results/*/reports
call_end "call103"
