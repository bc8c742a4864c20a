#!/usr/bin/env bash
# The session's last measurements (2026-12-02): t4 tuned over BN 192 and 256 on seven shapes (its five
# plus 2048^3, where t3's new tune would otherwise give the best row to t3, and 1000x3000x777, where
# CLUSTER 1 ran faster in device_bn192.sh), every gemm_bf16 rung benched at the default shapes with its
# tuned config (t0, t1 and t3 are newly tuned) and cuBLAS beside, then the gemm_bf16, skinny and
# profile GPU tests. Logs go to $OUT/final23/.
# Usage: bash scripts/device_trial.sh final23:560
set -u
source scripts/device_step.sh
trials_begin final23 550
trial tune 100 gpulab tune gemm_bf16 t4 -p BN=192,256 -p STAGES=4 -p GROUP_M=8 -p STORE=1 -p PINGPONG=0 \
    --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 4097x4097x4097 --shape 4000x4000x4000 \
    --shape 1000x3000x776 --shape 2048x2048x2048 --shape 1000x3000x777
TAIL=60 trial bench 260 gpulab bench gemm_bf16
TAIL=4 trial tests 170 python3 -m pytest -q -p no:cacheprovider -n 16 -m "gpu and not exclusive" \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_skinny_gpu.py tests/gpu/test_profile_gpu.py
trials_end
