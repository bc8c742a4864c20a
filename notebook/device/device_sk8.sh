#!/usr/bin/env bash
# Does t4's stream-K tail (SCHEDULE=1) at 4096^3 and 4000^3 depend on the rasterization group (the
# split tiles' rows and columns, so their operands' footprint in L2)? GROUP_M 4, 8, 16 beside whole
# tiles, in alternation with cuBLAS. Logs in $OUT/sk8/. Usage: bash scripts/device_trial.sh sk8:200
set -u
source scripts/device_step.sh
trials_begin sk8 190
TAIL=12 trial ab 180 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 --run t4:SCHEDULE=0 \
    --run t4:SCHEDULE=1,GROUP_M=4 --run t4:SCHEDULE=1,GROUP_M=8 --run t4:SCHEDULE=1,GROUP_M=16 \
    --run t4:SCHEDULE=0,GROUP_M=16 --rounds 4
trials_end
