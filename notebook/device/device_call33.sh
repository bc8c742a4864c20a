#!/usr/bin/env bash
# call 33 (2026-12-05, ran on an H100): the three sgemm picks sx's 32-wide tune moved (call 26) to configs never
# timed at their shapes, each in gpulab's A/B against the pick before it (sx's tuned 64-wide config
# at 512x512x512 and 64x4096x4096, v13 at 128x4096x4096, as call 15 ran it) and against cuBLAS FP32.
# Explicit configs, so an H100 answers too (its best row would read its own results, not the H200's).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call33.sh
set -u
source scripts/device_step.sh
call_begin "call33" 200
ab() { TAIL=3 trial "ab_$1_$4" 30 gpulab ab sgemm "$2" "$3" --shape "$1" --noise 1% --csv "$dir/ab-sx-moved.csv"; }
sx32="sx:BM=64,BN=32,BK=16,WM=16,WN=32,WNITER=1,TM=4,TN=4,STAGES=4,MINB=4,GROUP_M=8,S=8"
ab 512x512x512 "sx:BM=64,BN=64,BK=8,WM=32,WN=64,WNITER=2,TM=4,TN=4,STAGES=3,MINB=2,GROUP_M=8,S=4" "$sx32" before
ab 64x4096x4096 "sx:BM=64,BN=64,BK=8,WM=32,WN=64,WNITER=2,TM=4,TN=4,STAGES=2,MINB=2,GROUP_M=8,S=8" "$sx32" before
ab 128x4096x4096 "v13:BM=64,BN=128,BK=16,WM=32,WN=64,WNITER=2,TM=4,TN=4,STAGES=2,MINB=1,GROUP_M=8,RESIDENT=3,S=8" \
    "sx:BM=128,BN=32,BK=16,WM=32,WN=32,WNITER=1,TM=4,TN=4,STAGES=4,MINB=3,GROUP_M=4,S=4" before
ab 512x512x512 cublas "$sx32" cublas
ab 64x4096x4096 cublas "$sx32" cublas
ab 128x4096x4096 cublas "sx:BM=128,BN=32,BK=16,WM=32,WN=32,WNITER=1,TM=4,TN=4,STAGES=4,MINB=3,GROUP_M=4,S=4" cublas
call_end "call33"
exit 0
