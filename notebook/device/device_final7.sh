#!/usr/bin/env bash
# This session's closing device call: every GPU test on the final tree (v13, split_k.cuh's flag
# through the barrier, best rows keyed by shape), the exclusive tests, and v11 -> v13 under ncu at
# 4096^3 on the fixed ring for the README. Usage: bash scripts/device_trial.sh final7:560
source scripts/device_step.sh
dir=$OUT/final7; mkdir -p "$dir"
TAIL=12 step pytest_gpu 330 python3 -m pytest -m "gpu and not exclusive" -q -n 16 -p no:cacheprovider --maxfail=30
TAIL=4 step pytest_exclusive 60 python3 -m pytest -m "gpu and exclusive" -q -p no:xdist -p no:cacheprovider
TAIL=60 step compare 90 gpulab compare sgemm v11 v13 --param-a BM=64 --param-a BN=128 --param-a BK=16 --param-a WM=32 \
    --param-a WN=64 --param-a WNITER=2 --param-a STAGES=2 --param-a MINB=1 --size 4096
