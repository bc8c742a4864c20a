#!/usr/bin/env bash
# Why t4's stream-K tail (SCHEDULE=1) measured 5% slower at 4096^3 where it should gain ~3%: both
# schedules under Nsight Compute side by side, each per SASS instruction, and both timed in
# alternation with cuBLAS. Logs and CSVs in $OUT/sk5/. Usage: bash scripts/device_trial.sh sk5:330
set -u
source scripts/device_step.sh
trials_begin sk5 320
S=4096x4096x4096
TAIL=60 trial compare 100 gpulab compare gemm_bf16 t4 t4:SCHEDULE=1 --shape $S --csv "$dir/profile.csv"
TAIL=30 trial sass1 70 gpulab profile gemm_bf16 t4:SCHEDULE=1 --shape $S --sass --sass-csv "$dir/sass_s1.csv" --csv "$dir/profile.csv"
TAIL=30 trial sass0 70 gpulab profile gemm_bf16 t4 --shape $S --sass --sass-csv "$dir/sass_s0.csv" --csv "$dir/profile.csv"
TAIL=12 trial ab 80 python3 notebook/probes/ab_rungs.py gemm_bf16 $S 8192x8192x8192 --run t4 --run t4:SCHEDULE=1 --rounds 5
trials_end
