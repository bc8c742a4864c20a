#!/usr/bin/env bash
# (1) What each Bt row adds to the TMA bytes under multicast, one row more at a time
# (notebook/probes/probe_tma_bytes.py --set rows, into tests/fixtures/h200/probe-tma-bytes.csv). (2) t4's fixed cost
# against cuBLAS's: one k-tile (K = 64) at shapes of one block, one cluster and 1000x3000, clusters of
# one and two, in alternation. Logs in $OUT/rows39/. Usage: bash scripts/device_trial.sh rows39:330
set -u
source scripts/device_step.sh
trials_begin rows39 320
TAIL=40 trial rows 200 python3 notebook/probes/probe_tma_bytes.py --set rows --csv tests/fixtures/h200/probe-tma-bytes.csv
TAIL=16 trial fixed 100 python3 notebook/probes/ab_rungs.py gemm_bf16 128x256x64 256x256x64 1000x3000x64 1000x3000x776 \
    --run t4:BN=256,CLUSTER=1 --run t4:BN=256,CLUSTER=2 --run t4:BN=192,CLUSTER=2 --rounds 5
trials_end
