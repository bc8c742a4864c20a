#!/usr/bin/env bash
# The last look on the card: gpulab ceilings on bad days (a truncated ceilings.csv; Ctrl-C while it
# measures the tensor rows a file lacks), each leaving the file byte-identical and exiting non-zero,
# then the GPU suite on this exact tree. Logs in $OUT/final34/.
# Usage: bash scripts/device_trial.sh final34:540
set -u
source scripts/device_step.sh
trials_begin final34 535
INTERRUPT_AFTER=6 source notebook/device/device_ceilings_bad_days.sh
TAIL=15 trial gpu_suite 340 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=8 trial exclusive 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m "gpu and exclusive" tests/gpu
trials_end
