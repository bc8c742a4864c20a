#!/usr/bin/env bash
# t4 with the head-first stream-K order (its source changed, so everything of t4 again): its fidelity
# rows (default and PINGPONG=1 BN=128 STORE=0), a tune of SCHEDULE=0,1 at the BF16 target shapes (the
# best row then takes the stream-K tail where it pays), t4 and best against cuBLAS at every gemm_bf16
# shape, and the tensor-core GPU tests. Results in results/<gpu>/; logs in $OUT/final15/.
# Usage: bash scripts/device_trial.sh final15:560
set -u
source scripts/device_step.sh
trials_begin final15 550
TAIL=6 trial fidelity 70 gpulab fidelity gemm_bf16 --variant t4 --shapes both
TAIL=6 trial fidelity_cfg 60 gpulab fidelity gemm_bf16 --variant t4 --shapes both \
    -p STORE=0 -p BN=128 -p STAGES=6 -p PINGPONG=1
TAIL=14 trial tune 120 gpulab tune gemm_bf16 t4 --shape 4096x4096x4096 --shape 8192x8192x8192 \
    --shape 4097x4097x4097 --shape 4000x4000x4000 --shape 1000x3000x776 \
    -p BN=256 -p STAGES=4 -p CLUSTER=2 -p PINGPONG=0 -p STORE=1 -p GROUP_M=8 -p SCHEDULE=0,1
TAIL=24 trial bench 120 gpulab bench gemm_bf16 --variant t4,best --shape 512x512x512 --shape 1024x1024x1024 \
    --shape 1000x3000x777 --shape 1000x3000x776 --shape 4097x4097x4097 --shape 4000x4000x4000 \
    --shape 2048x2048x2048 --shape 4096x4096x4096 --shape 8192x8192x8192
TAIL=6 trial tests 150 python3 -m pytest -q -p no:cacheprovider -n 8 -m gpu tests/gpu/test_wgmma_gpu.py
trials_end
