#!/usr/bin/env bash
# The GPU suite on this session's final tree (the access model's TMA byte rule changed; no kernel
# source did). Logs in $OUT/final40/. Usage: bash scripts/device_trial.sh final40:420
set -u
source scripts/device_step.sh
trials_begin final40 410
gpu_suite 350 55
trials_end
