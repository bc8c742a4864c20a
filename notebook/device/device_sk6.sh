#!/usr/bin/env bash
# t4's stream-K tail taken head first, k-aligned (WorkList), on the H200: its GPU tests, a capture
# beside SCHEDULE=0 at 4096^3 (did the DRAM reads fall back?), and both timed in alternation with
# cuBLAS at the squares and the ragged shapes. Logs in $OUT/sk6/. Usage: bash scripts/device_trial.sh sk6:420
set -u
source scripts/device_step.sh
trials_begin sk6 410
TAIL=6 trial tests 120 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/gpu/test_wgmma_gpu.py -k "stream_k"
TAIL=45 trial compare 60 gpulab compare gemm_bf16 t4 t4:SCHEDULE=1 --shape 4096x4096x4096 --csv "$dir/profile.csv"
TAIL=12 trial ab_square 130 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 8192x8192x8192 --run t4 --run t4:SCHEDULE=1 --rounds 4
TAIL=12 trial ab_ragged 90 python3 notebook/probes/ab_rungs.py gemm_bf16 4000x4000x4000 4097x4097x4097 --run t4 --run t4:SCHEDULE=1 --rounds 3
trials_end
