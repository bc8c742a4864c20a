#!/usr/bin/env bash
# Is t4's epilogue (~4,500 SM cycles per tile, 29 bytes per cycle) bound by the TMA store or by what
# the SM can write? The same chunks copied out by the warpgroup with STG (128 contiguous bytes per warp
# instruction, t4's path for N % 4 != 0; notebook/patches/t4_stgout.patch), traced and timed in
# alternation with t4 and cuBLAS. Usage: bash scripts/device_trial.sh stgout:200
set -u
source scripts/device_step.sh
patch -s -o /tmp/t4_stgout.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_stgout.patch
trials_begin stgout 190
TAIL=30 trial trace 50 python3 scripts/trace_t4.py 4096x4096x4096 8192x8192x8192 --params SCHEDULE=0 \
    --patch notebook/patches/t4_stgout.patch --summary notebook/probes/trace-t4-stgout.csv
TAIL=12 trial ab 130 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 8192x8192x8192 \
    --run t4:SCHEDULE=0 --run t4@/tmp/t4_stgout.cu:SCHEDULE=0 --rounds 3
trials_end
