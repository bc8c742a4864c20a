#!/usr/bin/env bash
# The whole GPU suite on the tree with BN=200, clusters of four and the cluster-sized grid (and the
# launch's refactor that every kernel goes through): the parallel part, then the exclusive tests alone.
# Logs in $OUT/final51/. Usage: bash scripts/device_trial.sh final51:560
set -u
source scripts/device_step.sh
trials_begin final51 550
gpu_suite 470 70
trials_end
