#!/usr/bin/env bash
# t4 with its two consumer warpgroups STAGGER k-tiles apart (notebook/patches/t4_stagger.patch, applied
# to a copy of t4): consumer 1 starts once consumer 0 has issued its first STAGGER k-tiles, so at each
# tile's end one warpgroup's epilogue runs while the other still feeds the tensor cores its last
# k-tiles, and the other way round at the next tile's start. Timed in alternation with t4 and cuBLAS.
# Usage: bash scripts/device_trial.sh stagger:300
set -u
source scripts/device_step.sh
patch -s -o /tmp/t4_stagger.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_stagger.patch
trials_begin stagger 290
TAIL=16 trial ab4096 170 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 2048x2048x2048 \
    --run t4:SCHEDULE=0 --run t4@/tmp/t4_stagger.cu:SCHEDULE=0,STAGGER=1 \
    --run t4@/tmp/t4_stagger.cu:SCHEDULE=0,STAGGER=2 --rounds 6
TAIL=12 trial ab8192 110 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 \
    --run t4:SCHEDULE=1 --run t4@/tmp/t4_stagger.cu:SCHEDULE=1,STAGGER=2 --run t4@/tmp/t4_stagger.cu:SCHEDULE=0,STAGGER=2 --rounds 3
trials_end
