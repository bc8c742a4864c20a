#!/usr/bin/env bash
# The session's last call: t4 tuned at 1000x3000x776 beside 4096^3 (so `best` has the small ragged
# class), the best row and t4 against cuBLAS at the BF16 target shapes, t4's fidelity rows again on
# the final source (default and PINGPONG=1 BN=128 STORE=0), then every GPU test. Results in
# results/<gpu>/; logs in $OUT/final4/. Usage: bash scripts/device_trial.sh final4:560
source scripts/device_step.sh
dir=$OUT/final4; mkdir -p "$dir"
TAIL=14 step tune 110 gpulab tune gemm_bf16 t4 --shape 4096x4096x4096 --shape 1000x3000x776 \
    -p BN=128,256 -p STAGES=4,6 -p CLUSTER=1,2 -p PINGPONG=0,1 -p STORE=1 -p GROUP_M=8 -p SCHEDULE=0
TAIL=20 step bench 90 gpulab bench gemm_bf16 --variant t4,best --shape 1000x3000x777 --shape 1000x3000x776 \
    --shape 4097x4097x4097 --shape 4000x4000x4000 --shape 2048x2048x2048 --shape 4096x4096x4096 --shape 8192x8192x8192
TAIL=6 step fidelity 60 gpulab fidelity gemm_bf16 --variant t4 --shapes both
TAIL=6 step fidelity_cfg 50 gpulab fidelity gemm_bf16 --variant t4 --shapes both \
    -p STORE=0 -p BN=128 -p STAGES=6 -p PINGPONG=1
TAIL=12 step pytest_gpu 200 python3 -m pytest -m "gpu and not exclusive" -q -n 16 -p no:cacheprovider --maxfail=30
TAIL=4 step pytest_exclusive 45 python3 -m pytest -m "gpu and exclusive" -q -p no:xdist -p no:cacheprovider
