#!/usr/bin/env bash
# call 68 (2026-12-06, fourth session): ks's passes over Bt that the L2 does not keep (access_small.
# ks_rereads), on a fresh card (its folder: that card's ceilings only; the H200's runs and tunes lent):
# six layer shapes at 17 to 64 tokens, where ks's 16-token tiles pass over Bt more than once, chosen
# before the run (Llama-3-8B down 32x4096x14336, qkv 40x6144x4096, gate+up 24x28672x4096; -70B down
# 48x8192x28672; Qwen2-7B down 32x3584x18944 and 64x3584x18944): ks in 16-, 32-, 64- and 128-token
# tiles (six stages, one block an SM), then the best row with the contenders within 15% and cuBLAS.
# Rows to $OUT.
# Ran on an H100 80GB HBM3 (2026-12-06): ks in 16-token tiles 97.7, 188.2, 57.2, 39.2, 162.6 and
# 472.8 us against the model's 100.7, 230.2, 57.1, 31.8, 166.3 and 537.6; the best row within 5% of
# the fastest row at 3 of 6 (ks in 32- or 64-token tiles fastest at the other three, 1.16-1.42x);
# the three picks ks_rereads moves 0.80x, 0.51x and 1.005x their time before
# (probes/alone-h100/call68/verdicts.txt).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call68.sh
set -u
source scripts/device_step.sh
call_begin "call68" 330
fresh_card "call68" notebook/probes/alone-h100/ceilings.csv
SHAPES=32x3584x18944,64x3584x18944,32x4096x14336,40x6144x4096,24x28672x4096,48x8192x28672
TAIL=3 trial ks_tn 150 gpulab bench gemm_bf16 -v ks -p TN=16,32,64,128 -p STAGES=6 -p BPS=1 --no-sanitize \
    --out "$OUT/ks-tn.csv" --shape $SHAPES
TAIL=4 trial best 150 gpulab bench gemm_bf16 --contenders 1.15 --no-sanitize --out "$OUT/best.csv" --shape $SHAPES
rm -rf results/*/reports
call_end "call68"
exit 0
