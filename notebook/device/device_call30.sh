#!/usr/bin/env bash
# call 30 (2026-12-05): the one llm shape gemm_bf16 still misses after call 24, 128x6144x4096 (kc
# in 128 x 128 tiles split two ways, 96 blocks: 0.876x cuBLAS BF16 in call 24's suite run; call
# 24's tune found STAGES 6 over 4 worth 8%). STAGES 7 (224 KiB of ring, the most that fits) was
# never timed: the tune over 6 and 7, then each against cuBLAS in gpulab's A/B (interleaved rounds,
# the ratio with its 95% interval).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call30.sh
set -u
source scripts/device_step.sh
call_begin "call30" 200
TAIL=14 trial tune_kc 40 gpulab tune gemm_bf16 kc -p BN=128 -p SPLIT=2 -p STAGES=6,7 -p GROUP_M=4,8 --shape 128x6144x4096
for stages in 7 6; do
    TAIL=8 trial "ab_kc_s$stages" 30 gpulab ab gemm_bf16 cublas "kc:BN=128,STAGES=$stages,SPLIT=2,GROUP_M=8" \
        --shape 128x6144x4096 --csv "$dir/ab-kc.csv"
done
call_end "call30"
exit 0
