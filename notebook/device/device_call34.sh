#!/usr/bin/env bash
# call 34 (2026-12-05; replaced by device_call36.sh; its H100 branch ran that day, probes/clusters/call34-h100/; device time short: under
# 4 min in all): first the model's clusters
# (gpulab.gpu.clusters.blocks_at_once): how many clusters of 1-8 whole-SM blocks the card runs at
# once; on an H200 then kc at 1024x1024x4096 in 128 x 256 tiles in clusters of eight (the pick
# while clusters of eight were taken as 16 at once) and in 128 x 128 tiles split two ways (the pick
# since the counts were measured), each against cuBLAS; the gemm_bf16 GPU tests (the launch's
# cluster size now decides kc's dependent launch); what call 32 asked of an H200 after it ran on an
# H100: kc in 128- and 96-wide tiles (notebook/patches/kc_bn96.patch) at 128x6144x4096 against
# cuBLAS; the shapes of no list on gemm_bf16 (the config factor's d0 picks against cuBLAS among
# them) and those picks against the picks before. sgemm's llm suite needs no new run:
# results/h200/sgemm-llm.csv already timed v13, the pick again at 64 and 128 x 4096 x 4096.
# On an H100 instead: the clusters, then the GPU tests of the tensor-core kernels (hopper_tests).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call34.sh
set -u
source scripts/device_step.sh
call_begin "call34" 200
TAIL=3 trial clusters 30 python3 -c "from gpulab.gpu.clusters import resident_clusters as r; print({c: r(c) for c in range(1, 9)})"
if ! grep -q H200 "$OUT/gpu.txt"; then
    hopper_tests 170
    call_end "call34"; exit 0
fi
ab() { TAIL=3 trial "ab_$2_$5" 30 gpulab ab "$1" "$3" "$4" --shape "$2" --noise 1% --csv "$dir/ab-$1.csv"; }
# in the order they matter, each step cut to what is left of the call's budget
ab gemm_bf16 1024x1024x4096 cublas "kc:BM=128,BN=256,STAGES=4,SPLIT=8,GROUP_M=4" split8
ab gemm_bf16 1024x1024x4096 cublas "kc:BM=128,BN=128,STAGES=4,SPLIT=2,GROUP_M=8" split2
# the launch's cluster size now decides kc's dependent launch behind its staged copy (one_wave)
TAIL=8 trial tests_bf16 120 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py
ab gemm_bf16 128x6144x4096 cublas "kc:BM=128,BN=128,STAGES=6,SPLIT=2,GROUP_M=8" bn128
patch -s -p1 <notebook/patches/kc_bn96.patch
ab gemm_bf16 128x6144x4096 cublas "kc:BM=128,BN=96,STAGES=6,SPLIT=2,GROUP_M=8" bn96
patch -s -R -p1 <notebook/patches/kc_bn96.patch
mkdir -p "$dir/unlisted"
TAIL=12 trial unlisted_bf16 50 gpulab bench gemm_bf16 --suite notebook/probes/unlisted/unlisted.toml --contenders 1.5 \
    --no-sanitize --out "$dir/unlisted/gemm_bf16-unlisted.csv"
before="d0:G=2,U=2,KW=8,S=0,MINB=2,DEPTH=1"
ab gemm_bf16 1x5120x3000 "$before" "d0:G=1,U=4,KW=8,S=0,MINB=1,DEPTH=1" before
ab gemm_bf16 7x4096x4096 "$before" "d0:G=1,U=4,KW=4,S=0,MINB=2,DEPTH=1" before
rm -rf results/*/reports
call_end "call34"
exit 0
