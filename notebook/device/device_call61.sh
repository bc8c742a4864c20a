#!/usr/bin/env bash
# call 61 (2026-12-06, third session): the best row where it is named whatever -p sweeps (28ad73e):
# call 60's bench again (t4 at 33x8191x129 in STAGES 4 and 6, with the best row), and the GPU tests of
# bench's best row (suites, --alone, sweeps, the memory experiments, own kernels, sk and the GEMV kernels).
# Ran on an H100 80GB HBM3 (2026-12-06): the best row ran beside the sweep, t4 in STAGES=6 (the fresh
# card's pick since 5e48491), 11.04 us against STAGES=4's 11.01 (cuBLAS BF16 9.22); the tests "1514
# passed, 1 skipped in 112.58s" (probes/alone-h100/call61/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call61.sh
set -u
source scripts/device_step.sh
call_begin "call61" 400
TAIL=8 trial best_named 60 gpulab bench gemm_bf16 -v t4,best --shape 33x8191x129 --no-sanitize --out "$OUT/t4-33x8191x129.csv" \
    -p BM=128 -p BN=128 -p STAGES=4,6 -p GROUP_M=8 -p CLUSTER=1 -p STORE=1 -p PINGPONG=0 -p SCHEDULE=0 -p EDGE=0
best_tests 300
rm -rf results/*/reports
call_end "call61"
exit 0
