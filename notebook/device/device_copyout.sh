#!/usr/bin/env bash
# t4's copy-out epilogue (N % 4 != 0) unrolled with its addressing hoisted (notebook/patches/t4_copyout.patch,
# applied to a copy of t4): notebook/device/device_oddn.sh found its warps waiting on each row's chain of
# address arithmetic ("wait" stalls), ~17,500 SM cycles per tile. Timed in alternation with t4 and
# cuBLAS at odd N, and at 4096^3 (the TMA path, which must not move). The change is t4's own since; the
# patch applies to t4 as it was before it. (Run on 2026-12-01 with the summary into $dir, copied to
# notebook/probes/trace-t4-copyout.csv.) Usage: bash scripts/device_trial.sh copyout:200
set -u
source scripts/device_step.sh
patch -s -o /tmp/t4_copyout.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_copyout.patch
trials_begin copyout 190
TAIL=16 trial ab 120 python3 notebook/probes/ab_rungs.py gemm_bf16 4097x4097x4097 2048x2049x2048 4096x4096x4096 \
    --run t4:SCHEDULE=1 --run t4@/tmp/t4_copyout.cu:SCHEDULE=1 --rounds 4
TAIL=30 trial trace 40 python3 scripts/trace_t4.py 4096x4097x4096 --params SCHEDULE=0 \
    --patch notebook/patches/t4_copyout.patch --summary notebook/probes/trace-t4-copyout.csv
trials_end
