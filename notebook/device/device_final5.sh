#!/usr/bin/env bash
# Every GPU test on the final tree with room to finish (final4's run was cut at 98%, all passing),
# then sx's global-load sector probe (notebook/device/device_models2.sh). Usage: bash scripts/device_trial.sh final5:560
source scripts/device_step.sh
dir=$OUT/final5; mkdir -p "$dir"
TAIL=12 step pytest_gpu 300 python3 -m pytest -m "gpu and not exclusive" -q -n 16 -p no:cacheprovider --maxfail=30
bash notebook/device/device_models2.sh >"$dir/models2.log" 2>&1; echo "== models2: exit $?"; tail -n 30 "$dir/models2.log"
