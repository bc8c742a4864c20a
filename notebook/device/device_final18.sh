#!/usr/bin/env bash
# The last tree: profile and compare now probe the card for their CSV before any capture; the profiling
# GPU tests, a profile into the default results/<gpu>/profile.csv (in a scratch copy of results/), and
# a compare of v13 with cuBLAS at 512^3, where cuBLAS's call is two kernels. Logs in $OUT/final18/.
# Usage: bash scripts/device_trial.sh final18:200
set -u
source scripts/device_step.sh
trials_begin final18 190
mkdir -p "$dir/work" && cp -r results "$dir/work/"
TAIL=6 trial profile 40 bash -c "cd '$dir/work' && gpulab profile sgemm v9 --size 512 | tail -3 && ls results/*/profile.csv"
TAIL=40 trial compare 50 gpulab compare sgemm v13 cublas --size 512 --csv "$dir/compare.csv"
TAIL=6 trial tests 100 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_profile_gpu.py
trials_end
