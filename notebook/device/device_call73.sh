#!/usr/bin/env bash
# call 73 (2026-12-06, fifth session): the best row's GPU tests on the session's final tree (the ratio
# memo keyed by a run's seconds too; pairs_alike reverted), after call 72 ran them with pairs_alike in.
# Ran on an H100 80GB HBM3 (2026-12-06, on 8a19caa): "1514 passed, 1 skipped in
# 127.24s" (probes/gpu_suite/call73-h100/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call73.sh
set -u
source scripts/device_step.sh
call_begin "call73" 300
best_tests 240
rm -rf results/*/reports
call_end "call73"
exit 0
