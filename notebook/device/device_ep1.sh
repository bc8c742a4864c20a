#!/usr/bin/env bash
# t4's epilogue with one named barrier per 8 KiB chunk instead of two (notebook/patches/t4_ep1.patch,
# applied to a copy of t4): thread 0 waits for the previous chunk's TMA store to have read the other
# buffer just before the barrier that ends this chunk's writes. Timed in alternation with t4 and cuBLAS.
# (Run on 2026-12-01 with the patched copy beside t4's source, the only @FILE ab_rungs.py took then.)
# Usage: bash scripts/device_trial.sh ep1:280
set -u
source scripts/device_step.sh
patch -s -o /tmp/t4_ep1.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_ep1.patch
trials_begin ep1 270
TAIL=12 trial ab4096 150 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 2048x2048x2048 \
    --run t4:SCHEDULE=0 --run t4@/tmp/t4_ep1.cu:SCHEDULE=0 --rounds 6
TAIL=12 trial ab8192 110 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 \
    --run t4:SCHEDULE=1 --run t4@/tmp/t4_ep1.cu:SCHEDULE=1 --run t4@/tmp/t4_ep1.cu:SCHEDULE=0 --rounds 3
trials_end
