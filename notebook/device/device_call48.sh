#!/usr/bin/env bash
# call 48 (2026-12-06): the model alone on a card with no runs of its own, once it reads the lent
# runs (Unseen builds on best's evidence): on an H100, the llm suites of gemm_bf16 and sgemm timed
# again (the variants within 15% of the model's pick, and the new model-alone picks), on top of calls
# 46 and 47's rows (carried in results/h100-80gb-hbm3/, its ceilings measured there), then the
# verdicts, then shapes of no list. On an H200, call 45's H200 part.
# Ran on an H100 (2026-12-06), after Unseen built on best's evidence (the lent runs): gemm_bf16 31 of
# 40, sgemm 35 of 40 (was 23 and 18); the shapes of no list in notebook/probes/alone-h100/offlist-*.csv.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call48.sh
set -u
source scripts/device_step.sh
call_begin "call48" 570
OFF_BF16=1x11008x4096,7x5120x3072,300x2048x1000,2000x31x1000
OFF_SGEMM=7x5120x3072,300x2048x1000,2000x31x1000
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=20 trial bench_alone_bf16 220 gpulab bench gemm_bf16 --suite llm -v best --alone --no-sanitize
    TAIL=6 trial judge_bf16 40 gpulab best gemm_bf16 --suite llm --alone
    TAIL=12 trial fidelity_kc_bn96 120 gpulab fidelity gemm_bf16 -v kc -p BN=96
else
    for e in gemm_bf16 sgemm; do
        TAIL=6 trial "bench_llm_$e" 170 gpulab bench $e --suite llm --contenders 1.15 --alone --no-sanitize
        TAIL=8 trial "judge_$e" 40 gpulab best $e --suite llm --alone
    done
fi
TAIL=14 trial offlist_bf16 60 gpulab bench gemm_bf16 -v best --alone --no-sanitize --out "$OUT/offlist-bf16.csv" \
    --shape $OFF_BF16
TAIL=12 trial offlist_sgemm 50 gpulab bench sgemm -v best --alone --no-sanitize --out "$OUT/offlist-sgemm.csv" \
    --shape $OFF_SGEMM
rm -rf results/*/reports
call_end "call48"
exit 0
