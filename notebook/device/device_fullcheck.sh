#!/usr/bin/env bash
# Is `gpulab profile sgemm cublas --full --sass` at 256^3 failing by itself, or only beside other GPU tests
# (it failed once under pytest -n 8 with ncu 'LaunchFailed', and passed under -n 16 before)? Three runs
# alone, full output kept. Logs go to $OUT/fullcheck/.
# Usage: bash scripts/device_trial.sh fullcheck:200
set -u
source scripts/device_step.sh
trials_begin fullcheck 190
for i in 1 2 3; do
    TAIL=6 trial "full$i" 50 gpulab profile sgemm cublas --size 256 --full --out "$dir/r$i" --sass \
        --sass-csv "$dir/s$i.csv" --csv "$dir/p.csv"
done
TAIL=6 trial plain 30 gpulab profile sgemm cublas --size 256 --csv "$dir/p.csv"
trials_end
