#!/usr/bin/env bash
# t4 with cuBLAS's own tile at 1000x3000x776: BN=200 (3000 = 15 tiles of it) in clusters of four along
# M sharing each 200-row Bt tile by multicast (50 rows a block), 30 cluster tiles for the 30 clusters
# of four the H200 holds. First correct (random and exact, the test shapes and the two 1000x3000
# shapes), then timed in alternation with the tuned configs and cuBLAS.
# Logs in $OUT/bn200_48/. Usage: bash scripts/device_trial.sh bn200_48:330
set -u
source scripts/device_step.sh
trials_begin bn200_48 320
CHECK="python3 notebook/probes/stream_k_check.py --experiment gemm_bf16 --variant t4"
SHAPES="1x1x1 17x33x65 1000x1531x777 256x256x4104 1000x3000x776 1000x3000x777 300x388x200 131x67x37 2048x2048x2048"
CONFIGS="--params BN=200,CLUSTER=4 --params BN=200,CLUSTER=2 --params BN=200,CLUSTER=1 --params BN=200,CLUSTER=4,STORE=0 --params BN=200,CLUSTER=4,EDGE=2 --params BN=256,CLUSTER=4"
TAIL=14 trial check 70 $CHECK $CONFIGS $SHAPES
TAIL=14 trial check_exact 50 $CHECK --exact --params BN=200,CLUSTER=4 --params BN=200,CLUSTER=2 1000x3000x777 131x67x37 4097x4097x4097
TAIL=20 trial ab_small 90 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x776 1000x3000x777 \
    --run t4:BN=192 --run t4:BN=192,CLUSTER=1 --run t4:BN=200,CLUSTER=4 --run t4:BN=200,CLUSTER=2 \
    --run t4:BN=256,CLUSTER=4 --rounds 7
TAIL=12 trial ab_k64 40 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x64 \
    --run t4:BN=192 --run t4:BN=192,CLUSTER=1 --run t4:BN=200,CLUSTER=4 --rounds 5
trials_end
