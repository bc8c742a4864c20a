#!/usr/bin/env bash
# The last tree of stop 14 (v13's model by rectangles, occupancy_columns, upsert_runs): the profiling GPU tests
# (they write profile.csv through upsert_runs), v13's fidelity again on this exact tree, and a bench row of v13
# (the plan note's path). Logs go to $OUT/final14/.
# Usage: bash scripts/device_trial.sh final14:215
set -u
source scripts/device_step.sh
trials_begin final14 205
TAIL=8 trial fidelity 45 gpulab fidelity sgemm -v v13
TAIL=12 trial bench 30 gpulab bench sgemm --variant v13 -p WM=64 -p RESIDENT=3 --size 1024 --out "$dir/bench.csv"
TAIL=8 trial tests 125 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_profile_gpu.py
trials_end
