#!/usr/bin/env bash
# call 51 (2026-12-06): the whole GPU suite on 4f9e814 (the model alone reading the lent runs), on the
# H100 that call 50 had warm. Ran there: "3325 passed, 1 skipped in 364.41s"; exclusive "2 passed,
# 1 skipped" (notebook/probes/gpu_suite/call51-h100/). Typed as one command line in the call; this
# file is that command.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call51.sh
set -u
source scripts/device_step.sh
call_begin "call51" 470
gpu_suite 400 50
call_end "call51"
exit 0
