#!/usr/bin/env bash
# FP32 at 2048^3, where gpulab's best (v9, 64x128 tiles of 2 warps) runs ~92% of cuBLAS: cuBLAS runs
# a 256x128 tile per block there (cutlass_80_simt_sgemm_256x128_8x4, 128 blocks of 256 threads, one
# wave; notebook/probes/vendor_kernels.csv). The tunes tried 128x256 tiles, never 256x128: v9 and v11
# in that shape (8 warps, MINB=1), in alternation with the tuned v9 and v13 and cuBLAS; then the
# best few at 4096^3.
# Usage: bash scripts/device_trial.sh tall:200
set -u
source scripts/device_step.sh
trials_begin tall 190
V9T=v9:BM=64,BN=128,BK=8,WM=64,WN=64,WNITER=2,TM=4,TN=4,STAGES=2,MINB=2,GROUP_M=8
V13T=v13:BM=64,BN=128,BK=16,WM=32,WN=64,WNITER=2,TM=4,TN=4,STAGES=2,MINB=1,GROUP_M=8,RESIDENT=3,S=8
TALL=BM=256,BN=128,MINB=1,GROUP_M=8
TAIL=20 trial ab2048 110 python3 notebook/probes/ab_rungs.py sgemm 2048x2048x2048 --run $V9T --run $V13T \
    --run v11:$TALL,BK=8,WM=64,WN=64,WNITER=2,STAGES=2 --run v11:$TALL,BK=16,WM=64,WN=64,WNITER=2,STAGES=2 \
    --run v11:$TALL,BK=8,WM=128,WN=32,WNITER=1,STAGES=3 --run v11:$TALL,BK=16,WM=32,WN=128,WNITER=4,STAGES=2 \
    --run v9:$TALL,BK=8,WM=64,WN=64,WNITER=2,STAGES=2 --run v9:$TALL,BK=8,WM=32,WN=128,WNITER=4,STAGES=2 \
    --run v9:$TALL,BK=16,WM=64,WN=64,WNITER=2,STAGES=3 --rounds 4
TAIL=10 trial ab4096 70 python3 notebook/probes/ab_rungs.py sgemm 4096x4096x4096 \
    --run v13:BM=64,BN=128,BK=16,WM=32,WN=64,WNITER=2,TM=4,TN=4,STAGES=2,MINB=1,GROUP_M=8,RESIDENT=3,S=16 \
    --run v11:$TALL,BK=8,WM=64,WN=64,WNITER=2,STAGES=2 --run v11:$TALL,BK=16,WM=32,WN=128,WNITER=4,STAGES=2 --rounds 3
trials_end
