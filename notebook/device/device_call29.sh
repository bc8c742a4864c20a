#!/usr/bin/env bash
# call 29 (2026-12-05): the llm suite on both GEMMs on an H100, a card with no runs of its own, as a
# user who brings one would find it: the best row's picks come from the H200's runs read against the
# H100's ceilings (call 27's, copied in so as not to spend 150 s measuring them again). Run when no
# H200 can be had; the rows stay notebook records (notebook/probes/llm-h100/), not results/.
# Ran 2026-12-05 on an H100 80GB HBM3 (driver 580.159.04) as `bash notebook/device/device_call29.sh bf16`
# (127 s), then the llm_sgemm step's command alone on the same warm machine (89 s): device time ran out.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call29.sh [bf16]
# (bf16: gemm_bf16 alone, about 3.5 min with the setup)
set -u
source scripts/device_step.sh
call_begin call29 330
card=results/h100-80gb-hbm3
if grep -q "H100 80GB HBM3" "$OUT/gpu.txt"; then
    mkdir -p "$card" && cp notebook/probes/narrow/call27-h100/ceilings.csv "$card/ceilings.csv"
fi
mkdir -p "$dir/llm"
TAIL=10 trial llm_bf16 170 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize \
    --out "$dir/llm/gemm_bf16-llm.csv"
[ "${1:-}" = bf16 ] || TAIL=10 trial llm_sgemm 140 gpulab bench sgemm --suite llm --contenders 1.3 --no-sanitize \
    --out "$dir/llm/sgemm-llm.csv"
call_end call29
exit 0
