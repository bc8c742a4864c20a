#!/usr/bin/env bash
# The whole GPU suite on this session's tree (tune rows that record their kernel's source; the staged
# pitch of 128 bytes, whose full-suite run was still owed): the parallel part, then the exclusive
# tests alone. Logs in $OUT/final56/. Usage: bash scripts/device_trial.sh final56:390
set -u
source scripts/device_step.sh
trials_begin final56 385
gpu_suite 330 50
trials_end
