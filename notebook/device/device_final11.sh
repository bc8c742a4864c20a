#!/usr/bin/env bash
# The session's last call: the vendor library benched alone (bench --variant cublas), the two exclusive GPU
# tests (not under -n), and what cuBLAS BF16 runs at the ragged 4097^3, where it falls to a fifth of its
# 4096^3 rate (gpulab compare gemm_bf16 t4 cublas, joined to results/h200/profile.csv). Logs go to $OUT/final11/.
# Usage: bash scripts/device_trial.sh final11:300
set -u
source scripts/device_step.sh
trials_begin final11 290
TAIL=20 trial bench_cublas 60 gpulab bench sgemm --variant cublas --size 512 --out "$dir/bench.csv"
TAIL=10 trial exclusive 120 python3 -m pytest -q -p no:cacheprovider -m exclusive tests/gpu
TAIL=12 trial gemv 40 gpulab profile sgemm cublas --shape 1x8192x8192 --csv "$dir/scratch.csv"
TAIL=70 trial bf16_4097 90 gpulab compare gemm_bf16 t4 cublas --shape 4097x4097x4097
trials_end
