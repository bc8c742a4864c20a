#!/usr/bin/env bash
# Second H200 trial of gemm_bf16 t4 SCHEDULE=1 (the stream-K tail), after its exact steps passed on
# 2026-12-01 (device_sk4.sh; its flags step ran out of its 20 s before pytest printed anything):
#   bench_square  SCHEDULE=0,1 at the tuned tile (BN=256, 4 stages) with cuBLAS, at 2048^3, 4096^3, 8192^3
#   bench_ragged  SCHEDULE=0,1 x BN=128 (6 stages) / 256 (4 stages) at 4000^3, 4097^3, 1000x3000x777
#                 and 1000x3000x776 (with BN=128 those shapes have more cluster tiles than clusters,
#                 so the tail is split there too)
#   flags, pytest the stream-K GPU tests, with time enough for their compiles
# CSVs in $OUT/sk4b/ (not results/). Usage: bash scripts/device_trial.sh sk4b:170
set -u
OUT=${OUT:-/tmp/gpulab-out}
dir=$OUT/sk4b; mkdir -p "$dir"
: >"$dir/summary.txt"
source scripts/device_step.sh
BUDGET=165
FAILED=""
PIN="-p GROUP_M=8 -p CLUSTER=2 -p STORE=1 -p PINGPONG=0 -p SCHEDULE=0,1"
trial bench_square 50 gpulab bench gemm_bf16 --variant t4 -p BN=256 -p STAGES=4 $PIN \
    --shape 2048x2048x2048 --shape 4096x4096x4096 --shape 8192x8192x8192 --out "$dir/square.csv"
trial bench_ragged 50 gpulab bench gemm_bf16 --variant t4 -p BN=128,256 -p STAGES=4,6 $PIN \
    --shape 4000x4000x4000 --shape 4097x4097x4097 --shape 1000x3000x777 --shape 1000x3000x776 --out "$dir/ragged.csv"
trial flags 30 python3 -m pytest -q -x -m gpu tests/gpu/test_wgmma_gpu.py -k "clears_its_flags"
trial pytest 35 python3 -m pytest -q -x -m gpu tests/gpu/test_wgmma_gpu.py -k "stream_k"
echo "failed steps:${FAILED:- none}" >>"$dir/summary.txt"
cat "$dir/summary.txt"
