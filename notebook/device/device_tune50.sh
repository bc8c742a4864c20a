#!/usr/bin/env bash
# t4 tuned again with BN=200 and clusters of four beside the choices the last tune weighed (BN 192/256,
# clusters of 1/2, SCHEDULE 0/1, EDGE 0/2) on its seven shapes; the configs timed before resume from
# results/h200/tune-gemm_bf16-t4.csv (their machine code is unchanged: scripts/sass_digest.py). Then
# the bench rows at the two 1000x3000 shapes, what a kernel before a clustered GEMM costs it
# (notebook/probes/ab_after_kernel.py), and the fidelity rows of BN=200 in clusters of four (the last 8
# columns' register stores against ncu). Logs in $OUT/tune50/. Usage: bash scripts/device_trial.sh tune50:590
set -u
source scripts/device_step.sh
trials_begin tune50 580
TAIL=12 trial tune 370 gpulab tune gemm_bf16 t4 -p BN=192,200,256 -p CLUSTER=1,2,4 -p SCHEDULE=0,1 -p EDGE=0,2 \
    -p STAGES=4 -p GROUP_M=8 -p STORE=1 -p PINGPONG=0 \
    --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 4097x4097x4097 --shape 4000x4000x4000 \
    --shape 1000x3000x776 --shape 2048x2048x2048 --shape 1000x3000x777
TAIL=10 trial bench 50 gpulab bench gemm_bf16 --variant t4,best --shape 1000x3000x776 --shape 1000x3000x777
TAIL=10 trial after 45 python3 notebook/probes/ab_after_kernel.py 1000x3000x776 --run t4:BN=200,CLUSTER=4 \
    --run t4:BN=192,CLUSTER=1 --rounds 7
TAIL=3 trial fid_t4_c4 60 gpulab fidelity gemm_bf16 --variant t4 --shapes both -p BN=200 -p CLUSTER=4
trials_end
