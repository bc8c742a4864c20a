#!/usr/bin/env bash
# The whole GPU suite on the session's final tree (tunes that keep other shapes' picks and name them;
# the staging copy as it was, its rewrites kept as patches): the parallel part, then the exclusive
# tests alone. Logs in $OUT/final59/. Usage: bash scripts/device_trial.sh final59:360
set -u
source scripts/device_step.sh
trials_begin final59 355
gpu_suite 305 45
trials_end
