#!/usr/bin/env bash
# Where the issue slots go, per SASS instruction (gpulab profile --sass --sass-csv, stall samples by
# reason): sgemm v13 and gemm_bf16 t4 at 4096^3. And the ring depth of v13 (STAGES 2, 3, 4 at BK=16;
# never tuned beyond 2), alternating with cuBLAS at 4096^3, 8192^3 and 2048^3. Logs go to
# $OUT/stalls/. summary.txt first.
# Usage: bash scripts/device_trial.sh stalls:330
set -u
source scripts/device_step.sh
trials_begin stalls 320
trial sass_v13 70 gpulab profile sgemm v13 -p S=16 --size 4096 --sass --sass-csv "$dir/v13_4096_sass.csv" --csv "$dir/profile.csv"
trial sass_t4 60 gpulab profile gemm_bf16 t4 --size 4096 --sass --sass-csv "$dir/t4_4096_sass.csv" --csv "$dir/profile.csv"
trial ab4096 60 python3 notebook/probes/ab_rungs.py sgemm 4096x4096x4096 --rounds 3 --run v13:S=16 --run v13:S=16,STAGES=3 --run v13:S=16,STAGES=4
trial ab8192 90 python3 notebook/probes/ab_rungs.py sgemm 8192x8192x8192 --rounds 3 --run v13:S=16 --run v13:S=16,STAGES=3
trial ab2048 40 python3 notebook/probes/ab_rungs.py sgemm 2048x2048x2048 --rounds 3 --run v13 --run v13:STAGES=3 --run v13:STAGES=4
trials_end
