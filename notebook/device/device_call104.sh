#!/usr/bin/env bash
# call 104 (2026-12-07, sixteenth session): call 103's H200 half (each llm suite's best row, cuBLAS
# and the model alone's pick with --alone; sx tuned in its decode tiles at 16x5120x5120), and ks tuned with its token tile at M (TN = 32 at 32x5120x5120, TN = 64 at
# 64x5120x5120): the H200 never timed ks in TN = 32 and TN = 64 only at 128 rows, so between 17 and
# 127 tokens the model reads ks from 16 or 128 rows and picks kc, which ran 1.16-1.42x ks's time at
# 32-64 tokens on a fresh H100 (holdout). Any other card stops before the tree is installed: the
# whole GPU suite already passed on this code on an H100 (call 103).
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
TAIL=12 trial ks_tn32 50 gpulab tune gemm_bf16 ks --shape 32x5120x5120 -p TN=32 --budget 30s
TAIL=12 trial ks_tn64 50 gpulab tune gemm_bf16 ks --shape 64x5120x5120 -p TN=64 --budget 30s
rm -rf results/*/reports
call_end "call104"
