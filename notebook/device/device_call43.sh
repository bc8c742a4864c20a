#!/usr/bin/env bash
# call 43 (2026-12-06): tests/gpu/test_suite_gpu.py again after bench measures a fresh card's
# ceilings before its model plans (call 42 on an H100: bench --alone's test failed in the whole
# suite, its rows planned with the reference ceilings and judged with the measured ones); then, on
# an H200 only, call 40's H200 part (bench --alone on the llm suite, best --alone) and kc's 96-wide
# fidelity rows (call 41 held these alone; its two tries came on H100s and stopped at once).
# Ran on an H100 (2026-12-06): "2 passed in 85.98s"; the H200 part did not run (no H200 came).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call43.sh
set -u
source scripts/device_step.sh
call_begin "call43" 450
TAIL=8 trial tests_suite 150 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 8 -m gpu \
    tests/gpu/test_suite_gpu.py
if ! grep -q H200 "$OUT/gpu.txt"; then
    call_end "call43"; exit 0
fi
TAIL=20 trial bench_alone_bf16 220 gpulab bench gemm_bf16 --suite llm -v best --alone --no-sanitize
TAIL=6 trial judge_bf16 40 gpulab best gemm_bf16 --suite llm --alone
TAIL=12 trial fidelity_kc_bn96 120 gpulab fidelity gemm_bf16 -v kc -p BN=96
rm -rf results/*/reports
call_end "call43"
exit 0
