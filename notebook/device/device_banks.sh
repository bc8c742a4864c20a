#!/usr/bin/env bash
# Which register-bank model the H200's dispatch stalls follow: per-SASS-instruction stall samples
# (gpulab profile --sass --sass-csv) of the hot loops of sgemm v9 at its default config (812 FFMA
# with two reads in one even/odd bank per 1,024, by scripts/sass_banks.py) and v11 at its default 64x256x8 (255 registers), at
# 4096^3, and v13 again at 8192^3 (the same loop as at 4096^3: are the same FFMAs stalled?).
# scripts/bank_stalls.py joins them with the local NVRTC 13.0 disassembly. Logs go to $OUT/banks/.
# Usage: bash scripts/device_trial.sh banks:200
set -u
source scripts/device_step.sh
trials_begin banks 190
trial sass_v9 60 gpulab profile sgemm v9 --size 4096 --sass --sass-csv "$dir/v9_4096_sass.csv" --csv "$dir/profile.csv"
trial sass_v11 60 gpulab profile sgemm v11 --size 4096 --sass --sass-csv "$dir/v11_4096_sass.csv" --csv "$dir/profile.csv"
trial sass_v13_8192 70 gpulab profile sgemm v13 -p S=16 --size 8192 --sass --sass-csv "$dir/v13_8192_sass.csv" --csv "$dir/profile.csv"
trials_end
