#!/usr/bin/env bash
# t4's stream-K fixup through shared memory (notebook/patches/t4_fixup.patch, applied to a copy of t4):
# the tail's partial comes into the idle ring as one bulk copy per consumer warpgroup, then is added
# from shared memory, where t4 loads it through L2 in batches of eight float4 (~7,500 SM cycles per
# tail at 4096^3 in notebook/device/device_trace.sh). SCHEDULE=1 against t4's SCHEDULE=1 and 0, alternating
# with cuBLAS. Usage: bash scripts/device_trial.sh fixup:300
set -u
source scripts/device_step.sh
patch -s -o /tmp/t4_fixup.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_fixup.patch
trials_begin fixup 290
TAIL=16 trial ab4096 170 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 4097x4097x4097 \
    --run t4:SCHEDULE=0 --run t4:SCHEDULE=1 --run t4@/tmp/t4_fixup.cu:SCHEDULE=1 --rounds 5
TAIL=12 trial ab8192 110 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 \
    --run t4:SCHEDULE=0 --run t4:SCHEDULE=1 --run t4@/tmp/t4_fixup.cu:SCHEDULE=1 --rounds 3
trials_end
