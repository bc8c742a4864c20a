#!/usr/bin/env bash
# Where t4 has one or two units per consumer (1000x3000x776, 2048^3), the trace (device_full17.sh,
# notebook/probes/trace-t4-small.csv) put ~3,000 SM cycles between a block's start and its first
# k-tile. Timed in alternation with t4 and cuBLAS: the tensor maps prefetched at the kernel's start
# (notebook/patches/t4_prefetch_maps.patch), and also the block's first STAGES k-tiles prefetched into
# L2 before the cluster syncs (t4_prefetch_l2.patch); and, for the few-tile shapes, the config that
# fills every SM: BN = 128 tiles (96 cluster tiles at 1000x3000x776, 128 at 2048^3) split by
# stream-K (SCHEDULE = 1), which the tune had not tried there.
# Usage: bash scripts/device_trial.sh prefetch:300
set -u
source scripts/device_step.sh
T4=src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu
patch -s -o /tmp/t4_maps.cu $T4 notebook/patches/t4_prefetch_maps.patch
patch -s -o /tmp/t4_l2.cu $T4 notebook/patches/t4_prefetch_l2.patch
trials_begin prefetch 290
TAIL=24 trial small 150 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x776 1000x3000x777 2048x2048x2048 \
    --run t4 --run t4@/tmp/t4_maps.cu --run t4@/tmp/t4_l2.cu \
    --run t4:BN=128,STAGES=6,SCHEDULE=1 --run t4@/tmp/t4_l2.cu:BN=128,STAGES=6,SCHEDULE=1 --rounds 5
TAIL=12 trial big 100 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4097x4097x4097 \
    --run t4 --run t4@/tmp/t4_l2.cu --rounds 3
trials_end
