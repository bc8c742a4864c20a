#!/usr/bin/env bash
# call 86 (2026-12-06, ninth session): the picks that counting a last wave's idle block slots moved
# (cost.TAIL_IDLE_COST; picks moved on the recorded rows, CPU: /tmp pick lists, named below), timed
# beside the picks before it, each on the card that ran; on an H200 first the llm picks of the model
# alone it never timed (notebook/probes/untimed_picks/: t4 at 1024x28672x4096, d0 KW=8 at 16x10240x8192;
# sgemm's v14 at 8192x4096x4096 and 1024x10240x8192) and both verdicts; on another card, as a fresh
# card, then the best row's GPU tests on this tree.
# Ran on an H200 (2026-12-06, 108 s): rows in notebook/probes/tail_wave/call86-h200/, the llm rows into results/h200/.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call86.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call86" 540
# d0 in G=1 U=4 at KW = 4 and 8: the moves between them at shapes of no list (both cards)
KW_SHAPES=1x5120x3000,7x4096x4096,7x3000x1000,16x1024x4096,32x2048x1000,4x4608x3584
# sgemm's gv from 64- to 32-column tiles at one token (both cards), and at 7 tokens from sx or 2 rows
GV_SHAPES=1x9216x3072,1x11008x4096,1x15360x5120,7x3000x1000,7x4096x4096
moved_kw() {
    TAIL=20 trial kw 90 gpulab bench gemm_bf16 -v best,d0 -p G=1 -p U=4 -p KW=4,8 -p MINB=1,2 --shape $KW_SHAPES \
        --no-sanitize --out "$OUT/kw-gemm_bf16.csv"
    TAIL=12 trial gv1 60 gpulab bench sgemm -v best,gv -p BM=1,2,4 -p CT=32 -p KT=8 -p U=8 -p S=16 -p MINB=2 \
        --shape $GV_SHAPES --no-sanitize --out "$OUT/gv-sgemm.csv"
    TAIL=12 trial gv2 40 gpulab bench sgemm -v gv -p BM=1,2,4 -p CT=64 -p KT=4 -p U=4 -p S=16 -p MINB=4 \
        --shape $GV_SHAPES --no-sanitize --out "$OUT/gv-sgemm.csv"
}
if grep -q H200 "$OUT/gpu.txt"; then
    untimed_picks gemm_bf16 sgemm
    moved_kw
    rm -rf results/*/reports; call_end "call86"; exit 0
fi
fresh_card "call86" notebook/probes/alone-h100/ceilings.csv
moved_kw
# the other moves on a fresh card: before -> after
TAIL=8 trial m64 40 gpulab bench gemm_bf16 -v best,kc,t4 --shape 64x8192x8192 -p BM=128 -p BN=128 --no-sanitize --out "$OUT/moved.csv"
TAIL=8 trial m32 40 gpulab bench gemm_bf16 -v best,t3,t4 --shape 32x27648x5120 -p BM=128 -p BN=256 --no-sanitize --out "$OUT/moved.csv"
TAIL=8 trial m512 40 gpulab bench gemm_bf16 -v best,d0,t2 --shape 512x512x512,16x5120x5120,16x10240x8192 --no-sanitize --out "$OUT/moved.csv"
TAIL=8 trial mks 30 gpulab bench gemm_bf16 -v ks -p TN=16 -p STAGES=6 -p BPS=1 --shape 16x5120x5120,16x10240x8192 --no-sanitize --out "$OUT/moved.csv"
best_tests 180
rm -rf results/*/reports
call_end "call86"
exit 0
