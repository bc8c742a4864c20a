#!/usr/bin/env bash
# `gpulab compare` between consecutive tensor-core rungs at 4096^3, into results/<gpu>/profile.csv:
# the README's evidence of what each rung changed (counters and stalls). Logs in $OUT/lead2/.
# Usage: bash scripts/device_trial.sh lead2:90
source scripts/device_step.sh
dir=$OUT/lead2; mkdir -p "$dir"
for pair in "t0 t1" "t1 t2" "t2 t3" "t3 t4"; do
    set -- $pair
    TAIL=60 step "compare_$1_$2" 25 gpulab compare gemm_bf16 "$1" "$2" --size 4096
done
