#!/usr/bin/env bash
# call 35 (written 2026-12-05; ran on an H100 2026-12-06, probes/clusters/call35-h100/): kc's clusters of five to eight, which no tune has timed (the
# tunes asked for SPLIT 2-4), at the three shapes where the cluster count moved the pick to a kc
# config in SPLIT >= 2 that no card timed there (1024x1024x4096, 2049x31x4093, 128x3072x4096; the
# gemm_bf16 notes, "Clusters that do not all run at once"), then the best row there against cuBLAS.
# On an H100 kc in 128 x 256 tiles split eight ways ran 2.31x cuBLAS BF16's time at 1024x1024x4096,
# 1.72x its model (probes/clusters/call34-h100/). An H200's tune rows go to results/h200/ (the tune
# writes them); on another card they stay in the call's folder.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call35.sh
set -u
source scripts/device_step.sh
call_begin "call35" 240
TAIL=20 trial tune_kc 150 gpulab tune gemm_bf16 kc -p BN=128,256 -p SPLIT=2,3,4,5,6,7,8 -p STAGES=4 -p GROUP_M=8 \
    --shape 1024x1024x4096 --shape 2049x31x4093 --shape 128x3072x4096
TAIL=12 trial best 60 gpulab bench gemm_bf16 -v best --shape 1024x1024x4096,2049x31x4093,128x3072x4096 \
    --no-sanitize --out "$dir/best-after-tune.csv"
rm -rf results/*/reports
call_end "call35"
exit 0
