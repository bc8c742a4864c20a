#!/usr/bin/env bash
# call 75 (2026-12-06, sixth session, on a769af7): on an H200, sgemm's llm rows timed again with each
# shape's model-alone pick beside its best row, then the verdict (device_call74.sh's step: two picks,
# 8192x4096x4096 and 1024x10240x8192, were never timed there). On another card: the whole GPU suite on
# the fifth session's final tree (the L2 probe merge touches the memory experiments' L2 labels and
# ks's access model), which no card had run, the exclusive tests alone after it.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call75.sh
set -u
source scripts/device_step.sh
call_begin "call75" 560
if grep -q H200 "$OUT/gpu.txt"; then
    alone_verdict sgemm 480
else
    gpu_suite 440 70
fi
rm -rf results/*/reports
call_end "call75"
exit 0
