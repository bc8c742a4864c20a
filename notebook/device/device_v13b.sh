#!/usr/bin/env bash
# The H200's second look at sgemm v13 (after device_v13.sh): where its loss at 8192^3 comes from,
# which ring and rasterization settings suit it at 2048^3 and 4096^3, and the ncu evidence of what
# it changes against v11 at 4096^3. Logs go to $OUT/v13b/. Read summary.txt first.
#   ab8192   v11 (tuned), v13, v13 S=1 (never split: v11's code plus the unused slice path) and
#            RESIDENT=2 (a plan for 264 slots: 8 tail tiles at 8192^3), alternating, 3 rounds
#   sweep    gpulab bench v13 over GROUP_M x STAGES at 2048^3 and 4096^3 (sweep.csv)
#   compare  gpulab compare sgemm v11 v13 at 4096^3 (v11 at its tuned config), into profile.csv
# Usage: source scripts/device_setup.sh && bash notebook/device/device_v13b.sh  (or: bash scripts/device_trial.sh v13b:400)
set -u
source scripts/device_step.sh
trials_begin v13b 390
V11="v11:BM=64,BN=128,BK=16,WM=32,WN=64,WNITER=2,STAGES=2,MINB=1"

trial ab8192 110 python3 notebook/probes/ab_rungs.py sgemm 8192x8192x8192 \
    --run "$V11" --run v13 --run v13:S=1 --run v13:RESIDENT=2 --rounds 3
trial sweep 100 gpulab bench sgemm --variant v13 -p GROUP_M=4,8,16 -p STAGES=2,3 --size 2048,4096 --out "$dir/sweep.csv"
trial compare 150 gpulab compare sgemm v11 v13 --param-a BM=64 --param-a BN=128 --param-a BK=16 --param-a WM=32 \
    --param-a WN=64 --param-a WNITER=2 --param-a STAGES=2 --param-a MINB=1 --size 4096 --csv "$dir/profile.csv"
trials_end
