#!/usr/bin/env bash
# call 72 (2026-12-06, fifth session, on 824e5cf): why ks in 64-token tiles ran 1.35-1.5x its 128-token
# tiles' time at 128 tokens on the H200 (tune-gemm_bf16-ks.csv: 66.8 against 49.7 us at 128x4096x14336,
# 233.7 against 154.5 at 128x8192x28672), which the best-row model reads as a config factor (0.73-0.77)
# and lends to 24-64 tokens, where the two run alike (call 68). Two passes over Bt there (two token
# tiles): does the second come from DRAM (ks_rereads counts it kept in the L2), or is it something
# else? Nsight Compute's predicted | measured for TN = 64 and 128 at both shapes, and at
# 64x3584x18944 (one token tile of 64), with the times of TN = 32, 64 and 128 beside.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call72.sh
set -u
source scripts/device_step.sh
call_begin "call72" 400
grep -q H200 "$OUT/gpu.txt" || fresh_card "call72" notebook/probes/alone-h100/ceilings.csv
for s in 128x4096x14336 128x8192x28672 64x3584x18944; do
    for tn in 64 128; do
        TAIL=60 trial "profile_${s}_tn$tn" 60 gpulab profile gemm_bf16 ks --shape $s -p TN=$tn -p STAGES=6 -p BPS=1 \
            --csv "$OUT/profile.csv"
    done
done
for tn in 32 64 128; do
    TAIL=6 trial "bench_tn$tn" 60 gpulab bench gemm_bf16 -v ks --shape 128x4096x14336,128x8192x28672,64x3584x18944 \
        -p TN=$tn -p STAGES=6 -p BPS=1 --no-sanitize --out "$OUT/ks-tn$tn.csv"
done
rm -rf results/*/reports
call_end "call72"
exit 0
