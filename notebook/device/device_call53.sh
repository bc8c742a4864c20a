#!/usr/bin/env bash
# call 53 (2026-12-06): a card with no runs of its own borrows another card's tuned configs as its
# candidates (calibration.lent_runs' lent_table; before, only its runs, and the candidates were the
# declared defaults). On an H100 whose folder (results/h100-80gb-hbm3/, carried, not committed) holds
# its ceilings and calls 46-48's llm rows: both llm suites timed again (the variants within 15% of
# the model's pick and the model-alone picks, now among the H200's tuned configs), the verdicts,
# then shapes of no list. Needs no H200: the question is a card that has measured nothing.
# Ran on an H100 80GB HBM3 (2026-12-06): the model alone within 5% at 35 of 40 gemm_bf16 llm shapes
# (31 before) and 37 of 40 sgemm ones (35), every pick timed; 7x5120x3072's best row 0.99x cuBLAS
# BF16 (0.52 before), sgemm's there 0.92x (2.04 before). notebook/probes/alone-h100/call53/.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call53.sh
set -u
source scripts/device_step.sh
call_begin "call53" 575
if grep -q H200 "$OUT/gpu.txt"; then
    echo "an H200: its own runs are in results/h200/, nothing is lent there; this call is for another card"
    call_end "call53"; exit 0
fi
for e in gemm_bf16 sgemm; do
    TAIL=6 trial "bench_llm_$e" 175 gpulab bench $e --suite llm --contenders 1.15 --alone --no-sanitize
    TAIL=8 trial "judge_$e" 40 gpulab best $e --suite llm --alone
done
TAIL=14 trial offlist_bf16 60 gpulab bench gemm_bf16 -v best --alone --no-sanitize --out "$OUT/offlist-bf16.csv" \
    --shape 1x11008x4096,7x5120x3072,300x2048x1000,2000x31x1000
TAIL=12 trial offlist_sgemm 50 gpulab bench sgemm -v best --alone --no-sanitize --out "$OUT/offlist-sgemm.csv" \
    --shape 7x5120x3072,300x2048x1000,2000x31x1000
rm -rf results/*/reports
call_end "call53"
exit 0
