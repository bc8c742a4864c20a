#!/usr/bin/env bash
# t4 in clusters of four along M (Bt multicast to four blocks: a quarter of its L2 -> SM traffic per
# block, where clusters of two halve it): how many such clusters the H200 holds at once
# (notebook/probes/probe_cluster_occupancy.py), correctness at ragged shapes, and the time in alternation
# with clusters of two and cuBLAS. Logs in $OUT/c4_38/. Usage: bash scripts/device_trial.sh c4_38:400
# It ran on a tree with notebook/patches/t4_cluster4.patch applied (the two lines that let t4 take
# CLUSTER=4); on the device's copy of the tree, apply it first:
set -u
source scripts/device_step.sh
patch -p1 -s -N < notebook/patches/t4_cluster4.patch
trials_begin c4_38 390
TAIL=6 trial occupancy 40 python3 notebook/probes/probe_cluster_occupancy.py 256
TAIL=12 trial check 60 gpulab bench gemm_bf16 --variant t4 -p CLUSTER=4 -p BN=128,192,256 \
    --shape 300x388x200 --shape 131x67x37 --shape 1000x3000x777 --out /tmp/c4.csv
TAIL=12 trial ab_small 60 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x776 \
    --run t4:BN=192,CLUSTER=2 --run t4:BN=192,CLUSTER=4 --run t4:BN=256,CLUSTER=4 --rounds 5
TAIL=12 trial ab_4096 90 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 2048x2048x2048 \
    --run t4 --run t4:CLUSTER=4 --rounds 4
TAIL=12 trial ab_8192 90 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 \
    --run t4 --run t4:CLUSTER=4 --rounds 3
trials_end
