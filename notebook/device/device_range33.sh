#!/usr/bin/env bash
# v14's domain: the split of FP32's edge values (infinities, near FLT_MAX, subnormals) on the card
# against its numpy model (tests/gpu/test_tf32_split_gpu.py), and the range of magnitudes over which
# v14 keeps FP32's accuracy beside v13 and cuBLAS (notebook/probes/probe_tf32x3_range.py).
# Logs in $OUT/range33/.
# Usage: bash scripts/device_trial.sh range33:200
set -u
source scripts/device_step.sh
trials_begin range33 195
TAIL=8 trial split_test 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m gpu tests/gpu/test_tf32_split_gpu.py
TAIL=20 trial range 90 python3 notebook/probes/probe_tf32x3_range.py --size 1024
TAIL=20 trial range4096 60 python3 notebook/probes/probe_tf32x3_range.py --size 4096 --exponents 0,55,57,58,60
trials_end
