#!/usr/bin/env bash
# call 40 (written 2026-12-06, not yet run): `gpulab bench --alone` on the card. It was built after
# call 39 (whose notebook probe, probes/alone/time_alone_picks.py, it replaces) and tested on the CPU
# only: its GPU test first, then on an H200 the llm suite's best rows with each shape's model-alone
# pick beside them, which `gpulab best --suite llm --alone` then judges (24 of 40 for gemm_bf16 on
# 2026-12-06; every pick should come back timed, none untimed).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call40.sh
set -u
source scripts/device_step.sh
call_begin "call40" 300
TAIL=8 trial tests_alone 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m gpu \
    tests/gpu/test_suite_gpu.py
if ! grep -q H200 "$OUT/gpu.txt"; then
    call_end "call40"; exit 0
fi
TAIL=20 trial bench_alone_bf16 200 gpulab bench gemm_bf16 --suite llm -v best --alone --no-sanitize
TAIL=6 trial judge_bf16 60 gpulab best gemm_bf16 --suite llm --alone
rm -rf results/*/reports
call_end "call40"
exit 0
