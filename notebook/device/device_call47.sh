#!/usr/bin/env bash
# call 47 (2026-12-06): as call 46 for sgemm: its llm suite on the H100, the variants the model
# puts within 15% of its pick and its model-alone pick (efficiencies lent by the H200), then the verdict.
# Ran on the same H100 (2026-12-06): 156 rows in 82 s; the verdict 18 of 40, v1 and v2 picked at 128
# tokens (4.3-7.5x), sk at decode (up to 13.5x): the bare model, as in call 46.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call47.sh
set -u
source scripts/device_step.sh
call_begin "call47" 560
TAIL=20 trial bench_llm_sgemm 470 gpulab bench sgemm --suite llm --contenders 1.15 --alone --no-sanitize
TAIL=8 trial judge_sgemm 40 gpulab best sgemm --suite llm --alone
rm -rf results/*/reports
call_end "call47"
exit 0
