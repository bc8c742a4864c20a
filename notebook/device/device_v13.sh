#!/usr/bin/env bash
# The H200 trial of sgemm v13 (v11's tiles in whole waves, only the last partial wave's tiles split
# along K): one script, every step under a timeout, going on past a failing step. Run from the repo
# root after `source scripts/device_setup.sh`; logs go to $OUT/v13/. Read summary.txt first.
#   compile  NVRTC 13.0's ptxas: v13's configs and v11's tuned one: registers, spills, FFMA bank
#            collisions in the main loop (scripts/sass_banks.py)
#   tests    tests/gpu/test_split_tail_gpu.py and v13's rows of test_sgemm_gpu.py (every plan and path,
#            random and exact, same bits every launch, counters left zero)
#   ab       v11 (tuned) against v13 (default, and S=16) with cuBLAS, alternating, 5 rounds, at 4096^3, 8192^3,
#            2048^3 (notebook/probes/ab_rungs.py)
#   bench    gpulab bench v13 at the other default shapes, cuBLAS beside (bench.csv)
# Usage: source scripts/device_setup.sh && bash notebook/device/device_v13.sh  (or: bash scripts/device_trial.sh v13:400)
set -u
source scripts/device_step.sh
trials_begin v13 390
V11="v11:BM=64,BN=128,BK=16,WM=32,WN=64,WNITER=2,STAGES=2,MINB=1"

trial compile 40 python3 scripts/sass_banks.py sgemm v13 MINB=1,3 --loops 4
trial compile_v11 20 python3 scripts/sass_banks.py sgemm v11 BM=64 BN=128 BK=16 WM=32 WN=64 WNITER=2 STAGES=2 MINB=1
trial tests 100 python3 -m pytest -m gpu -q -x -n 8 -p no:cacheprovider tests/gpu/test_split_tail_gpu.py \
    tests/gpu/test_sgemm_gpu.py -k "v13 or split_tail"
if ! grep -q " tests " <<<" $FAILED "; then
    trial ab 200 python3 notebook/probes/ab_rungs.py sgemm 4096x4096x4096 8192x8192x8192 2048x2048x2048 \
        --run "$V11" --run v13 --run v13:S=16 --rounds 5
    trial bench 80 gpulab bench sgemm --variant v13 --size 1024,4000,4097 --shape 1000x3000x777 --out "$dir/bench.csv"
else
    echo "ab and bench skipped: the tests failed" >>"$dir/summary.txt"
fi
trials_end
