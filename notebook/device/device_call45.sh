#!/usr/bin/env bash
# call 45 (2026-12-06): on an H200, the llm rows timed again with the model-alone pick beside them
# (bench --alone; gpulab best --alone judges them), kc's 96-wide fidelity rows, and shapes of no list
# (rows kept out of results/: $OUT/offlist-*.csv); on any other card, the whole GPU suite on the
# tree at 2aeb996 (no .cu or .cuh changed since 6c7b9c5).
# Ran on an H100 (2026-12-06; no H200 came): the whole GPU suite at 2aeb996, "3325 passed, 1
# skipped in 352.58s"; exclusive "2 passed, 1 skipped".
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call45.sh
set -u
source scripts/device_step.sh
call_begin "call45" 570
if ! grep -q H200 "$OUT/gpu.txt"; then
    gpu_suite 490 70
    rm -rf results/*/reports
    call_end "call45"; exit 0
fi
TAIL=20 trial bench_alone_bf16 220 gpulab bench gemm_bf16 --suite llm -v best --alone --no-sanitize
TAIL=6 trial judge_bf16 40 gpulab best gemm_bf16 --suite llm --alone
TAIL=12 trial fidelity_kc_bn96 120 gpulab fidelity gemm_bf16 -v kc -p BN=96
TAIL=14 trial offlist_bf16 90 gpulab bench gemm_bf16 -v best --no-sanitize --out "$OUT/offlist-bf16.csv" \
    --shape 1x11008x4096,7x5120x3072,300x2048x1000,2000x31x1000
TAIL=12 trial offlist_sgemm 60 gpulab bench sgemm -v best --no-sanitize --out "$OUT/offlist-sgemm.csv" \
    --shape 7x5120x3072,300x2048x1000,2000x31x1000
rm -rf results/*/reports
call_end "call45"
exit 0
