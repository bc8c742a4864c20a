#!/usr/bin/env bash
# Ragged gemm_bf16 shapes: t4's epilogue for N % 4 != 0 (shared memory, copied out by rows), the
# staging copy with aligned 16-byte loads (old and new timed alone), which box starts TMA takes
# (notebook/probes/probe_tma_maps.py), the BF16 GPU tests, then t3/t4 against cuBLAS at the ragged shapes,
# their aligned neighbours, and 4097x4097x4104 (4097^3's tiles without the staging: its cost).
# Usage: bash scripts/device_trial.sh ragged:480
source scripts/device_step.sh
dir=$OUT/ragged; mkdir -p "$dir"
TAIL=12 step tmaprobe 60 python3 notebook/probes/probe_tma_maps.py
TAIL=6 step pad_old 40 python3 notebook/probes/time_pad_k.py scripts/_pad_k_old.cu
TAIL=6 step pad_new 40 python3 notebook/probes/time_pad_k.py
TAIL=15 step bf16_gpu 170 python3 -m pytest -q -n 16 -p no:cacheprovider --maxfail=20 \
    tests/gpu/test_wgmma_gpu.py tests/gpu/test_gemm_bf16_gpu.py
TAIL=25 step bench 150 gpulab bench gemm_bf16 --variant t3,t4 --shape 4097x4097x4097 --shape 1000x3000x777 \
    --shape 1000x3000x776 --shape 4000x4000x4000 --shape 4096x4096x4096
TAIL=12 step bench_k8 60 gpulab bench gemm_bf16 --variant t4 --shape 4097x4097x4104 --out "$dir/k8.csv"
