#!/usr/bin/env bash
# t4's consumer k loop made lean (consume_k_tiles: the consumer index a template argument, so its
# descriptors and barrier addresses are uniform; the slot's release one predicated pair; ~40 SASS
# instructions per k-tile and warp against 80): the tensor-core and gemm_bf16 GPU tests, then t4
# against itself before the change (notebook/patches/t4_lean_loop.patch reversed) in alternation with
# cuBLAS. Run on 2026-12-01 with the change in the tree (at ffce02c); not landed, so the patch applies
# to t4 as of ffce02c (forward, not reversed as here). Usage: bash scripts/device_trial.sh lean:420
set -u
source scripts/device_step.sh
patch -R -s -o /tmp/t4_before.cu src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu notebook/patches/t4_lean_loop.patch
trials_begin lean 410
TAIL=6 trial wgmma 70 python3 -m pytest -q -p no:cacheprovider -n 16 -m gpu tests/gpu/test_wgmma_gpu.py
TAIL=16 trial ab 150 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 2048x2048x2048 8192x8192x8192 \
    --run t4@/tmp/t4_before.cu --run t4 --rounds 5
TAIL=8 trial ab4097 60 python3 notebook/probes/ab_rungs.py gemm_bf16 4097x4097x4097 \
    --run t4@/tmp/t4_before.cu:SCHEDULE=1 --run t4:SCHEDULE=1 --rounds 3
TAIL=6 trial tests 130 python3 -m pytest -q -p no:cacheprovider -n 16 -m "gpu and not exclusive" \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_skinny_gpu.py tests/gpu/test_profile_gpu.py
trials_end
