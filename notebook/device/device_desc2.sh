#!/usr/bin/env bash
# t4 with its wgmma descriptors built by one addition each from the first slot's (hopper.cuh's
# desc_k_major_sw128_low/_of; 80 instead of 100 SASS instructions per k-tile and warp): the
# tensor-core and gemm_bf16 GPU tests, t4's fidelity rows for both recorded configs, and t4 against
# itself before the change (t4's part reversed: notebook/patches/t4_desc_tree.patch) in alternation
# with cuBLAS, more rounds than device_desc.sh. Run on 2026-12-01 with the change in the tree; it is
# t4's and hopper.cuh's own since.
# Usage: bash scripts/device_trial.sh desc2:420
set -u
source scripts/device_step.sh
patch -R -s -o /tmp/t4_before.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_desc_tree.patch
trials_begin desc2 410
TAIL=6 trial wgmma 60 python3 -m pytest -q -p no:cacheprovider -n 16 -m gpu tests/gpu/test_wgmma_gpu.py
TAIL=6 trial tests 130 python3 -m pytest -q -p no:cacheprovider -n 16 -m "gpu and not exclusive" \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_skinny_gpu.py tests/gpu/test_profile_gpu.py
TAIL=16 trial ab 120 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 2048x2048x2048 8192x8192x8192 \
    --run t4@/tmp/t4_before.cu --run t4 --rounds 5
TAIL=6 trial fidelity 70 gpulab fidelity gemm_bf16 --variant t4 --shapes both
TAIL=6 trial fidelity_cfg 60 gpulab fidelity gemm_bf16 --variant t4 --shapes both \
    -p STORE=0 -p BN=128 -p STAGES=6 -p PINGPONG=1
trials_end
