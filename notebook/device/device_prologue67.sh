#!/usr/bin/env bash
# t4 STAGING=1 as a prologue (all threads of every block pad A and Bt before the first tile, then a
# grid-wide barrier): its GPU tests, then timed in alternation with the copy before the launch and
# cuBLAS at the staged shapes, and cuBLAS at the nearest aligned one.
# Logs in $OUT/prologue67/. Usage: bash scripts/device_trial.sh prologue67:500
set -u
source scripts/device_step.sh
trials_begin prologue67 495
TAIL=8 trial tests 170 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py -k "staging_in_kernel"
TAIL=10 trial ab777 110 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x777 --rounds 7 \
    --run t4:BN=192,CLUSTER=1,EDGE=2 --run t4:BN=192,CLUSTER=1,EDGE=2,STAGING=1 \
    --run t4:BN=200,CLUSTER=4,STAGING=1 --run t4:BN=192,CLUSTER=2,STAGING=1 --run t4:BN=256,CLUSTER=1,STAGING=1
TAIL=4 trial ab776 40 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x776 --rounds 7 --run t4:BN=200,CLUSTER=4
TAIL=6 trial ab4097 100 python3 notebook/probes/ab_rungs.py gemm_bf16 4097x4097x4097 --rounds 4 \
    --run t4:EDGE=2 --run t4:EDGE=2,STAGING=1
TAIL=6 trial ab_mid 60 python3 notebook/probes/ab_rungs.py gemm_bf16 2050x1921x777 --rounds 5 \
    --run t4:EDGE=2 --run t4:EDGE=2,STAGING=1 --run t4:BN=192,CLUSTER=1,EDGE=2,STAGING=1
trials_end
