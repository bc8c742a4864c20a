#!/usr/bin/env bash
# final63 again with room: its parallel part passed 2,522 of 2,528 tests and had 6 still running when
# its 320 s ran out (H200, 2026-12-02). The same tree, a longer limit, the slowest tests named.
# Logs in $OUT/final64/. Usage: bash scripts/device_trial.sh final64:470
set -u
source scripts/device_step.sh
trials_begin final64 465
TAIL=24 trial gpu_suite 455 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 --durations=12 \
    -m "gpu and not exclusive" tests/gpu
trials_end
