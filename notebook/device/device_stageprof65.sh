#!/usr/bin/env bash
# Where t4 STAGING=1's time goes at 1000x3000x777 (notebook/patches/t4_staging_in_kernel.patch applied
# for the call, on c8560f3; not kept): one Nsight Compute profile with per-instruction stall samples.
# Logs and CSVs in $OUT/stageprof65/. Usage: bash scripts/device_trial.sh stageprof65:150
set -u
source scripts/device_step.sh
trials_begin stageprof65 145
TAIL=60 trial profile 130 gpulab profile gemm_bf16 t4 -p BN=192 -p CLUSTER=1 -p EDGE=2 -p STAGING=1 \
    --shape 1000x3000x777 --sass --sass-csv "$dir/sass-staging.csv" --csv "$dir/profile-staging.csv"
trials_end
