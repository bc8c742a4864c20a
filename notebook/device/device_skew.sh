#!/usr/bin/env bash
# Is t4's epilogue (~4,500 SM cycles per tile in notebook/device/device_trace.sh) slow because every block
# stores its C tile at the same moment? The traced copy with clusters started SKEW cycles apart in
# four phases (t4_trace.patch, -DSKEW), so that a quarter of them store at a time.
# (Run on 2026-12-01 with --csv, the option --events had then; notebook/probes/trace-t4-skew.csv was
# written afterwards from those events with --from-events.) Usage: bash scripts/device_trial.sh skew:120
set -u
source scripts/device_step.sh
trials_begin skew 110
TAIL=60 trial t4 100 python3 scripts/trace_t4.py 4096x4096x4096 8192x8192x8192 \
    --params SCHEDULE=0 --params SCHEDULE=0,SKEW=16000 --params SCHEDULE=0,SKEW=8000 --events "$dir/t4-skew.csv" \
    --summary notebook/probes/trace-t4-skew.csv
trials_end
