#!/usr/bin/env bash
# call 46 (2026-12-06): the model on a card it was not fitted to: on the H100 that call 45 held, the
# llm suite of gemm_bf16 with the variants the model puts within 15% of its pick (no tunes on this
# card: the model plans with the H200's lent runs), the model-alone pick beside them, then
# gpulab best --alone's verdict over what this card timed.
# Ran on the H100 of call 45 (2026-12-06): 185 rows in 113 s; the verdict: the model alone within 5%
# of the fastest at 23 of 40, picking t1 at decode shapes (up to 2.61x): Unseen read this card's own
# runs only, none, and fell to the bare model. Rows and verdicts: notebook/probes/alone-h100/.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call46.sh
set -u
source scripts/device_step.sh
call_begin "call46" 560
TAIL=20 trial bench_llm_bf16 470 gpulab bench gemm_bf16 --suite llm --contenders 1.15 --alone --no-sanitize
TAIL=8 trial judge_bf16 40 gpulab best gemm_bf16 --suite llm --alone
rm -rf results/*/reports
call_end "call46"
exit 0
