#!/usr/bin/env bash
# call 76 (2026-12-06, sixth session). On an H200: device_call75.sh's H200 branch (that call ran on an
# H100): the three llm picks of the model alone the H200 never timed, beside their shapes' best rows
# (notebook/probes/untimed_picks/), both verdicts, then d0 tuned at the llm suite's sixteen decode
# shapes. On another card, as a fresh card (its folder: the H100's ceilings only, the H200's runs
# lent): the picks that a config factor no longer read as 1 where the config ran alone moves
# (best.Selector._factor), each before (its config, by -p) and after (the best row), cuBLAS beside:
# gemm_bf16 at 512x512x512 from d0 in G=2 U=2 KW=8 MINB=2 to t0 in 32x64 tiles, and at 2048x31x4096
# from that d0 config to G=1 U=4 KW=8 MINB=1; rows to $OUT.
# Ran on an H100 80GB HBM3 (2026-12-06, on fbc1280; the H200 asked for first, refused): 512x512x512
# d0 before 9.28 us, t0 after 52.2 (the best row 52.4; cuBLAS BF16 6.2-6.3); 2048x31x4096 d0 G=2 U=2
# 15.46, G=1 U=4 15.33 (the best row 15.23; cuBLAS 29.9-30.5). The change moved 512x512x512 5.6x the
# wrong way on this card and was reverted (probes/alone-h100/call76/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call76.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call76" 560
if grep -q H200 "$OUT/gpu.txt"; then
    untimed_picks sgemm gemm_bf16
    tune_d0
else
    fresh_card "call76" notebook/probes/alone-h100/ceilings.csv
    BF=512x512x512,2048x31x4096
    TAIL=3 trial before 60 gpulab bench gemm_bf16 -v d0 --shape $BF --no-sanitize --out "$OUT/before-gemm_bf16.csv" \
        -p G=2 -p U=2 -p KW=8 -p S=0 -p MINB=2 -p DEPTH=1
    TAIL=3 trial after_t0 60 gpulab bench gemm_bf16 -v t0 --shape 512x512x512 --no-sanitize \
        --out "$OUT/after-t0-gemm_bf16.csv" -p BM=32 -p BN=64 -p BK=32 -p WM=32 -p WN=32
    TAIL=3 trial after_d0 60 gpulab bench gemm_bf16 -v d0 --shape 2048x31x4096 --no-sanitize \
        --out "$OUT/after-d0-gemm_bf16.csv" -p G=1 -p U=4 -p KW=8 -p S=0 -p MINB=1 -p DEPTH=1
    TAIL=6 trial best 60 gpulab bench gemm_bf16 -v best --shape $BF --no-sanitize --out "$OUT/best-gemm_bf16.csv"
fi
rm -rf results/*/reports
call_end "call76"
exit 0
