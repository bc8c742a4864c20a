#!/usr/bin/env bash
# call 60 (2026-12-06, third session): the whole GPU suite on the tree of the fill-alike config factor
# (5e48491 and its notes); and the one pick it moves with nothing left out, t4 at 33x8191x129 (STAGES
# 4 to 6, three k-tiles deep), both configs and the best row timed in one run beside cuBLAS (rows to
# $OUT). On an H200 the same, on that card.
# Ran on an H100 80GB HBM3 (2026-12-06): t4 at 33x8191x129 10.944 us in STAGES=4 and in STAGES=6 alike
# (cuBLAS BF16 9.088; probes/alone-h100/call60/); the best row was not planned (-p had turned it off
# where it was named: fixed after this call). The whole GPU suite: "3325 passed, 1 skipped in
# 322.70s"; exclusive "2 passed, 1 skipped" (probes/gpu_suite/call60-h100/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call60.sh
set -u
source scripts/device_step.sh
call_begin "call60" 560
TAIL=6 trial stages_33 60 gpulab bench gemm_bf16 -v t4,best --shape 33x8191x129 --no-sanitize --out "$OUT/t4-33x8191x129.csv" \
    -p BM=128 -p BN=128 -p STAGES=4,6 -p GROUP_M=8 -p CLUSTER=1 -p STORE=1 -p PINGPONG=0 -p SCHEDULE=0 -p EDGE=0
gpu_suite 420 60
rm -rf results/*/reports
call_end "call60"
exit 0
