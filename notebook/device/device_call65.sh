#!/usr/bin/env bash
# call 65 (2026-12-06, fourth session, on fb447f4): on an H200, call 58's steps (d0 tuned at all sixteen
# decode shapes of the llm suite, the llm rows of gemm_bf16 timed again with each shape's model-alone
# pick beside its best row, and the verdict). On another card, a fresh one (its folder: that card's
# ceilings only; the H200's runs and tunes lent, through scripts/device_step.sh's fresh_card, not run
# on a card before): the best row and the contenders within 15% of it, cuBLAS beside, at call 62's ten
# shapes (today's code: change 3 moved a pick there) and at ten layer shapes of no list and no
# earlier call, chosen before the run: Qwen2-7B (QKV 4608x3584, O 3584x3584, gate+up 37888x3584,
# down 3584x18944), Gemma-2B (gate+up 32768x2048, down 2048x16384) and GPT-2 XL (QKV 4800x1600, FFN
# up 6400x1600, down 1600x6400), at M = 1 to 3000 tokens other than the llm suite's; and first, the
# eleven sgemm picks that modelling v14's STORE=0 without a stream-K balance moves on this card,
# each in its old config and as the best row now.
# Ran on an H100 80GB HBM3 (2026-12-06, the H200 asked for and not come; the fix as first written, ties
# to the evaluated config): the eleven moved picks 0.61-1.45x their time before, 0.99x in geometric
# mean (probes/alone-h100/call65/moved.txt); the best row within 5% of the fastest gpulab row at 9 of
# 10 and 9 of 10 gemm_bf16 shapes (off: 1x9216x3072 t3 1.23x, 32x3584x18944 ks 1.41x against kc) and
# 10 of 10 and 9 of 10 sgemm ones (off: 1536x1600x6400 v14 1.36x); each of the 40 best rows is the
# final code's pick too (probes/alone-h100/call65/verdicts.txt).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call65.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call65" 560
if grep -q H200 "$OUT/gpu.txt"; then
    tune_d0
    alone_verdict gemm_bf16 250
    rm -rf results/*/reports
    call_end "call65"; exit 0
fi
fresh_card "call65" notebook/probes/alone-h100/ceilings.csv
OLD=1x15360x5120,8x5120x13824,32x27648x5120,256x5120x5120,2048x15360x5120
OLD=$OLD,1x9216x3072,64x16384x3072,512x3072x8192,4096x3072x1024,2048x1024x4096
NEW=1x4608x3584,4x37888x3584,32x3584x18944,200x3584x3584,3000x4608x3584
NEW=$NEW,1x2048x16384,777x32768x2048,12x4800x1600,1536x1600x6400,96x6400x1600
# sgemm's v14 in STORE=0 (too large for the access model) had been modelled as sharing its tiles
# evenly: the picks that fixing it moves on this card, before (their old configs) and after.
MOVED=1000x3000x777,1024x4096x4096,1024x4096x14336,1536x1600x6400,2048x4096x11008,3000x5000x2000
MOVED=$MOVED,8192x4096x4096,12288x512x12288
MOVED192=300x11008x4096,1024x10240x8192,8192x6144x4096
TAIL=3 trial v14_before 90 gpulab bench sgemm -v v14 --shape $MOVED --no-sanitize --out "$OUT/before-sgemm.csv" \
    -p BM=128 -p BN=128 -p STAGES=5 -p GROUP_M=8 -p CLUSTER=1 -p STORE=0 -p SCHEDULE=0 -p FLUSH=8
TAIL=3 trial v14_before192 60 gpulab bench sgemm -v v14 --shape $MOVED192 --no-sanitize --out "$OUT/before192-sgemm.csv" \
    -p BM=128 -p BN=192 -p STAGES=4 -p GROUP_M=8 -p CLUSTER=1 -p STORE=0 -p SCHEDULE=0 -p FLUSH=4
TAIL=3 trial v14_after 120 gpulab bench sgemm -v best --shape $MOVED,$MOVED192 --no-sanitize --out "$OUT/after-sgemm.csv"
for e in gemm_bf16 sgemm; do
    TAIL=4 trial "old_$e" 110 gpulab bench $e --contenders 1.15 --no-sanitize --out "$OUT/old-$e.csv" --shape $OLD
    TAIL=4 trial "new_$e" 130 gpulab bench $e --contenders 1.15 --no-sanitize --out "$OUT/new-$e.csv" --shape $NEW
done
rm -rf results/*/reports
call_end "call65"
exit 0
