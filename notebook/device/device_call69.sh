#!/usr/bin/env bash
# call 69 (2026-12-06, fourth session): the whole GPU suite on the session's final tree (a config too
# large for the access model splits as its sibling of the same launch does; ks's passes over Bt the
# L2 does not keep), the exclusive tests alone after it.
# Ran on an H100 80GB HBM3 (2026-12-06, on 5ee52f5): "3325 passed, 1 skipped in 293.65s"; exclusive
# "2 passed, 1 skipped" (probes/gpu_suite/call69-h100/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call69.sh
set -u
source scripts/device_step.sh
call_begin "call69" 560
gpu_suite 440 70
rm -rf results/*/reports
call_end "call69"
exit 0
