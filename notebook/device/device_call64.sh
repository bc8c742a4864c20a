#!/usr/bin/env bash
# call 64 (2026-12-06, third session): the best row's GPU tests on the tree of the declined configs'
# unseen cost (13b3589): suites, --alone, sweeps, the memory experiments, own kernels, sk and the GEMV
# kernels (the whole GPU suite ran on 5e48491 in call 60; since then the model and bench's best row).
# Ran on an H100 80GB HBM3 (2026-12-06): "1514 passed, 1 skipped in 146.74s" (probes/gpu_suite/call64-h100/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call64.sh
set -u
source scripts/device_step.sh
call_begin "call64" 280
best_tests 250
rm -rf results/*/reports
call_end "call64"
exit 0
