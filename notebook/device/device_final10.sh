#!/usr/bin/env bash
# The session's last call: the whole GPU suite (not exclusive) on the final tree, -n 16.
# Usage: bash scripts/device_trial.sh final10:290
set -u
source scripts/device_step.sh
trials_begin final10 285
TAIL=6 trial gpu 280 python3 -m pytest -m "gpu and not exclusive" -q -n 16 -p no:cacheprovider
trials_end
