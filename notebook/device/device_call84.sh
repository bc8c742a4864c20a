#!/usr/bin/env bash
# call 84 (2026-12-06, eighth session, on ddfd271 and the k-step chain, Variant.k_step_param):
# gemm_bf16 at small shapes of no list, where its best row ran 0.64-0.70x cuBLAS BF16 (7x3000x1000
# and 128x4096x1000: kc picked; t2 in 64-row tiles ran 10.7 us at 128x4096x1000 on the H200, kc
# 11.7): every tensor-core variant at its defaults and the best row beside cuBLAS, to see whose
# fixed cost a launch is lowest. On an H200 first the three llm picks of the model alone it never
# timed (notebook/probes/untimed_picks/) and both verdicts, and sgemm's best row at 7x3000x1000 (v1
# before the chain, gv after) beside v1 and gv; on another card, after the probe, the best row's GPU
# tests on this tree.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call84.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call84" 360
SMALL=7x3000x1000,3x2000x1000,128x4096x1000,300x1536x1000,32x2048x1000,16x1024x4096,64x3000x2000
# kc as the model picked it before 1ab5427 (a padded config's fixed cost), beside the best row after
KC=(-p BM=128 -p BN=128 -p STAGES=4 -p GROUP_M=8)
if grep -q H200 "$OUT/gpu.txt"; then
    untimed_picks sgemm gemm_bf16
    TAIL=12 trial chain 60 gpulab bench sgemm -v best,v1,gv --shape 7x3000x1000 --no-sanitize --out "$OUT/chain-sgemm.csv"
    TAIL=30 trial small 150 gpulab bench gemm_bf16 -v t2,t3,t4,kc,d0,ks,best --shape $SMALL --no-sanitize \
        --out "$OUT/small-gemm_bf16.csv"
    rm -rf results/*/reports; call_end "call84"; exit 0
fi
fresh_card "call84" notebook/probes/alone-h100/ceilings.csv
TAIL=3 trial kc4 25 gpulab bench gemm_bf16 -v kc --shape 7x3000x1000 "${KC[@]}" -p SPLIT=4 --no-sanitize --out "$OUT/kc-before.csv"
TAIL=3 trial kc6 25 gpulab bench gemm_bf16 -v kc --shape 3x2000x1000 "${KC[@]}" -p SPLIT=6 --no-sanitize --out "$OUT/kc-before.csv"
TAIL=20 trial small_best 70 gpulab bench gemm_bf16 -v best,d0,kc --shape $SMALL --no-sanitize --out "$OUT/small-gemm_bf16.csv"
TAIL=20 trial small_rest 50 gpulab bench gemm_bf16 -v t2,t3,t4,ks --shape $SMALL --no-sanitize --out "$OUT/small-rest.csv"
best_tests 180
rm -rf results/*/reports
call_end "call84"
exit 0
