#!/usr/bin/env bash
# The FP32 rungs above v9 under ncu at the configs the README's ladder table shows for them at
# 4096^3 (each rung's fastest there), so each compare shows what the rung changed as tuned: v9 -> v10,
# v10 -> v11, v11 -> v12 (profile.csv); then which cluster operation racecheck faults on
# (scripts/probe_cluster_sanitizer.py: four minimal cluster kernels under each tool).
# Logs in $OUT/rungs31/.
# Usage: bash scripts/device_trial.sh rungs31:300
set -u
source scripts/device_step.sh
trials_begin rungs31 295
V9=v9:STAGES=2
V10=v10:BM=64,BN=128,BK=8,WM=64,WN=64,WNITER=2,TM=4,TN=4,STAGES=2,MINB=2,GROUP_M=8
V11=v11:BM=64,BN=128,BK=16,WM=32,WN=64,WNITER=2,TM=4,TN=4,STAGES=2,MINB=1,GROUP_M=8
V12=v12:BM=64,BN=128,BK=8,WM=32,WN=64,WNITER=2,TM=4,TN=4,STAGES=2,MINB=2,GROUP_M=8,SK_ROUNDS=99
TAIL=45 trial v9_v10 40 gpulab compare sgemm $V9 $V10 --size 4096
TAIL=45 trial v10_v11 40 gpulab compare sgemm $V10 $V11 --size 4096
TAIL=45 trial v11_v12 40 gpulab compare sgemm $V11 $V12 --size 4096
TAIL=20 trial probe 150 python3 scripts/probe_cluster_sanitizer.py --timeout 30
trials_end
