#!/usr/bin/env bash
# t4 STAGING=1 (the producer's idle warps pad A and Bt inside the launch, ahead of the loads): its GPU
# tests and the staged rung tests, then t4 in alternation with STAGING 0 and 1 at the two staged
# target shapes (their tuned picks), and cuBLAS at the nearest aligned shapes for the targets.
# Logs in $OUT/stagein61/. Usage: bash scripts/device_trial.sh stagein61:330
# The change is notebook/patches/t4_staging_in_kernel.patch (git apply, on 3eb2822): it was not kept
# (docs/notes/gemm_bf16-notes.md, "The staging copy inside t4").
set -u
source scripts/device_step.sh
trials_begin stagein61 325
TAIL=12 trial tests 110 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_wgmma_gpu.py -k "staging or 777 or 4097 or 65 or 37"
TAIL=5 trial ab_777 40 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x777 --rounds 7 \
    --run t4:BN=192,CLUSTER=1,EDGE=2 --run t4:BN=192,CLUSTER=1,EDGE=2,STAGING=1 \
    --run t4:BN=200,CLUSTER=4,STAGING=1 --run t4:BN=192,CLUSTER=2,STAGING=1
TAIL=5 trial ab_4097 70 python3 notebook/probes/ab_rungs.py gemm_bf16 4097x4097x4097 --rounds 5 \
    --run t4:EDGE=2 --run t4:EDGE=2,STAGING=1 --run t4:EDGE=2,STAGING=1,SCHEDULE=1
TAIL=5 trial ab_aligned 40 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x776 4096x4096x4096 --rounds 5 \
    --run t4:BN=200,CLUSTER=4
trials_end
