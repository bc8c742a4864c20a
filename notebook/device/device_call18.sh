#!/usr/bin/env bash
# call 18 (2026-12-05): ks (stream-K with the operands swapped, gemm_bf16/ks_stream_k_swap.cu) on the
# card for the first time: its GPU tests (random and exact, ragged M, N and K, the same bits on every
# launch), then benches beside cuBLAS BF16 at the llm suite's decode shapes (1 and 16 tokens: TN 8 and
# 16, ring depth, one or two blocks an SM) and at 128 tokens (TN 64 and 128); rows to this call's
# folder (probes/ks/*.toml), not results/.
# Usage (on the card, from the repository root): bash notebook/device/device_call18.sh
set -u
source scripts/device_step.sh
call_begin call18 585
P=notebook/probes/ks
TAIL=20 trial ks_tests 170 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py -k "ks"
TAIL=60 trial ks_decode 210 gpulab bench gemm_bf16 -v ks -p TN=8,16 -p STAGES=6,8,12 -p BPS=1,2 \
    --suite $P/decode.toml --no-sanitize --out "$dir/ks-decode.csv"
TAIL=40 trial ks_m128 120 gpulab bench gemm_bf16 -v ks -p TN=64,128 -p STAGES=4,6 \
    --suite $P/m128.toml --no-sanitize --out "$dir/ks-m128.csv"
call_end call18
exit 0
