#!/usr/bin/env bash
# The L2 counters of device_promo66.sh again (t4 under promotions of 256, 128 and none, and cuBLAS, at
# 4096^3), with the probe's CSV now stamped with the card, driver, versions and date.
# Logs and CSV in $OUT/l2probe70/. Usage: bash scripts/device_trial.sh l2probe70:100
set -u
source scripts/device_step.sh
trials_begin l2probe70 95
TAIL=8 trial l2 90 python3 notebook/probes/probe_l2_traffic.py 4096x4096x4096 --run t4:EDGE=0 --promotions 256,128,0 \
    --csv "$dir/l2-traffic-4096.csv"
trials_end
