#!/usr/bin/env bash
# The flat staging copy with its rows staged last-first (pad_k.cu ORDER=1, so that the rows t4's
# first tiles read are the last written and may still be in L2; the per-row rewrite gained 1.2 us at
# 4097^3 that way, device_stage54.sh): the copy's GPU test in both orders and the staged rung tests,
# t4 in alternation behind both orders, the copy alone, and the bench rows at the staged shapes.
# The order is notebook/patches/pad_k_order.patch (git apply, on 8190526): it was not kept.
# Logs in $OUT/order57/. Usage: bash scripts/device_trial.sh order57:235
set -u
source scripts/device_step.sh
trials_begin order57 230
TAIL=6 trial tests 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_wgmma_gpu.py tests/gpu/test_gemm_bf16_gpu.py -k "staging or 777 or 4097 or 137 or 65 or 37"
D="--defines ORDER=0 --defines ORDER=1"
TAIL=4 trial ab_4097 50 python3 scripts/ab_staging.py 4097x4097x4097 --run t4:EDGE=2 $D --rounds 5
TAIL=4 trial ab_777 25 python3 scripts/ab_staging.py 1000x3000x777 --run t4:BN=192,CLUSTER=1,EDGE=2 $D --rounds 7
TAIL=4 trial alone 20 python3 notebook/probes/time_pad_k.py
TAIL=14 trial bench 35 gpulab bench gemm_bf16 --variant t2,t3,t4,best --shape 4097x4097x4097 --shape 1000x3000x777
trials_end
