#!/usr/bin/env bash
# call 41 (2026-12-06): call 40's H200 part, which an H100 could not run (call 40 ran there, its GPU
# test passing with a longer limit: 2 passed, H100, 2026-12-06), and kc's 96-wide tiles' own
# fidelity rows (its access model against Nsight Compute at the default and a ragged shape), which
# 6c7b9c5 left undone. On an H200 only: the records are the H200's.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call41.sh
set -u
source scripts/device_step.sh
call_begin "call41" 420
if ! grep -q H200 "$OUT/gpu.txt"; then
    call_end "call41"; exit 0
fi
TAIL=20 trial bench_alone_bf16 220 gpulab bench gemm_bf16 --suite llm -v best --alone --no-sanitize
TAIL=6 trial judge_bf16 60 gpulab best gemm_bf16 --suite llm --alone
TAIL=12 trial fidelity_kc_bn96 130 gpulab fidelity gemm_bf16 -v kc -p BN=96
rm -rf results/*/reports
call_end "call41"
exit 0
