#!/usr/bin/env bash
# cuBLAS's FP32 arrangement on gpulab's loop, this time with its warp tile: cuBLAS runs 256x128 blocks of
# eight 64x64 warp tiles (warpsize 4x2x1), one block per SM; notebook/device/device_wide.sh tried eight 32x128
# warp tiles instead. v13 at BM=256 BN=128 WM=64 WN=64 (255 registers, no spill under NVRTC 13.0) issues
# 1,104 instructions per 1,024 FFMA at BK=16 (v13's default 1,144) with 98 same-bank FFMAs per 1,024
# (122), by scripts/sass_banks.py. At 2048^3 its 128 tiles are one wave on 128 SMs, as cuBLAS's.
# Alternating with cuBLAS, 3 rounds: v13 as tuned; 256x128 and 128x256 at BK=16; 256x128 at BK=8; 256x128
# BK=16 with 3 stages. Logs go to $OUT/warp64/. summary.txt first.
# Usage: bash scripts/device_trial.sh warp64:400
set -u
source scripts/device_step.sh
trials_begin warp64 390
W1="BM=256,BN=128,BK=16,WM=64,WN=64,RESIDENT=1"
W2="BM=128,BN=256,BK=16,WM=64,WN=64,RESIDENT=1"
W3="BM=256,BN=128,BK=8,WM=64,WN=64,RESIDENT=1"
trial ab2048 80 python3 notebook/probes/ab_rungs.py sgemm 2048x2048x2048 --rounds 3 --run v13 --run "v13:$W1" \
    --run "v13:$W2" --run "v13:$W3" --run "v13:$W1,STAGES=3"
trial ab4096 110 python3 notebook/probes/ab_rungs.py sgemm 4096x4096x4096 --rounds 3 --run v13:S=16 --run "v13:$W1" \
    --run "v13:$W2" --run "v13:$W1,STAGES=3"
trial ab8192 150 python3 notebook/probes/ab_rungs.py sgemm 8192x8192x8192 --rounds 3 --run v13:S=16 --run "v13:$W1" \
    --run "v13:$W2"
trials_end
