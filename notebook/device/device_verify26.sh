#!/usr/bin/env bash
# The whole GPU suite and the exclusive tests on the tree with sgemm v14 (3xTF32 on t4, tuned: its
# tuned configs join the tests through tests/gpu/configs.py), then compute-sanitizer over v14 and
# over gemm_bf16's TMA rungs (never sanitized on the card before; t2-t4 staged behind pad_k's
# programmatic launch at 131x67x37-like shapes). Rows land in results/h200/sanitize.csv.
# Logs in $OUT/verify26/.  Usage: bash scripts/device_trial.sh verify26:580
set -u
source scripts/device_step.sh
trials_begin verify26 575
TAIL=40 trial gpu 330 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=6 trial exclusive 45 python3 -m pytest -q -rfE -p no:cacheprovider -m "gpu and exclusive" tests/gpu
TAIL=20 trial sanitize_v14 100 gpulab sanitize sgemm -v v14 -j 8
TAIL=20 trial sanitize_bf16 90 gpulab sanitize gemm_bf16 -v t2,t3,t4 -j 8
trials_end
