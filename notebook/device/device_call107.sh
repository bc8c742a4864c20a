#!/usr/bin/env bash
# call 107 (2026-12-07, seventeenth session): on an H200, call 104's work on the tree whose model
# reads d0's configs beside each other only where their warps' chains of steps stood alike
# (Variant.warp_k_steps; the model alone at 36 of 40 gemm_bf16 llm shapes on the H200's recorded
# rows): each llm suite's best row, cuBLAS and the model alone's pick with --alone; sx tuned in its
# decode tiles at 16x5120x5120; ks with its token tile at 32 and 64 rows. On any other card, the
# best row's GPU tests on that tree.
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call107.sh
set -u
source scripts/device_step.sh
call_begin "call107" "${BUDGET:-560}"
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 130 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 130 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
    TAIL=20 trial sx_decode 60 gpulab tune sgemm sx --shape 16x5120x5120 -p BM=16 -p BN=256 -p WM=16 --budget 40s
    TAIL=12 trial ks_tn32 50 gpulab tune gemm_bf16 ks --shape 32x5120x5120 -p TN=32 --budget 30s
    TAIL=12 trial ks_tn64 50 gpulab tune gemm_bf16 ks --shape 64x5120x5120 -p TN=64 --budget 30s
else
    best_tests 220
fi
rm -rf results/*/reports
call_end "call107"
