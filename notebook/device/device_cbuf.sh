#!/usr/bin/env bash
# t4's epilogue: per tile each consumer warpgroup stores 8 chunks of 64x32 FP32 through 2 shared
# buffers, and chunk j + 2 waits until the TMA store of chunk j has read its buffer. Stall samples at
# 4096^3 put ~10% of the consumer warps' time in the epilogue (device_stalls.sh). Scratch sources
# (not kept unless they pay): t4_s3c4.cu, 3 ring slots and 4 buffers per consumer (208 KiB); t4_s3c2.cu,
# 3 slots and 2 buffers (the ring depth alone). Both run inside the host's STAGES=4 allocation.
# Alternating with cuBLAS BF16. Logs go to $OUT/cbuf/.
# Usage: bash scripts/device_trial.sh cbuf:200
set -u
source scripts/device_step.sh
trials_begin cbuf 190
trial ab4096 70 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 --rounds 7 --run t4 --run t4@t4_s3c4.cu --run t4@t4_s3c2.cu
trial ab8192 70 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 --rounds 3 --run t4 --run t4@t4_s3c4.cu --run t4@t4_s3c2.cu
trial ab2048 40 python3 notebook/probes/ab_rungs.py gemm_bf16 2048x2048x2048 --rounds 5 --run t4 --run t4@t4_s3c4.cu
trials_end
