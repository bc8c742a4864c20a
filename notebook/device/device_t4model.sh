#!/usr/bin/env bash
# t4's epilogue store order (groups in the order g ^ (row % 4)) timed against the previous source
# (_ab_before.cu beside it: `git show dd3238b:src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu`;
# alternating rounds, cuBLAS in each), the BF16 GPU tests, and t4's new access model
# held to Nsight Compute: `gpulab fidelity` at its shapes (default config, STORE=0, PINGPONG=1)
# into $OUT/t4model/fidelity.csv (copied into results/ by hand once the source is settled).
# Usage: bash scripts/device_trial.sh t4model:560
source scripts/device_step.sh
dir=$OUT/t4model; mkdir -p "$dir"
TAIL=6 step ab 170 python3 notebook/probes/ab_variant.py gemm_bf16 t4 src/gpulab/experiments/gemm_bf16/_ab_before.cu \
    4096x4096x4096 8192x8192x8192 --rounds 7
TAIL=10 step bf16_gpu 150 python3 -m pytest -q -n 16 -p no:cacheprovider --maxfail=20 \
    tests/gpu/test_wgmma_gpu.py tests/gpu/test_gemm_bf16_gpu.py
TAIL=40 step fidelity 100 gpulab fidelity gemm_bf16 --variant t4 --shapes both --out "$dir/fidelity.csv"
TAIL=40 step fidelity_cfg 100 gpulab fidelity gemm_bf16 --variant t4 --shapes both --out "$dir/fidelity.csv" \
    -p STORE=0 -p BN=128 -p STAGES=6 -p PINGPONG=1
