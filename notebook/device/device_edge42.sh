#!/usr/bin/env bash
# t4's EDGE=2 (up to 2 rows and columns past whole tiles on the producer warpgroup's idle warps, loads
# unrolled and the next row prefetched to L2): the Hopper GPU tests with the edge test and sgemm's
# v14, then EDGE 2 against 0 in alternation with cuBLAS at 4097^3 and 4098^3; at K = 4104 (no
# staging) with the edge in M alone (4097x4096: TMA-store epilogue) and in both; and at 4096^3, where
# nothing is past the tiles but the edge build splits the registers 64 / 216 instead of 40 / 232.
# Logs in $OUT/edge42/. Usage: bash scripts/device_trial.sh edge42:300
set -u
source scripts/device_step.sh
trials_begin edge42 290
hopper_tests 100
TAIL=16 trial ab_4097 60 python3 notebook/probes/ab_rungs.py gemm_bf16 4097x4097x4097 4098x4098x4098 \
    --run t4:BN=192 --run t4:BN=192,SCHEDULE=1 --run t4:EDGE=2 --run t4:EDGE=2,SCHEDULE=1 --rounds 3
TAIL=16 trial ab_4104 60 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4104 4097x4096x4104 4097x4097x4104 \
    --run t4 --run t4:EDGE=2 --rounds 3
TAIL=12 trial ab_4096 50 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 \
    --run t4 --run t4:EDGE=2 --rounds 6
trials_end
