#!/usr/bin/env bash
# call 94 (2026-12-07, fourteenth session): what call 93's probe could not do on the card it got (an
# H100 80GB HBM3: the copy probe and the whole GPU suite ran there), in the session's last device time.
#   On an H200: each llm suite's best row, cuBLAS and the model alone's pick timed again in one run
#          (--alone): 5 of sgemm's recorded best rows and one of gemm_bf16's ran configs the model no
#          longer picks, and the model alone's pick at 1024x6144x4096 (t4 in 192-wide whole tiles)
#          was never timed there.
#   Elsewhere: the card as a fresh one, the H200's runs lent (fresh_card), gemm_bf16's llm suite with
#          the model alone's picks (--alone): three of them were untimed on a fresh H100 (d0 at
#          16x6144x4096 and 16x10240x8192, t4 at 1024x6144x4096).
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call94.sh
set -u
source scripts/device_step.sh
call_begin "call94" 330
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 160 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 170 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
else
    fresh_card "call94" notebook/probes/alone-h100/ceilings.csv
    TAIL=45 trial bf16_llm_fresh 240 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize --out "$OUT/gemm_bf16-llm-fresh.csv"
fi
rm -rf results/*/reports
call_end "call94"
