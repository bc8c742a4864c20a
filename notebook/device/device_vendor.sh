#!/usr/bin/env bash
# The record behind the "What cuBLAS runs" paragraphs (README, docs/notes/gemm_bf16-notes.md): scripts/probe_vendor_kernels.py for
# sgemm at 2048^3, 4096^3 and 8192^3 beside v13 (tuned S=16) and for gemm_bf16 at 4096^3 and 8192^3
# beside t4, into notebook/probes/vendor_kernels.csv. Logs go to $OUT/vendor/.
# Usage: bash scripts/device_trial.sh vendor:200
set -u
source scripts/device_step.sh
trials_begin vendor 190
CSV=notebook/probes/vendor_kernels.csv
TAIL=12 trial fp32 110 python3 scripts/probe_vendor_kernels.py sgemm 2048x2048x2048 4096x4096x4096 8192x8192x8192 \
    --run v13:S=16 --csv "$CSV"
TAIL=6 trial bf16 60 python3 scripts/probe_vendor_kernels.py gemm_bf16 4096x4096x4096 8192x8192x8192 --run t4 --csv "$CSV"
cp "$CSV" "$dir/" 2>/dev/null
trials_end
