#!/usr/bin/env bash
# call 71 (2026-12-06, fifth session, on 824e5cf): on an H200, call 58's steps (d0 tuned at all
# sixteen decode shapes of the llm suite, gemm_bf16's llm rows timed again with each shape's
# model-alone pick beside its best row, and the verdict). On another card: the whole GPU suite on the
# fourth session's final tree (configs the model times alike no longer use up a variant's turns; a
# table label), which no card had run, the exclusive tests alone after it.
# Ran on an H100 80GB HBM3 (2026-12-06, the H200 asked for; one start failed): "3325 passed, 1 skipped in
# 291.31s"; exclusive "2 passed, 1 skipped" (probes/gpu_suite/call71-h100/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call71.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call71" 560
if grep -q H200 "$OUT/gpu.txt"; then
    tune_d0
    alone_verdict gemm_bf16 250
else
    gpu_suite 440 70
fi
rm -rf results/*/reports
call_end "call71"
exit 0
