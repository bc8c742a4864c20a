#!/usr/bin/env bash
# cuBLAS's FP32 tile on gpulab's loop: cuBLAS runs 256x128x8 tiles of eight 64x64 warp tiles (an 8x16
# thread tile), one 256-thread block per SM (scripts/probe_vendor_kernels.py, H200). v11/v13 never
# tried a 32x128 warp tile (WNITER=4: 8x16 per thread); by scripts/sass_banks.py its loop has 1,119
# instructions per 1,024 FFMA (v13's default 1,144). Alternating with cuBLAS at 4096^3, 8192^3 and
# 2048^3: v13 as tuned; v13 at 128x256x8 with eight 32x128 warp tiles (RESIDENT=1), STAGES 2 and 3;
# v13 at 64x256x8 (four warps, RESIDENT=2). Logs go to $OUT/wide/. summary.txt first.
# Usage: bash scripts/device_trial.sh wide:330
set -u
source scripts/device_step.sh
trials_begin wide 320
W1="BM=128,BN=256,WM=32,WN=128,WNITER=4,BK=8,RESIDENT=1"
W2="BM=64,BN=256,WM=32,WN=128,WNITER=4,BK=8,RESIDENT=2"
trial ab4096 90 python3 notebook/probes/ab_rungs.py sgemm 4096x4096x4096 --rounds 3 --run v13:S=16 --run "v13:$W1" \
    --run "v13:$W1,STAGES=3" --run "v13:$W2"
trial ab8192 120 python3 notebook/probes/ab_rungs.py sgemm 8192x8192x8192 --rounds 3 --run v13:S=16 --run "v13:$W1" \
    --run "v13:$W1,STAGES=3"
trial ab2048 60 python3 notebook/probes/ab_rungs.py sgemm 2048x2048x2048 --rounds 3 --run v13 --run "v13:$W1" \
    --run "v13:$W1,STAGES=3" --run "v13:$W2"
trials_end
