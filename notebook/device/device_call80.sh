#!/usr/bin/env bash
# call 80 (2026-12-06, seventh session, on 5ee0f05, whose src/ and tests/ are a769af7's): calls 77-79
# in one start, since starts cost more than the commands. On an H200: the three llm picks of the model
# alone it never timed, both verdicts, then d0's decode tune (device_call77.sh). On another card, as a
# fresh card (the H100's ceilings only, the H200's runs lent): the best row beside cuBLAS at four
# shapes of no list (device_call79.sh), then d0's KW = 4 against 8 at the sixteen decode shapes
# (device_call78.sh's other branch).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call80.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call80" 450
if grep -q H200 "$OUT/gpu.txt"; then
    untimed_picks sgemm gemm_bf16
    tune_d0
else
    fresh_card "call80" notebook/probes/alone-h100/ceilings.csv
    SHAPES=7x3000x1000,300x1536x1000,1x4096x1000,300x31x2048
    TAIL=12 trial bf16 70 gpulab bench gemm_bf16 -v best --shape $SHAPES --no-sanitize --out "$OUT/offlist-gemm_bf16.csv"
    TAIL=12 trial sgemm 60 gpulab bench sgemm -v best --shape $SHAPES --no-sanitize --out "$OUT/offlist-sgemm.csv"
    mkdir -p "$OUT/kw"
    TAIL=40 trial kw 190 gpulab bench gemm_bf16 -v d0 --suite notebook/probes/d0_waves/decode16.toml --no-sanitize \
        --out "$OUT/kw/gemm_bf16-decode16.csv" -p G=1 -p U=4 -p KW=4,8 -p S=0 -p MINB=1 -p DEPTH=1
    TAIL=40 trial waves 20 python3 notebook/probes/d0_waves/d0_waves.py "$OUT/kw"
fi
rm -rf results/*/reports
call_end "call80"
exit 0
