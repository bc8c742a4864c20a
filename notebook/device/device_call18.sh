#!/usr/bin/env bash
# call 18 (2026-12-05): ks (stream-K with the operands swapped, gemm_bf16/ks_stream_k_swap.cu) on the
# card for the first time: its GPU tests (random and exact, ragged M, N and K, the same bits on every
# launch), compute-sanitizer on its configs, then tuned at the llm suite's layers (results/h200/
# tune-gemm_bf16-ks.csv, tuned.json): at 1 and 16 tokens over TN 8 and 16, the ring's depth and one or
# two blocks an SM (probes/ks/decode.toml), at 128 tokens over TN 64 and 128 (probes/ks/m128.toml); a
# tune cut short by its limit resumes in the next call. Then the llm suite on gemm_bf16 with ks among
# the candidates (results/h200/gemm_bf16-llm.csv, cuBLAS in the same run).
# Usage (on the card, from the repository root): bash notebook/device/device_call18.sh
set -u
source scripts/device_step.sh
call_begin call18 585
P=notebook/probes/ks
TAIL=20 trial ks_tests 140 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py -k "ks"
TAIL=12 trial sanitize_ks 45 gpulab sanitize gemm_bf16 -v ks -j 8
TAIL=40 trial tune_decode 170 gpulab tune gemm_bf16 ks -p TN=8,16 -p STAGES=6,8,12 -p BPS=1,2 --suite $P/decode.toml
TAIL=30 trial tune_m128 60 gpulab tune gemm_bf16 ks -p TN=64,128 -p STAGES=4,6 -p BPS=1 --suite $P/m128.toml
TAIL=8 trial llm_bf16 160 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
call_end call18
exit 0
