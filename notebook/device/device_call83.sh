#!/usr/bin/env bash
# call 83 (2026-12-06, seventh session, on ad4f2f4 and its notebook files): the whole GPU suite on
# the tree with the serial fixup (Variant.serial_fixup touches every variant's declaration; call 82
# ran the best row's tests only). On an H200, first the three llm picks of the model alone it never
# timed (notebook/probes/untimed_picks/) and both verdicts, then the suite as far as the time goes.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call83.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call83" 560
grep -q H200 "$OUT/gpu.txt" && untimed_picks sgemm gemm_bf16
gpu_suite 420 60
rm -rf results/*/reports
call_end "call83"
exit 0
