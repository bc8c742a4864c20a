#!/usr/bin/env bash
# t4 tuned again with EDGE (0 or 2) beside the choices the last tune weighed (BN 192/256, clusters of
# 1/2, SCHEDULE 0/1) on its seven shapes: only 4097^3 has an edge among them. Then the bench rows the
# README quotes at 4097^3 (t4's tuned pick and the best row, beside cuBLAS), and t4's and v14's
# fidelity rows measured again (t4's source changed: the edge's code, and its tiles' extent as
# arguments). Logs in $OUT/tune43/. Usage: bash scripts/device_trial.sh tune43:560
set -u
source scripts/device_step.sh
trials_begin tune43 550
TAIL=12 trial tune 330 gpulab tune gemm_bf16 t4 -p BN=192,256 -p CLUSTER=1,2 -p SCHEDULE=0,1 -p EDGE=0,2 \
    -p STAGES=4 -p GROUP_M=8 -p STORE=1 -p PINGPONG=0 \
    --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 4097x4097x4097 --shape 4000x4000x4000 \
    --shape 1000x3000x776 --shape 2048x2048x2048 --shape 1000x3000x777
TAIL=10 trial bench 40 gpulab bench gemm_bf16 --variant t4,best --shape 4097x4097x4097
TAIL=3 trial fid_t4 45 gpulab fidelity gemm_bf16 --variant t4 --shapes both
TAIL=3 trial fid_t4_c1 45 gpulab fidelity gemm_bf16 --variant t4 --shapes both -p BN=192 -p CLUSTER=1
TAIL=3 trial fid_t4_192 45 gpulab fidelity gemm_bf16 --variant t4 --shapes both -p BN=192
TAIL=3 trial fid_t4_pp 45 gpulab fidelity gemm_bf16 --variant t4 --shapes both \
    -p STORE=0 -p BN=128 -p STAGES=6 -p PINGPONG=1
trials_end
