#!/usr/bin/env bash
# The whole GPU suite on the committed tree (the last stop ran only the tensor-core and gemm_bf16
# parts), then t4 traced unit by unit where it trails cuBLAS most among the aligned shapes: few
# tiles (1000x3000x776: 48 cluster tiles for 66 clusters, 13 k-tiles) and 2048^3 (64 tiles, 32 k-tiles).
# Usage: bash scripts/device_trial.sh full17:480
set -u
source scripts/device_step.sh
trials_begin full17 470
TAIL=8 trial gpu 330 python3 -m pytest -q -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=4 trial exclusive 90 python3 -m pytest -q -p no:cacheprovider -m "gpu and exclusive" tests/gpu
TAIL=40 trial trace 40 python3 scripts/trace_t4.py 1000x3000x776 2048x2048x2048 \
    --summary notebook/probes/trace-t4-small.csv --events "$dir/events-small.csv"
trials_end
