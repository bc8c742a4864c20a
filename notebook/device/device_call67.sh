#!/usr/bin/env bash
# call 67 (2026-12-06, fourth session): the best row's GPU tests on the tree where a config too large
# for the access model splits as its sibling of the same launch does (jobs/best.py); then, on an
# H200, the ten sgemm picks that change moves there, each in its config before (-p) and as the best
# row now; on another card, v14 at 300x11008x4096 in the H200's new pick (128-wide tiles, six
# stages, GROUP_M=1, STORE=1) beside its pick before (192-wide, four stages, STORE=0). Rows to $OUT.
# Ran on an H100 80GB HBM3 (2026-12-06): the best row's GPU tests "1514 passed, 1 skipped in
# 161.52s"; v14 at 300x11008x4096, GROUP_M=1 six stages STORE=1 795.6 us, 192-wide STORE=0 765.3
# (probes/alone-h100/call67/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call67.sh
set -u
source scripts/device_step.sh
call_begin "call67" 420
best_tests 250
V14="-p BM=128 -p SCHEDULE=0 -p CLUSTER=1"
OLD_S5="$V14 -p BN=128 -p STAGES=5 -p GROUP_M=8 -p STORE=0 -p FLUSH=8"
OLD_192="$V14 -p BN=192 -p STAGES=4 -p GROUP_M=8 -p STORE=0 -p FLUSH=4"
if grep -q H200 "$OUT/gpu.txt"; then
    S5=256x12288x4096,1024x4096x4096,1024x4096x14336,1536x1600x6400,2048x4096x11008,3000x5000x2000,8192x4096x4096
    TAIL=3 trial before_s5 60 gpulab bench sgemm -v v14 --shape $S5 --no-sanitize --out "$OUT/before-s5.csv" $OLD_S5
    TAIL=3 trial before_192 30 gpulab bench sgemm -v v14 --shape 300x11008x4096,1024x10240x8192 --no-sanitize \
        --out "$OUT/before-192.csv" $OLD_192
    TAIL=3 trial before_gm1 20 gpulab bench sgemm -v v14 --shape 1024x1024x4096 --no-sanitize --out "$OUT/before-gm1.csv" \
        $V14 -p BN=128 -p STAGES=6 -p GROUP_M=1 -p STORE=1 -p FLUSH=8
    TAIL=3 trial after 60 gpulab bench sgemm -v best --shape $S5,300x11008x4096,1024x10240x8192,1024x1024x4096 \
        --no-sanitize --out "$OUT/after.csv"
else
    fresh_card "call67" notebook/probes/alone-h100/ceilings.csv
    TAIL=3 trial before_192 30 gpulab bench sgemm -v v14 --shape 300x11008x4096 --no-sanitize --out "$OUT/before-192.csv" $OLD_192
    TAIL=3 trial gm1 30 gpulab bench sgemm -v v14 --shape 300x11008x4096 --no-sanitize --out "$OUT/gm1.csv" \
        $V14 -p BN=128 -p STAGES=6 -p GROUP_M=1 -p STORE=1 -p FLUSH=8
fi
rm -rf results/*/reports
call_end "call67"
exit 0
