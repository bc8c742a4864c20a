#!/usr/bin/env bash
# device_l2probe70.sh again with L2's request coalescer counters (lrc__*): whether cuBLAS reads fewer
# L2 sectors than its tiles ask for because equal requests from different SMs are merged.
# Logs and CSV in $OUT/l2lrc72/. Usage: bash scripts/device_trial.sh l2lrc72:100
set -u
source scripts/device_step.sh
trials_begin l2lrc72 95
TAIL=8 trial l2 90 python3 notebook/probes/probe_l2_traffic.py 4096x4096x4096 --run t4:EDGE=0 --promotions 256,128,0 \
    --csv "$dir/l2-traffic-4096.csv"
trials_end
