#!/usr/bin/env bash
# After `gpulab profile EXP cublas` and the tuned-defaults bound: the whole GPU suite on this tree, the
# library's call under --sass/--full, and v13 at its default (the 2048^3 tune's S=8) beside cuBLAS at 2048^3,
# joined to results/h200/profile.csv. Logs go to $OUT/libprof2/.
# Usage: bash scripts/device_trial.sh libprof2:560
set -u
source scripts/device_step.sh
trials_begin libprof2 550
TAIL=60 trial fp32_2048 40 gpulab compare sgemm v13 cublas --size 2048
TAIL=30 trial suite 420 python3 -m pytest -q -p no:cacheprovider -m "gpu and not exclusive" -n 16 tests/gpu
trials_end
