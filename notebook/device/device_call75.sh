#!/usr/bin/env bash
# call 75 (2026-12-06, sixth session, on a769af7 and the suites in notebook/probes/untimed_picks/): on
# an H200, the three llm picks of the model alone that the H200 never timed (sgemm at 8192x4096x4096
# and 1024x10240x8192, gemm_bf16 at 1024x28672x4096), each beside its shape's best row, into
# results/h200/<experiment>-llm.csv, then both verdicts; then d0 tuned at the llm suite's sixteen
# decode shapes (device_call71.sh's first step). On another card: the whole GPU suite on the fifth
# session's final tree (the L2 probe merge touches the memory experiments' L2 labels and ks's
# access model), which no card had run, the exclusive tests alone after it.
# Ran on an H100 80GB HBM3 (2026-12-06, the H200 asked for three times first, each refused or failed):
# "3325 passed, 1 skipped in 309.11s"; exclusive "2 passed, 1 skipped" (probes/gpu_suite/call75-h100/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call75.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call75" 560
if grep -q H200 "$OUT/gpu.txt"; then
    untimed_picks sgemm gemm_bf16
    tune_d0
else
    gpu_suite 440 70
fi
rm -rf results/*/reports
call_end "call75"
exit 0
