#!/usr/bin/env bash
# The TMA bytes Nsight Compute counts for t4 at small shapes chosen to take the counting rule apart
# (notebook/probes/probe_tma_bytes.py: K sets the pitch's offset within a line and the width of the k-tile K
# ends inside; clusters of two and of one); racecheck on t4 where K ends inside a k-tile without
# staging (notebook/probes/probe_t4_racecheck.py, two more cases); and cuBLAS's kernel at 1000x3000x776 into
# vendor_kernels.csv. Logs in $OUT/tma37/. Usage: bash scripts/device_trial.sh tma37:330
set -u
source scripts/device_step.sh
trials_begin tma37 320
TAIL=30 trial tma_bytes 170 python3 notebook/probes/probe_tma_bytes.py
TAIL=12 trial racecheck 90 python3 notebook/probes/probe_t4_racecheck.py --timeout 50
TAIL=4 trial vendor 40 python3 scripts/probe_vendor_kernels.py gemm_bf16 1000x3000x776 --run t4:BN=192 \
    --csv notebook/probes/vendor_kernels.csv
trials_end
