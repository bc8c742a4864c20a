#!/usr/bin/env bash
# t4 tuned again at its two staged shapes (4097^3, 1000x3000x777), whose rows predated the staged
# pitch of 128 bytes (their rows were taken out of
# results/h200/tune-gemm_bf16-t4.csv; the other five shapes resume from it), over the same 36 configs
# as device_tune50.sh (with the staging copy of 3e36161; device_stage54.sh timed a rewrite of it that
# lost); then the bench rows of the staged rungs and the best there.
# Logs in $OUT/tune55/. Usage: bash scripts/device_trial.sh tune55:200
set -u
source scripts/device_step.sh
trials_begin tune55 195
TAIL=12 trial tune 140 gpulab tune gemm_bf16 t4 -p BN=192,200,256 -p CLUSTER=1,2,4 -p SCHEDULE=0,1 -p EDGE=0,2 \
    -p STAGES=4 -p GROUP_M=8 -p STORE=1 -p PINGPONG=0 \
    --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 4097x4097x4097 --shape 4000x4000x4000 \
    --shape 1000x3000x776 --shape 2048x2048x2048 --shape 1000x3000x777
TAIL=14 trial bench 45 gpulab bench gemm_bf16 --variant t2,t3,t4,best --shape 4097x4097x4097 --shape 1000x3000x777
trials_end
