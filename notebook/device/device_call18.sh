#!/usr/bin/env bash
# call 18 (2026-12-05): ks (stream-K with the operands swapped, gemm_bf16/ks_stream_k_swap.cu) on the
# card for the first time: its GPU tests (random and exact, ragged M, N and K, the same bits on every
# launch), then tuned at the llm suite's layers (results/h200/tune-gemm_bf16-ks.csv, tuned.json): at 1
# and 16 tokens over TN 8 and 16, the ring's depth and one or two blocks an SM (probes/ks/decode.toml),
# at 128 tokens over TN 64 and 128 (probes/ks/m128.toml). Each tune row is checked and timed beside
# nothing else; the llm suite's bench (cuBLAS in the same run) is the next call's.
# Usage (on the card, from the repository root): bash notebook/device/device_call18.sh
set -u
source scripts/device_step.sh
call_begin call18 585
P=notebook/probes/ks
TAIL=20 trial ks_tests 170 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py -k "ks"
TAIL=40 trial tune_decode 230 gpulab tune gemm_bf16 ks -p TN=8,16 -p STAGES=6,8,12 -p BPS=1,2 --suite $P/decode.toml
TAIL=30 trial tune_m128 120 gpulab tune gemm_bf16 ks -p TN=64,128 -p STAGES=4,6 -p BPS=1 --suite $P/m128.toml
call_end call18
exit 0
