#!/usr/bin/env bash
# The H200's third look at sgemm v13 (after device_v13b.sh, which found v13 with no split 2% slower
# than v11 at 8192^3 with the same main loop, instruction for instruction, starting 112 bytes into a
# 128-byte line where v11's starts on one): does the loop's alignment make the 2%? Then v13's tune.
# (It did not: both sources ran alike. The 2% was the 16-byte static shared flag of split_k.cuh,
# which moved the dynamic ring off its 128-byte lines: device_v13d.sh measures the fix.)
# Logs go to $OUT/v13c/. Read summary.txt first.
#   ab      v11 (tuned), v13 as measured before (_ab_misaligned.cu: loop at 112 mod 128), v13 now (the
#           same loop at 0 mod 128) and v13 S=1 (never split), alternating, 3 rounds, 8192^3 and 4096^3
#   tune    gpulab tune sgemm v13 over BK x S at the default shapes that a tune speaks for
# Usage: source scripts/device_setup.sh && bash notebook/device/device_v13c.sh  (or: bash scripts/device_trial.sh v13c:400)
set -u
source scripts/device_step.sh
trials_begin v13c 390
V11="v11:BM=64,BN=128,BK=16,WM=32,WN=64,WNITER=2,STAGES=2,MINB=1"

trial ab 130 python3 notebook/probes/ab_rungs.py sgemm 8192x8192x8192 4096x4096x4096 \
    --run "$V11" --run v13@_ab_misaligned.cu --run v13 --run v13:S=1 --rounds 3
trial tune 200 gpulab tune sgemm v13 -p BM=64 -p BN=128 -p WM=32 -p WN=64 -p WNITER=2 -p STAGES=2 -p MINB=1 -p GROUP_M=8 \
    -p RESIDENT=3 -p BK=8,16 -p S=8,16 --size 1024,2048,4096,4097,8192 --shape 1000x3000x777
trials_end
