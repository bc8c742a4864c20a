#!/usr/bin/env bash
# The whole GPU suite on this session's code: t2-t4's tensor maps now take their L2 promotion from
# gpulab.gpu.tma.L2_PROMOTION_BYTES (still 256 bytes). Logs in $OUT/final71/.
# Usage: bash scripts/device_trial.sh final71:520
set -u
source scripts/device_step.sh
trials_begin final71 515
gpu_suite 430 70
trials_end
