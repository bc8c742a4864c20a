#!/usr/bin/env bash
# call 78 (2026-12-06, sixth session), in the device time left (about 6 minutes). On an H200: sgemm's
# two llm picks of the model alone that it never timed, beside their shapes' best rows
# (notebook/probes/untimed_picks/sgemm/llm.toml), then sgemm's verdict. On another card: is d0's KW
# = 4 against KW = 8 (G = 1, U = 4) a property of the shape (its waves: the blocks an SM holds by
# registers) or of one card's rows? On the H200 KW = 8 ran faster at M = 1 and N = 4096, 8192, 10240,
# KW = 4 at N = 6144 and at M = 16 from N = 6144 on (notebook/probes/d0_waves/h200.txt). Both configs
# and cuBLAS at the llm suite's sixteen decode shapes (notebook/probes/d0_waves/decode16.toml) in one
# run, as a fresh card (its folder: the H100's ceilings only); rows to $OUT, then d0_waves.py on them.
# Not run: the starts after call 77 were refused or failed, and 282 s of device time were left.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call78.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call78" 220
if grep -q H200 "$OUT/gpu.txt"; then
    untimed_picks sgemm
else
    fresh_card "call78" notebook/probes/alone-h100/ceilings.csv
    mkdir -p "$OUT/kw"
    TAIL=40 trial kw 190 gpulab bench gemm_bf16 -v d0 --suite notebook/probes/d0_waves/decode16.toml --no-sanitize \
        --out "$OUT/kw/gemm_bf16-decode16.csv" -p G=1 -p U=4 -p KW=4,8 -p S=0 -p MINB=1 -p DEPTH=1
    TAIL=40 trial waves 20 python3 notebook/probes/d0_waves/d0_waves.py "$OUT/kw"
fi
rm -rf results/*/reports
call_end "call78"
exit 0
