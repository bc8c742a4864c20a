#!/usr/bin/env bash
# Where t4 STAGING=1 (the prologue copy, branch `prologue`) spends its time at 1000x3000x777: one
# Nsight Compute profile with per-instruction stall samples. Logs and CSVs in $OUT/prolprof68/.
# Usage: bash scripts/device_trial.sh prolprof68:150
set -u
source scripts/device_step.sh
trials_begin prolprof68 145
TAIL=60 trial profile 130 gpulab profile gemm_bf16 t4 -p BN=192 -p CLUSTER=1 -p EDGE=2 -p STAGING=1 \
    --shape 1000x3000x777 --sass --sass-csv "$dir/sass-prologue.csv" --csv "$dir/profile-prologue.csv"
trials_end
