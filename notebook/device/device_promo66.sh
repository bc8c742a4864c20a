#!/usr/bin/env bash
# Whether the TMA maps' L2 promotion (256-byte lines until now) is where t4's extra L2 traffic at
# 4096^3 comes from: Nsight Compute's L2 counters for t4 under promotions of 256, 128 and none and
# for cuBLAS, then t4 timed in alternation with cuBLAS under each promotion at the target shapes.
# Logs and CSV in $OUT/promo66/. Usage: bash scripts/device_trial.sh promo66:420
set -u
source scripts/device_step.sh
trials_begin promo66 415
TAIL=12 trial l2 150 python3 notebook/probes/probe_l2_traffic.py 4096x4096x4096 --run t4:EDGE=0 --promotions 256,128,0 \
    --csv "$dir/l2-traffic-4096.csv"
TAIL=8 trial ab4096 90 python3 notebook/probes/ab_promotion.py 4096x4096x4096 --run t4:EDGE=0 --promotions 256,128,64,0 --rounds 7
TAIL=8 trial ab_small 70 python3 notebook/probes/ab_promotion.py 1000x3000x776 --run t4:BN=200,CLUSTER=4 --promotions 256,128,0 --rounds 7
TAIL=8 trial ab_2048 40 python3 notebook/probes/ab_promotion.py 2048x2048x2048 --run t4:CLUSTER=1 --promotions 256,128,0 --rounds 5
TAIL=8 trial ab_8192 80 python3 notebook/probes/ab_promotion.py 8192x8192x8192 --run t4:EDGE=0,SCHEDULE=1 --promotions 256,128,0 --rounds 3
trials_end
