#!/usr/bin/env bash
# Two changes at t4's tile boundary, timed against t4 in alternation with cuBLAS: a unit's first wgmma
# with scale-d = 0 instead of zeroing the 128 accumulators (64 CS2R fewer per unit; t4's own since,
# notebook/patches/t4_scaled.patch reversed gives the kernel before), and the epilogue's chunks copied
# out by the warps with LDS.128 + STG.128 (4 rows of 128 bytes per instruction) instead of TMA stores,
# leaving the TMA unit to the next tile's loads (t4_stg128.patch). Run on 2026-12-01 before the
# scale-d change landed, with the STG.128 epilogue both without it (185.6 us at 4096^3) and with it
# (185.0 us); the patch keeps the second. Usage: bash scripts/device_trial.sh epvar:400
set -u
source scripts/device_step.sh
T=src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu
patch -R -s -o /tmp/t4_zeroing.cu $T notebook/patches/t4_scaled.patch
patch -s -o /tmp/t4_stg128.cu $T notebook/patches/t4_stg128.patch
trials_begin epvar 390
RUNS="--run t4@/tmp/t4_zeroing.cu --run t4 --run t4@/tmp/t4_stg128.cu"
TAIL=20 trial ab 250 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 2048x2048x2048 $RUNS --rounds 5
TAIL=8 trial ab8192 120 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 $RUNS --rounds 3
trials_end
