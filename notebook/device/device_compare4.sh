#!/usr/bin/env bash
# `gpulab compare gemm_bf16 t3 t4` at 4096^3 again, on t4's final source (the copy-out epilogue and
# the store order g ^ (row % 4) changed it since device_lead2.sh): its profile.csv rows and the
# README's t3 -> t4 evidence. Usage: bash scripts/device_trial.sh compare4:120
source scripts/device_step.sh
dir=$OUT/compare4; mkdir -p "$dir"
TAIL=80 step compare_t3_t4 100 gpulab compare gemm_bf16 t3 t4 --size 4096
