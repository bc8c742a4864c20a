#!/usr/bin/env bash
# t4's consumers build each wgmma descriptor from its tile's address at every k-tile (100 SASS
# instructions per k-tile and warp); built once per slot from two precomputed low words and added to
# (notebook/patches/t4_desc.patch), 80. Both kernels run at the card's power limit, where t4 clocks
# ~0.75% below cuBLAS: does issuing fewer instructions show? Timed in alternation with cuBLAS.
# Usage: bash scripts/device_trial.sh desc:120
set -u
source scripts/device_step.sh
patch -s -o /tmp/t4_desc.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_desc.patch
trials_begin desc 110
TAIL=10 trial ab 100 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 8192x8192x8192 \
    --run t4 --run t4@/tmp/t4_desc.cu --rounds 4
trials_end
