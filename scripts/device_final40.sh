#!/usr/bin/env bash
# The GPU suite on this session's final tree (the access model's TMA byte rule changed; no kernel
# source did). Logs in $OUT/final40/. Usage: bash scripts/device_trial.sh final40:420
set -u
source scripts/device_step.sh
trials_begin final40 410
TAIL=15 trial gpu_suite 350 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=8 trial exclusive 55 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m "gpu and exclusive" tests/gpu
trials_end
