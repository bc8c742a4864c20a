#!/usr/bin/env bash
# t4's consumers compute a unit's output coordinates (cluster_tile: two integer divisions and the tile
# grid's shared loads) after issuing its first k-tile's wgmma instead of before waiting for it: they
# are needed only from the epilogue on, and notebook/device/device_trace.sh measured ~840 cycles from a
# unit's start to its first k-tile (notebook/patches/t4_coords.patch, applied to a copy of t4).
# Timed in alternation with t4 and cuBLAS. Usage: bash scripts/device_trial.sh coords:300
set -u
source scripts/device_step.sh
patch -s -o /tmp/t4_coords.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_coords.patch
trials_begin coords 290
TAIL=16 trial ab4096 170 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 2048x2048x2048 \
    --run t4:SCHEDULE=0 --run t4@/tmp/t4_coords.cu:SCHEDULE=0 --rounds 7
TAIL=12 trial ab8192 110 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 4097x4097x4097 \
    --run t4:SCHEDULE=1 --run t4@/tmp/t4_coords.cu:SCHEDULE=1 --rounds 3
trials_end
