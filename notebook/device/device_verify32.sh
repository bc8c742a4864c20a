#!/usr/bin/env bash
# Which cluster operation racecheck faults on, now with TMA copies: scripts/probe_cluster_sanitizer.py
# (six minimal cluster kernels, each alone under each tool; rungs31 ran the first four, all clean),
# then the GPU suite on this tree (the TF32 ceiling, the per-variant ceilings, the models).
# Logs in $OUT/verify32/.
# Usage: bash scripts/device_trial.sh verify32:540
set -u
source scripts/device_step.sh
trials_begin verify32 535
TAIL=30 trial probe 120 python3 scripts/probe_cluster_sanitizer.py --timeout 30
TAIL=15 trial gpu_suite 340 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=8 trial exclusive 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m "gpu and exclusive" tests/gpu
trials_end
