#!/usr/bin/env bash
# call 88 (2026-12-06, ninth session, the same H200 after call 87): call 84's remaining H200 steps, run
# as the device command itself (written here as it ran): sgemm's best row at 7x3000x1000 beside v1 and
# gv (the k-step chain moved it from v1), and gemm_bf16's tensor-core variants and best row at the
# small shapes of no list call 84 timed on an H100. Rows: notebook/probes/tail_wave/call88-h200/.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call88.sh
source scripts/device_step.sh
call_begin call88 300
SMALL=7x3000x1000,3x2000x1000,128x4096x1000,300x1536x1000,32x2048x1000,16x1024x4096,64x3000x2000
TAIL=12 trial chain 60 gpulab bench sgemm -v best,v1,gv --shape 7x3000x1000 --no-sanitize --out "$OUT/chain-sgemm.csv"
TAIL=30 trial small 200 gpulab bench gemm_bf16 -v t2,t3,t4,kc,d0,ks,best --shape $SMALL --no-sanitize --out "$OUT/small-gemm_bf16.csv"
rm -rf results/*/reports
call_end call88
