#!/usr/bin/env bash
# gpulab ceilings on bad days again, alone: final34's bad-day steps never ran (a shell function under
# timeout). A truncated ceilings.csv; Ctrl-C while it measures the tensor rows a file lacks: each must
# leave the file byte-identical and exit non-zero (a warm card measures the tensor rows in under
# 4 s: the first try, at 6 s, came after a complete run, which rightly wrote the file). Logs in $OUT/baddays35/.
# Usage: bash scripts/device_trial.sh baddays35:90
set -u
source scripts/device_step.sh
trials_begin baddays35 80
INTERRUPT_AFTER=2.5 source notebook/device/device_ceilings_bad_days.sh
trials_end
