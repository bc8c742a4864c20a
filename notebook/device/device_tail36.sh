#!/usr/bin/env bash
# t4 issuing only the k16 slices of K's last k-tile that hold part of K (notebook/patches/
# t4_tail_slices.patch, as committed): the Hopper GPU tests and sgemm's v14 (t4 under TF32), then
# the change timed against the source before it (the patch reversed) in alternation with cuBLAS at
# the ragged-K shapes it touches and at 4096^3, which it must leave alone. Also: which t4 launch
# racecheck faults on (notebook/probes/probe_t4_racecheck.py), and what cuBLAS runs at 1000x3000x776.
# Logs in $OUT/tail36/. Usage: bash scripts/device_trial.sh tail36:540
set -u
source scripts/device_step.sh
patch -R -s -o /tmp/t4_before.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_tail_slices.patch
trials_begin tail36 530
TAIL=8 trial tests 160 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_wgmma_gpu.py tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_tf32_split_gpu.py \
    tests/gpu/test_sgemm_gpu.py -k "not test_sgemm_gpu or v14"
TAIL=12 trial ab_small 80 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x777 1000x3000x776 \
    --run t4@/tmp/t4_before.cu:BN=192,CLUSTER=1 --run t4:BN=192,CLUSTER=1 \
    --run t4@/tmp/t4_before.cu:BN=192,CLUSTER=2 --run t4:BN=192,CLUSTER=2 --rounds 7
TAIL=12 trial ab_4097 60 python3 notebook/probes/ab_rungs.py gemm_bf16 4097x4097x4097 \
    --run t4@/tmp/t4_before.cu:BN=192 --run t4:BN=192 --rounds 4
TAIL=12 trial ab_4096 70 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 \
    --run t4@/tmp/t4_before.cu --run t4 --rounds 4
TAIL=12 trial racecheck 110 python3 notebook/probes/probe_t4_racecheck.py --timeout 60
TAIL=12 trial vendor 50 python3 scripts/probe_vendor_kernels.py gemm_bf16 1000x3000x776 --run t4:BN=192
trials_end
