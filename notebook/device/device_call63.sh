#!/usr/bin/env bash
# call 63 (2026-12-06, third session): what a config the access model declines takes beyond its
# sibling, read off the card's runs (jobs/siblings.py), moves four picks on a fresh card (its folder:
# the H100's ceilings only, the H200's runs lent): gemm_bf16 t4 at 1024x28672x4096 and 3000x5000x2000
# from stream-K in clusters of two to SCHEDULE=0, sgemm v14 at 1000x3000x777 and 1024x4096x4096 from
# STORE=0 to STORE=1. Each shape's pick before (its config, by -p) and after (the best row), cuBLAS
# beside, rows to $OUT.
# Ran on an H100 80GB HBM3 (2026-12-06): after over before, gemm_bf16 1024x28672x4096 319.2 against
# 325.6 us (0.980), 3000x5000x2000 107.6 against 110.7 (0.973); sgemm 1000x3000x777 80.3 against 132.4
# (0.606), 1024x4096x4096 456.2 against 433.4 (1.052). v14's STORE=0 is too large for the access
# model there, not declined: the rule now reads only configs the model declines, and the sgemm picks
# stay as before (probes/alone-h100/call63/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call63.sh
set -u
source scripts/device_step.sh
call_begin "call63" 300
fresh_card "call63" notebook/probes/alone-h100/ceilings.csv
BF=1024x28672x4096,3000x5000x2000
SG=1000x3000x777,1024x4096x4096
TAIL=3 trial bf16_before 60 gpulab bench gemm_bf16 -v t4 --shape $BF --no-sanitize --out "$OUT/before-gemm_bf16.csv" \
    -p BM=128 -p BN=256 -p STAGES=4 -p GROUP_M=8 -p CLUSTER=2 -p STORE=1 -p PINGPONG=0 -p SCHEDULE=1 -p EDGE=0
TAIL=3 trial bf16_after 60 gpulab bench gemm_bf16 -v best --shape $BF --no-sanitize --out "$OUT/after-gemm_bf16.csv"
TAIL=3 trial sgemm_before 60 gpulab bench sgemm -v v14 --shape $SG --no-sanitize --out "$OUT/before-sgemm.csv" \
    -p BM=128 -p BN=128 -p STAGES=5 -p GROUP_M=8 -p CLUSTER=1 -p STORE=0 -p SCHEDULE=0 -p FLUSH=8
TAIL=3 trial sgemm_after 60 gpulab bench sgemm -v best --shape $SG --no-sanitize --out "$OUT/after-sgemm.csv"
rm -rf results/*/reports
call_end "call63"
exit 0
