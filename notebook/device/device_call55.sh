#!/usr/bin/env bash
# call 55 (2026-12-06): the shapes issue 40 opened with (measured on the H200 on 2026-12-03, best row
# at 0.18-0.89 of cuBLAS), brought to whatever card comes as a new user of it would: the best row,
# the variants within 15% of it and the model-alone pick, cuBLAS beside (rows kept out of results/:
# $OUT/issue-*.csv). On a card other than the H200 its folder gets the H100 ceilings of calls 46-48,
# so it borrows the H200's runs and tuned configs and does not measure its ceilings again.
# Ran on an H100 80GB HBM3 (2026-12-06): the best row within 5% of the fastest gpulab row at 3 of 3
# gemm_bf16 shapes and 3 of 5 sgemm ones, 0.81-1.49x cuBLAS BF16 and 0.44-1.22x cuBLAS FP32; at
# 2049x31x4093 v12 ran 2.08x sx's time (probes/alone-h100/call55/summary.txt).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call55.sh
set -u
source scripts/device_step.sh
call_begin "call55" 300
if ! grep -q H200 "$OUT/gpu.txt"; then
    mkdir -p results/h100-80gb-hbm3 && cp notebook/probes/alone-h100/ceilings.csv results/h100-80gb-hbm3/
fi
TAIL=4 trial issue_gemm_bf16 100 gpulab bench gemm_bf16 --contenders 1.15 --alone --no-sanitize \
    --out "$OUT/issue-gemm_bf16.csv" --shape 1024x1024x4096,257x129x8191,3000x5000x2000
TAIL=4 trial issue_sgemm 140 gpulab bench sgemm --contenders 1.15 --alone --no-sanitize \
    --out "$OUT/issue-sgemm.csv" --shape 2049x31x4093,8191x33x8193,33x8191x129,12288x512x12288,1x4097x4096
rm -rf results/*/reports
call_end "call55"
exit 0
