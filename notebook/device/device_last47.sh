#!/usr/bin/env bash
# The final tree's GPU tests where this session's last commits touch them: t4's access model now
# counts the edge (profile and predict run it on the card), t4's comments (machine code unchanged),
# the trace patch. The Hopper tests and the profile tests. Logs in $OUT/last47/.
# Usage: bash scripts/device_trial.sh last47:220
set -u
source scripts/device_step.sh
trials_begin last47 215
hopper_tests 90
TAIL=8 trial profile 110 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m "gpu and not exclusive" \
    tests/gpu/test_profile_gpu.py
trials_end
