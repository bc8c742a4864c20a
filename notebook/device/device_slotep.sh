#!/usr/bin/env bash
# t4's epilogue through one ring slot (store_tile_slot): the consumers keep the slot of the tile's last
# k-tile, each writes half of it beside its two buffers (5 of its 8 chunks without waiting for a
# store), and they release it to the producer during the next unit's second k-tile, before the
# producer needs it for that unit's k-tile STAGES - 1. (Two slots, device_ringep.sh, left the next
# tile's loads waiting for every store of the last: 1% slower.)
# Correctness (the tensor-core GPU tests) on the changed tree, then timed in alternation with the
# kernel before the change (notebook/patches/t4_slotep.patch reversed) and cuBLAS.
# Run on 2026-12-01 with the change in the tree; it was not kept, so apply it first:
# patch src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_slotep.patch
# Usage: bash scripts/device_trial.sh slotep:420
set -u
source scripts/device_step.sh
patch -R -s -o /tmp/t4_before.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_slotep.patch
trials_begin slotep 410
TAIL=6 trial tests 90 python3 -m pytest -q -p no:cacheprovider -n 16 -m gpu tests/gpu/test_wgmma_gpu.py
TAIL=16 trial ab4096 150 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 2048x2048x2048 \
    --run t4@/tmp/t4_before.cu:SCHEDULE=0 --run t4:SCHEDULE=0 --rounds 5
TAIL=16 trial ab8192 150 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 4096x4096x4096 4097x4097x4097 \
    --run t4@/tmp/t4_before.cu:SCHEDULE=1 --run t4:SCHEDULE=1 --rounds 3
trials_end
