#!/usr/bin/env bash
# call 95 (2026-12-07, fourteenth session): the session's last device minutes.
#   On an H200: each llm suite's best row, cuBLAS and the model alone's pick timed again in one run
#          (--alone; about a minute each on an H100 in call 94), then the copy probe
#          (notebook/probes/copy_sms/, call 93 ran it on an H100 only).
#   Elsewhere: the card as a fresh one (fresh_card), the model's picks at the 13 holdout shapes
#          (recorded only in notebook/) where a fresh H100's pick had never been timed.
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call95.sh
set -u
source scripts/device_step.sh
call_begin "call95" 250
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 110 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 110 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
    TAIL=10 trial copy_sms 30 python3 notebook/probes/copy_sms/copy_sms.py "$OUT/copy-sms.csv"
else
    fresh_card "call95" notebook/probes/alone-h100/ceilings.csv
    TAIL=20 trial bf16_holdout 150 gpulab bench gemm_bf16 -v best,cublas --no-sanitize --out "$OUT/holdout-gemm_bf16.csv" \
        --shape 12288x512x12288,16x1024x4096,1x4097x4096,2048x4096x11008,32x2048x1000,32x27648x5120,4096x3072x768,4x37888x3584,7x3000x1000,8x14336x4096
    TAIL=10 trial sgemm_holdout 80 gpulab bench sgemm -v best,cublas --no-sanitize --out "$OUT/holdout-sgemm.csv" \
        --shape 4096x32x4096,7x3000x1000,7x5120x3072
fi
rm -rf results/*/reports
call_end "call95"
