#!/usr/bin/env bash
# call 77 (2026-12-06, sixth session, on e83f9d4, whose src/ and tests/ are a769af7's): for an H200
# only, device_call76.sh's H200 branch in the device time left: the three llm picks of the model
# alone the H200 never timed, beside their shapes' best rows (notebook/probes/untimed_picks/), both
# verdicts, then d0's decode tune as far as the time goes. On another card it does nothing.
# Ran on an H100 80GB HBM3 (2026-12-06, the H200 asked for): nothing to do there.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call77.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call77" 430
if grep -q H200 "$OUT/gpu.txt"; then
    untimed_picks sgemm gemm_bf16
    tune_d0
else
    echo "not an H200: nothing to do (the llm rows the verdict reads are the H200's)"
fi
rm -rf results/*/reports
call_end "call77"
exit 0
