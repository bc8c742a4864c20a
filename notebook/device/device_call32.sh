#!/usr/bin/env bash
# call 32 (2026-12-05, ran on an H100; its kc step runs only on an H200): call 31 again for the config factor as it was kept (capped at 1, and a config
# never timed where its variant's efficiency is read from takes its variant's median factor there):
# it moves the pick at two shapes of the 108 (llm suites, unlisted, default), both decode shapes of
# no list, to d0 configs of G=1 U=4 other than call 31 timed. Each in gpulab's A/B against the pick
# before and against cuBLAS. On an H200 also call 31's kc in 96-wide tiles at 128x6144x4096.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call32.sh
set -u
source scripts/device_step.sh
call_begin "call32" 300
ab() { TAIL=3 trial "ab_$1_$4" 40 gpulab ab gemm_bf16 "$2" "$3" --shape "$1" --noise 1% --csv "$dir/ab-factor.csv"; }
before="d0:G=2,U=2,KW=8,S=0,MINB=2,DEPTH=1"
ab 1x5120x3000 "$before" "d0:G=1,U=4,KW=8,S=0,MINB=1,DEPTH=1" before
ab 7x4096x4096 "$before" "d0:G=1,U=4,KW=4,S=0,MINB=2,DEPTH=1" before
ab 1x5120x3000 cublas "d0:G=1,U=4,KW=8,S=0,MINB=1,DEPTH=1" cublas
ab 7x4096x4096 cublas "d0:G=1,U=4,KW=4,S=0,MINB=2,DEPTH=1" cublas
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    patch -s -p1 <notebook/patches/kc_bn96.patch
    for cfg in "BN=96,STAGES=6" "BN=128,STAGES=6"; do
        TAIL=3 trial "ab_kc_${cfg//[=,]/_}" 30 gpulab ab gemm_bf16 cublas "kc:BM=128,$cfg,SPLIT=2,GROUP_M=8" \
            --shape 128x6144x4096 --csv "$dir/ab-kc.csv"
    done
    patch -s -R -p1 <notebook/patches/kc_bn96.patch
fi
call_end "call32"
exit 0
