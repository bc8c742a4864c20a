#!/usr/bin/env bash
# The last check of this session: every non-exclusive GPU test on the tree after the review's mends
# (v12's and v13's GPU tests merged into test_split_schedules_gpu.py, v13's TailPlan). The exclusive
# tests passed on the tree before (device_final7.sh) and nothing they run changed.
# Usage: bash scripts/device_trial.sh final8:300
source scripts/device_step.sh
dir=$OUT/final8; mkdir -p "$dir"
TAIL=8 step pytest_gpu 290 python3 -m pytest -m "gpu and not exclusive" -q -n 16 -p no:cacheprovider --maxfail=30
