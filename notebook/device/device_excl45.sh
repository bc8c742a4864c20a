#!/usr/bin/env bash
# The GPU tests marked exclusive, alone on the card: test_bf16_ceilings_measured_and_plausible now
# among them (under pytest -n 16 in final44 its TF32 / BF16 ratio read 0.33: another worker's
# kernels beside it). Logs in $OUT/excl45/. Usage: bash scripts/device_trial.sh excl45:120
set -u
source scripts/device_step.sh
trials_begin excl45 110
TAIL=8 trial exclusive 100 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m "gpu and exclusive" tests/gpu
trials_end
