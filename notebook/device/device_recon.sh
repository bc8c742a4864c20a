#!/usr/bin/env bash
# What cuBLAS runs (kernel, grid, block, registers, issue slots, stalls) for FP32 SGEMM at 2048^3,
# 4096^3 and 8192^3 and for BF16 at 4096^3, beside v13 and t4 (scripts/probe_vendor_kernels.py); and
# v13 configs not tried before at 2048^3 and 4096^3 (GROUP_M, RESIDENT, the 64-thread 64x64 warp
# layout), alternating with cuBLAS. Logs go to $OUT/recon/. summary.txt first.
# Usage: bash scripts/device_trial.sh recon:300
set -u
source scripts/device_step.sh
trials_begin recon 290
TAIL=20 trial ncu_fp32 120 python3 scripts/probe_vendor_kernels.py sgemm 2048x2048x2048 4096x4096x4096 8192x8192x8192 --run v13
TAIL=20 trial ncu_bf16 50 python3 scripts/probe_vendor_kernels.py gemm_bf16 4096x4096x4096 --run t4
trial ab2048 60 python3 notebook/probes/ab_rungs.py sgemm 2048x2048x2048 --rounds 3 --run v13 --run v13:GROUP_M=4 \
    --run v13:GROUP_M=16 --run v13:WM=64,RESIDENT=4 --run v13:S=12
trial ab4096 60 python3 notebook/probes/ab_rungs.py sgemm 4096x4096x4096 --rounds 3 --run v13:S=16 --run v13:S=16,GROUP_M=4 \
    --run v13:S=16,GROUP_M=16
trials_end
