#!/usr/bin/env bash
# call 104 (2026-12-07, sixteenth session): call 103's H200 half (each llm suite's best row, cuBLAS
# and the model alone's pick with --alone; sx tuned in its decode tiles at 16x5120x5120; the best
# row's GPU tests). Any other card stops before the tree is installed: the whole GPU suite already
# passed on this code on an H100 (call 103).
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call104.sh
set -u
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "not an H200: nothing to do here"; exit 0
fi
source scripts/device_step.sh
call_begin "call104" "${BUDGET:-560}"
TAIL=30 trial bf16_llm 130 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
TAIL=30 trial sgemm_llm 130 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
TAIL=20 trial sx_decode 60 gpulab tune sgemm sx --shape 16x5120x5120 -p BM=16 -p BN=256 -p WM=16 --budget 40s
best_tests 200
rm -rf results/*/reports
call_end "call104"
