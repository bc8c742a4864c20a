#!/usr/bin/env bash
# The probe as committed, end to end on the card (a functional check after its last edits: --run read
# by run_args, numbers parsed, the damaged-CSV refusal): sgemm 1024^3 beside v13 and gemm_bf16 1024^3
# beside t4 with one extra metric, into a scratch CSV under $OUT/probecheck/ (not results/).
# Usage: bash scripts/device_trial.sh probecheck:120
set -u
source scripts/device_step.sh
trials_begin probecheck 110
TAIL=4 trial fp32 50 python3 scripts/probe_vendor_kernels.py sgemm 1024x1024x1024 --run v13:S=16 --csv "$dir/check.csv"
TAIL=4 trial bf16 40 python3 scripts/probe_vendor_kernels.py gemm_bf16 1024x1024x1024 --run t4 \
    --metric lts__t_sectors.sum --csv "$dir/check.csv"
head -c 300 "$dir/check.csv" > "$dir/cut.csv"
TAIL=4 trial damaged 20 bash -c "python3 scripts/probe_vendor_kernels.py sgemm 512x512x512 --csv '$dir/cut.csv'; test \$? -ne 0"
trials_end
