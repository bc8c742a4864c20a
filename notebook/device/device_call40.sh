#!/usr/bin/env bash
# call 40 (written 2026-12-06; ran 2026-12-06 in the session after, on an H100): `gpulab bench
# --alone` on the card. It was built after call 39 (whose notebook probe, probes/alone/
# time_alone_picks.py, it replaces) and tested on the CPU only: its GPU test first, then on an H200
# the llm suite's best rows with each shape's model-alone pick beside them, which `gpulab best
# --suite llm --alone` then judges. It came on an H100: the test step ran out of its 60 s compiling
# cold; run again on the same machine with 400 s and 8 workers, tests/gpu/test_suite_gpu.py gave
# "2 passed in 61.83s" (H100, 2026-12-06). The H200 part moved to device_call43.sh.
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
