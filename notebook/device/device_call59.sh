#!/usr/bin/env bash
# call 59 (2026-12-06, third session): a config's factor against its variant's fastest read only where
# it filled the SMs alike (Selector._fill: t3 and t4 in 256-wide tiles at 128 tokens, one round of 112
# tiles at N = 28672, had taken the 0.92 they ran at N = 6144 and 10240, 24-40 tiles on 132 SMs).
# On a card other than the H200, as a fresh card (its folder holds the H100's ceilings only, the
# H200's runs lent): the llm suite of gemm_bf16 with the contenders and the model-alone picks, in one
# run (rows to $OUT, kept out of results/), and the verdict read off them.
# Ran on an H100 80GB HBM3 (2026-12-06): the model alone within 5% of the fastest at 35 of 40 llm shapes
# of this run (before the change 32, 3 of its picks not timed here); over calls 48, 53 and 59's rows 34
# against 32 (notebook/probes/alone-h100/call59/verdicts.txt).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call59.sh
set -u
source scripts/device_step.sh
call_begin "call59" 300
fresh_card "call59" notebook/probes/alone-h100/ceilings.csv
TAIL=6 trial bench_llm_bf16 220 gpulab bench gemm_bf16 --suite llm --contenders 1.15 --alone --no-sanitize \
    --out "$OUT/gemm_bf16-llm.csv"
cp "$OUT/gemm_bf16-llm.csv" "$CARD_DIR/gemm_bf16-llm.csv"
TAIL=8 trial judge_bf16 40 gpulab best gemm_bf16 --suite llm --alone
rm -rf results/*/reports
call_end "call59"
exit 0
