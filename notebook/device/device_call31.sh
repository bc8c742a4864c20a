#!/usr/bin/env bash
# call 31 (2026-12-05, ran on an H100): whether the best-row model's config factor on memory-bound shapes (a config
# timed beside its variant's fastest at the shapes the variant's efficiency is read from carries its
# own ratio there; in the working tree, uncommitted, when this ran) picks faster at the three shapes
# where it moves a pick (of the llm suites, the unlisted shapes and the default shapes: only these
# three, all unlisted). Each pair in gpulab's A/B (B: the pick with the factor), then the unlisted
# shapes' bench with the best row as the factor picks, beside cuBLAS. On an H200 also kc in 96-wide
# tiles at 128x6144x4096 (notebook/patches/kc_bn96.patch; its GPU tests passed on an H100 in call
# 30) against cuBLAS, and kc's 128-wide tuned config beside it.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call31.sh
set -u
source scripts/device_step.sh
call_begin "call31" 300
ab() { TAIL=3 trial "ab_$1" 40 gpulab ab gemm_bf16 "$2" "$3" --shape "$1" --noise 1% --csv "$dir/ab-factor.csv"; }
ab 1x5120x3000 "d0:G=2,U=2,KW=8,S=0,MINB=2,DEPTH=1" "d0:G=1,U=4,KW=4,S=0,MINB=2,DEPTH=1"
ab 7x4096x4096 "d0:G=2,U=2,KW=8,S=0,MINB=2,DEPTH=1" "d0:G=1,U=4,KW=8,S=0,MINB=1,DEPTH=1"
ab 128x4096x1000 "kc:BM=128,BN=128,STAGES=4,SPLIT=3,GROUP_M=16" "kc:BM=128,BN=256,STAGES=4,SPLIT=2,GROUP_M=1"
TAIL=12 trial unlisted_bf16 60 gpulab bench gemm_bf16 --suite notebook/probes/unlisted/unlisted.toml --variant best \
    --no-sanitize --out "$dir/gemm_bf16-unlisted.csv"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    patch -s -p1 <notebook/patches/kc_bn96.patch
    for cfg in "BN=96,STAGES=6" "BN=128,STAGES=6"; do
        TAIL=3 trial "ab_kc_${cfg//[=,]/_}" 30 gpulab ab gemm_bf16 cublas "kc:BM=128,$cfg,SPLIT=2,GROUP_M=8" \
            --shape 128x6144x4096 --csv "$dir/ab-kc.csv"
    done
    patch -s -R -p1 <notebook/patches/kc_bn96.patch
fi
call_end "call31"
exit 0
