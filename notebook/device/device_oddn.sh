#!/usr/bin/env bash
# Why does t4's copy-out epilogue (N % 4 != 0: a row of 128 bytes per STG) take ~17,500 cycles per
# tile? Nsight Compute per SASS instruction (gpulab profile --sass) at an odd N: where the warps of
# the copy loop stall. (Run on 2026-12-01 with both CSVs into $OUT/oddn/, copied to results/h200/.)
# Usage: bash scripts/device_trial.sh oddn:150
set -u
source scripts/device_step.sh
trials_begin oddn 140
TAIL=60 trial profile 130 gpulab profile gemm_bf16 t4 -p SCHEDULE=0 --shape 2048x2049x2048 --sass \
    --sass-csv notebook/probes/sass-t4-oddn.csv --csv notebook/probes/profile-t4-oddn.csv
trials_end
