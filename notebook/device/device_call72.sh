#!/usr/bin/env bash
# call 72 (2026-12-06, fifth session, on 824e5cf): why ks in 64-token tiles ran 1.35-1.5x its 128-token
# tiles' time at 128 tokens on the H200 (tune-gemm_bf16-ks.csv: 66.8 against 49.7 us at 128x4096x14336,
# 233.7 against 154.5 at 128x8192x28672), which the best-row model reads as a config factor (0.73-0.77)
# and lends to 24-64 tokens, where the two run alike (call 68). Two passes over Bt there (two token
# tiles): does the second come from DRAM (ks_rereads counts it kept in the L2), or is it something
# else? Nsight Compute's predicted | measured for TN = 64 and 128 at both shapes, and at
# 64x3584x18944 (one token tile of 64), with the times of TN = 32, 64 and 128 beside. Then the one
# pick that reading stream-K's unseen cost only off pairs modelled alike moves (t4 at 3000x3000x1000,
# on the H200 and a fresh H100 alike): before (BN=256 in clusters of two, SCHEDULE=1) and after
# (BN=192, SCHEDULE=0, EDGE=2), and the best row's GPU tests on that tree.
# Ran on an H100 80GB HBM3 (2026-12-06, on 1abdd6f; probes/alone-h100/call72/): under ncu, TN = 64 at
# 128x4096x14336 read 133.0 MB from DRAM (predicted 130.4: the second pass over Bt stays in the L2, as
# ks_rereads says), TN = 128 124.5; at 64x3584x18944 140.7 and 141.4 (139.1). Timed, TN = 32/64/128:
# 128x4096x14336 107.1/66.2/57.7 us, 128x8192x28672 643.0/259.8/189.3, 64x3584x18944 101.5/59.1/63.2.
# t4 at 3000x3000x1000: stream-K in 256-wide tiles (before) 51.9 us, 192-wide tiles SCHEDULE=0 (after,
# and the best row) 60.4: pairs_alike reverted. Best row's GPU tests: 1514 passed, 1 skipped.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call72.sh
set -u
source scripts/device_step.sh
call_begin "call72" 540
grep -q H200 "$OUT/gpu.txt" || fresh_card "call72" notebook/probes/alone-h100/ceilings.csv
for s in 128x4096x14336 64x3584x18944; do
    for tn in 64 128; do
        TAIL=60 trial "profile_${s}_tn$tn" 60 gpulab profile gemm_bf16 ks --shape $s -p TN=$tn -p STAGES=6 -p BPS=1 \
            --csv "$OUT/profile.csv"
    done
done
for tn in 32 64 128; do
    TAIL=6 trial "bench_tn$tn" 60 gpulab bench gemm_bf16 -v ks --shape 128x4096x14336,128x8192x28672,64x3584x18944 \
        -p TN=$tn -p STAGES=6 -p BPS=1 --no-sanitize --out "$OUT/ks-tn$tn.csv"
done
T4=(-p BM=128 -p STAGES=4 -p GROUP_M=8 -p STORE=1 -p PINGPONG=0)
TAIL=4 trial t4_before 60 gpulab bench gemm_bf16 -v t4 --shape 3000x3000x1000 "${T4[@]}" -p BN=256 -p CLUSTER=2 \
    -p SCHEDULE=1 -p EDGE=0 --no-sanitize --out "$OUT/t4-before.csv"
TAIL=4 trial t4_after 60 gpulab bench gemm_bf16 -v t4 --shape 3000x3000x1000 "${T4[@]}" -p BN=192 -p CLUSTER=1 \
    -p SCHEDULE=0 -p EDGE=2 --no-sanitize --out "$OUT/t4-after.csv"
TAIL=4 trial best_row 60 gpulab bench gemm_bf16 -v best --shape 3000x3000x1000 --no-sanitize --out "$OUT/t4-best.csv"
best_tests 200
rm -rf results/*/reports
call_end "call72"
exit 0
