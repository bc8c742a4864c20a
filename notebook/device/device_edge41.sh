#!/usr/bin/env bash
# t4's first EDGE=8 (the producer warpgroup's idle warps compute up to 8 rows and columns past whole
# tiles, one chunk per lane in flight; since replaced by EDGE=2, so this script no longer runs as is):
# the Hopper GPU tests with the new edge test and sgemm's v14 (t4 under TF32, which takes no edge),
# then EDGE 8 against 0 in alternation with cuBLAS at 4097^3 (one row and column past 4096^3's tiles),
# 4100^3 and 4104^3 (4 and 8), and at 4096^3, where nothing is past the tiles but the edge build gives
# the producer 56 registers and the consumers 224 instead of 40 and 232.
# Logs in $OUT/edge41/. Usage: bash scripts/device_trial.sh edge41:540
set -u
source scripts/device_step.sh
trials_begin edge41 530
hopper_tests 200
TAIL=16 trial ab_4097 90 python3 notebook/probes/ab_rungs.py gemm_bf16 4097x4097x4097 \
    --run t4:BN=192 --run t4:BN=192,SCHEDULE=1 --run t4:EDGE=8 --run t4:EDGE=8,SCHEDULE=1 --rounds 4
TAIL=12 trial ab_4104 80 python3 notebook/probes/ab_rungs.py gemm_bf16 4100x4100x4100 4104x4104x4104 \
    --run t4 --run t4:EDGE=8 --rounds 3
TAIL=12 trial ab_4096 80 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 \
    --run t4 --run t4:EDGE=8 --rounds 6
trials_end
