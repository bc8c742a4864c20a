#!/usr/bin/env bash
# Per-block timelines of t4 (scripts/trace_t4.py: a copy with %globaltimer/clock64 stamps at each
# unit's start, first k-tile, mainloop end, stream-K hand-over and fixup, epilogue end): whole tiles
# against the stream-K tail at 4096^3, 4000^3 and 8192^3, and the consumers STAGGER=2 apart.
# Events in $OUT/trace/t4-trace.csv. (Run on 2026-12-01 with --csv, the option --events had then;
# notebook/probes/trace-t4.csv was written afterwards from those events with --from-events.)
# Usage: bash scripts/device_trial.sh trace:200
set -u
source scripts/device_step.sh
trials_begin trace 190
TAIL=60 trial t4 180 python3 scripts/trace_t4.py 4096x4096x4096 4000x4000x4000 8192x8192x8192 \
    --params SCHEDULE=0 --params SCHEDULE=1 --params SCHEDULE=0,STAGGER=2 --events "$dir/t4-trace.csv" \
    --summary notebook/probes/trace-t4.csv
trials_end
