#!/usr/bin/env bash
# call 36 (2026-12-06; first written when the session's device time went to failed starts; ran on an H200 later that day,
# its results committed in 6c7b9c5): kc in 96-wide tiles on the H200, the one llm shape under target first. It applies
# notebook/patches/kc_bn96.patch to the card's copy of the tree (the 96-wide wgmma in kc's own header,
# wgmma_n96.cuh, so that no other Hopper kernel's fingerprint moves; BN = 96 among kc's choices;
# compiled for sm_90: 168 registers, no spills, rings of 6-8; with it in the choices no pick moves,
# since no card has timed it). If the H200 keeps it, commit the patch with the results/h200/ files
# the call brings back (kc's tune rows, fidelity rows and sanitizer rows record the patched source).
# The tree's tunes time an earlier tune's pick again where their configs leave it out.
# On an H200, in the order they matter: kc in 128- and 96-wide tiles at 128x6144x4096 against cuBLAS
# (gpulab ab; call 30 on an H100: 1.22x and 1.12x cuBLAS's time); kc's tune over BN 64, 96 and 128,
# split two ways, rings of 6-8, at the eight llm shapes of 128 tokens, then over 128- and 256-wide
# tiles split 2-8 ways at the three shapes where the cluster count moved the pick to configs no
# tune had timed (both write results/h200/, so the best row there then runs what was fastest); the
# llm suite's rows at 128 tokens timed again (notebook/probes/llm128/llm.toml: into
# results/h200/gemm_bf16-llm.csv); the best row at the three shapes; the new configs under
# compute-sanitizer; the shapes of no list; the config factor's d0 picks against the picks before.
# The whole GPU suite ran on an H100 the same day with the patch in its first form, the 96-wide
# wgmma in hopper.cuh's dispatch (call 36's first run: 3226 + 2 passed).
# On any card first kc's GPU tests; on another card nothing more (an H100 answered the rest on
# 2026-12-05 and 2026-12-06).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call36.sh
set -u
source scripts/device_step.sh
# (skipped where the tree already carries it)
if patch --dry-run -s -p1 -N <notebook/patches/kc_bn96.patch >/dev/null 2>&1; then
    patch -s -p1 -N <notebook/patches/kc_bn96.patch || exit 1
fi
call_begin "call36" 360
# kc's GPU tests (the 96-wide configs at ragged shapes, bit for bit at 128x6144x4096): kc now takes its
# 96-wide wgmma from wgmma_n96.cuh, not hopper.cuh's dispatch as when the suite ran on the H100
TAIL=8 trial tests_kc 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py -k kc
if ! grep -q H200 "$OUT/gpu.txt"; then
    call_end "call36"; exit 0
fi
ab() { TAIL=3 trial "ab_$2_$5" 30 gpulab ab "$1" "$3" "$4" --shape "$2" --noise 1% --csv "$dir/ab-$1.csv"; }
ab gemm_bf16 128x6144x4096 cublas "kc:BM=128,BN=128,STAGES=6,SPLIT=2,GROUP_M=8" bn128
ab gemm_bf16 128x6144x4096 cublas "kc:BM=128,BN=96,STAGES=6,SPLIT=2,GROUP_M=8" bn96
m128=128x6144x4096,128x4096x4096,128x28672x4096,128x4096x14336,128x10240x8192,128x8192x8192,128x57344x8192,128x8192x28672
TAIL=30 trial tune_kc96 90 gpulab tune gemm_bf16 kc -p BN=64,96,128 -p SPLIT=2 -p STAGES=6,7,8 -p GROUP_M=8 \
    --shape "$m128"
TAIL=30 trial llm128 120 gpulab bench gemm_bf16 --suite notebook/probes/llm128/llm.toml --contenders 1.2 --no-sanitize
TAIL=20 trial tune_kc_split 60 gpulab tune gemm_bf16 kc -p BN=128,256 -p SPLIT=2,3,4,5,6,7,8 -p STAGES=4 -p GROUP_M=8 \
    --shape 1024x1024x4096 --shape 2049x31x4093 --shape 128x3072x4096
TAIL=12 trial best3 40 gpulab bench gemm_bf16 -v best --shape 1024x1024x4096,2049x31x4093,128x3072x4096 \
    --no-sanitize --out "$dir/best-after-tune.csv"
TAIL=12 trial sanitize_kc 70 gpulab sanitize gemm_bf16 -v kc -p BN=64,96 -j 8
# kc's fidelity rows record its source: the patch changes it (tests/test_fidelity_replay.py)
TAIL=12 trial fidelity_kc 60 gpulab fidelity gemm_bf16 -v kc
mkdir -p "$dir/unlisted"
TAIL=12 trial unlisted_bf16 50 gpulab bench gemm_bf16 --suite notebook/probes/unlisted/unlisted.toml --contenders 1.5 \
    --no-sanitize --out "$dir/unlisted/gemm_bf16-unlisted.csv"
before="d0:G=2,U=2,KW=8,S=0,MINB=2,DEPTH=1"
ab gemm_bf16 1x5120x3000 "$before" "d0:G=1,U=4,KW=8,S=0,MINB=1,DEPTH=1" before
ab gemm_bf16 7x4096x4096 "$before" "d0:G=1,U=4,KW=4,S=0,MINB=2,DEPTH=1" before
rm -rf results/*/reports
call_end "call36"
exit 0
