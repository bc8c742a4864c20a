#!/usr/bin/env bash
# The whole GPU suite on the ninth session's tree: its code is 3eb2822's (the in-kernel staging was
# not kept), so this also covers what the eighth session changed after its last suite (tune.resume,
# the locked row saves). The parallel part, then the exclusive tests alone.
# Logs in $OUT/final63/. Usage: bash scripts/device_trial.sh final63:380
set -u
source scripts/device_step.sh
trials_begin final63 375
gpu_suite 320 50
trials_end
