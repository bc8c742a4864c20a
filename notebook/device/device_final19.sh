#!/usr/bin/env bash
# t4 with the unrolled copy-out epilogue (its source changed): the tensor-core GPU tests, t4's fidelity
# rows again (default and PINGPONG=1 BN=128 STORE=0), and t4 and best against cuBLAS at 4097^3, the
# odd-N shape of the README's tables. Results in results/<gpu>/; logs in $OUT/final19/.
# Usage: bash scripts/device_trial.sh final19:380
set -u
source scripts/device_step.sh
trials_begin final19 370
TAIL=6 trial tests 130 python3 -m pytest -q -p no:cacheprovider -n 16 -m gpu tests/gpu/test_wgmma_gpu.py
TAIL=6 trial fidelity 70 gpulab fidelity gemm_bf16 --variant t4 --shapes both
TAIL=6 trial fidelity_cfg 60 gpulab fidelity gemm_bf16 --variant t4 --shapes both \
    -p STORE=0 -p BN=128 -p STAGES=6 -p PINGPONG=1
TAIL=12 trial bench_t4 40 gpulab bench gemm_bf16 --variant t4 -p SCHEDULE=0 --shape 4097x4097x4097
TAIL=12 trial bench_best 40 gpulab bench gemm_bf16 --variant best --shape 4097x4097x4097
trials_end
