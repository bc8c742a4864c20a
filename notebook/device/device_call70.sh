#!/usr/bin/env bash
# call 70 (2026-12-06, fourth session): configs the model times alike (the same launch and time) no
# longer use up a variant's turns at the access model (jobs/best.py _modelled), on a fresh card (its
# folder: that card's ceilings only; the H200's runs and tunes lent): the picks that moves there,
# each in its config before (-p) and as the best row now. sgemm: 3000x5000x2000, 2048x4096x11008,
# 8192x4096x4096 and 1536x1600x6400 from 128-wide tiles in six stages; 1000x3000x777 from FLUSH=8.
# gemm_bf16: 257x129x8191 from kc split eight ways; 1536x1600x6400 from t4's 256-wide tiles. Rows to $OUT.
# Ran on an H100 80GB HBM3 (2026-12-06): before -> after, sgemm 839.1 -> 634.6, 2603.2 -> 2100.6,
# 2978.4 -> 2637.3, 594.3 -> 439.7, 80.4 -> 80.4 us; gemm_bf16 257x129x8191 17.9 -> 19.4,
# 1536x1600x6400 67.5 -> 52.4: 0.86x in geometric mean (probes/alone-h100/call70/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call70.sh
set -u
source scripts/device_step.sh
call_begin "call70" 300
fresh_card "call70" notebook/probes/alone-h100/ceilings.csv
SG=3000x5000x2000,2048x4096x11008,8192x4096x4096,1536x1600x6400
TAIL=3 trial sgemm_before 60 gpulab bench sgemm -v v14 --shape $SG --no-sanitize --out "$OUT/before-sgemm.csv" \
    -p BM=128 -p BN=128 -p STAGES=6 -p GROUP_M=8 -p CLUSTER=1 -p STORE=1 -p SCHEDULE=0 -p FLUSH=8
TAIL=3 trial sgemm_before777 30 gpulab bench sgemm -v v14 --shape 1000x3000x777 --no-sanitize --out "$OUT/before777-sgemm.csv" \
    -p BM=128 -p BN=192 -p STAGES=4 -p GROUP_M=8 -p CLUSTER=2 -p STORE=1 -p SCHEDULE=0 -p FLUSH=8
TAIL=3 trial sgemm_after 60 gpulab bench sgemm -v best --shape $SG,1000x3000x777 --no-sanitize --out "$OUT/after-sgemm.csv"
TAIL=3 trial kc_before 30 gpulab bench gemm_bf16 -v kc --shape 257x129x8191 --no-sanitize --out "$OUT/before-kc.csv" \
    -p BM=128 -p BN=128 -p STAGES=6 -p SPLIT=8 -p GROUP_M=8
TAIL=3 trial t4_before 30 gpulab bench gemm_bf16 -v t4 --shape 1536x1600x6400 --no-sanitize --out "$OUT/before-t4.csv" \
    -p BM=128 -p BN=256 -p STAGES=4 -p GROUP_M=8 -p CLUSTER=1 -p STORE=1 -p PINGPONG=0 -p SCHEDULE=0 -p EDGE=2
TAIL=3 trial bf16_after 40 gpulab bench gemm_bf16 -v best --shape 257x129x8191,1536x1600x6400 --no-sanitize \
    --out "$OUT/after-gemm_bf16.csv"
rm -rf results/*/reports
call_end "call70"
exit 0
