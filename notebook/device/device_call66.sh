#!/usr/bin/env bash
# call 66 (2026-12-06, fourth session): sgemm's v14 configs that modelling STORE=0 without a stream-K
# balance leaves to the tie-break, on a fresh card (its folder: that card's ceilings only; the H200's
# runs and tunes lent): at 1024x1024x4096, 1024x10240x8192 and 256x12288x4096, 128-wide tiles in 5
# stages with GROUP_M=8 and STORE=0, the same in 6 stages with GROUP_M=1 and STORE=1, v13's 64 x 128
# tiles split eight ways at 256x12288x4096, and 192-wide tiles in STORE=0 and STORE=1 at
# 1024x10240x8192 and 8192x6144x4096 (each pair differing in STORE alone). Rows to $OUT.
# Ran on an H100 80GB HBM3 (2026-12-06): 1024x10240x8192 five stages, GROUP_M=8, STORE=0 2094.1 us,
# six stages, GROUP_M=1, STORE=1 3255.4, 192-wide STORE=0 2084.4 and STORE=1 2102.1; 8192x6144x4096
# 3528.5 and 3544.4; 1024x1024x4096 173.8 and 169.9; 256x12288x4096 633.6 and 735.0, v13 550.2
# (probes/alone-h100/call66/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call66.sh
set -u
source scripts/device_step.sh
call_begin "call66" 300
fresh_card "call66" notebook/probes/alone-h100/ceilings.csv
V14="-p BM=128 -p SCHEDULE=0 -p CLUSTER=1"
TAIL=3 trial s5_gm8_store0 60 gpulab bench sgemm -v v14 --shape 1024x1024x4096,1024x10240x8192,256x12288x4096 \
    --no-sanitize --out "$OUT/s5-gm8-store0.csv" $V14 -p BN=128 -p STAGES=5 -p GROUP_M=8 -p STORE=0 -p FLUSH=8
TAIL=3 trial s6_gm1_store1 60 gpulab bench sgemm -v v14 --shape 1024x1024x4096,1024x10240x8192,256x12288x4096 \
    --no-sanitize --out "$OUT/s6-gm1-store1.csv" $V14 -p BN=128 -p STAGES=6 -p GROUP_M=1 -p STORE=1 -p FLUSH=8
TAIL=3 trial v13_s8 40 gpulab bench sgemm -v v13 --shape 256x12288x4096 --no-sanitize --out "$OUT/v13-s8.csv" \
    -p BM=64 -p BN=128 -p BK=16 -p WM=32 -p WN=64 -p WNITER=2 -p TM=4 -p TN=4 -p STAGES=2 -p MINB=1 -p GROUP_M=8 -p RESIDENT=3 -p S=8
for store in 0 1; do
    TAIL=3 trial "bn192_store$store" 60 gpulab bench sgemm -v v14 --shape 1024x10240x8192,8192x6144x4096 --no-sanitize \
        --out "$OUT/bn192-store$store.csv" $V14 -p BN=192 -p STAGES=4 -p GROUP_M=8 -p STORE=$store -p FLUSH=4
done
rm -rf results/*/reports
call_end "call66"
exit 0
