#!/usr/bin/env bash
# v13's new access model against Nsight Compute (gpulab fidelity sgemm -v v13: 512^3, where every tile is cut
# into 8 slices, 300x388x196 in 3, 129x67x33 whole), joined to results/h200/fidelity.csv; then the whole GPU
# suite on the final tree. Logs go to $OUT/final13/.
# Usage: bash scripts/device_trial.sh final13:560
set -u
source scripts/device_step.sh
trials_begin final13 550
TAIL=40 trial fidelity 200 gpulab fidelity sgemm -v v13
TAIL=8 trial suite 330 python3 -m pytest -q -p no:cacheprovider -m "gpu and not exclusive" -n 16 tests/gpu
trials_end
