#!/usr/bin/env bash
# Issue 40, second pass on the kernels for few output tiles (branch kernels2): gemm_bf16's d0 with two
# steps in flight (DEPTH 2) at its new defaults (G 2 U 2 KW 4 MINB 3: 396 slots, S = 2 at N = 6144),
# kc with its cluster loads batched, the last cluster barrier relaxed, BN 96 / 160 and defaults BN 128
# SPLIT 2; sgemm's sx with 16-row tiles (splitk.SX_DECODE) for a decode batch. Each beside the vendor
# library in the same call. Expected seconds per step (limits in the calls):
#   tests      ~40 s (60): on the card's NVRTC, d0's and kc's configs compile without spills (the CPU
#              test, sm_80 and sm_90a) and sx's decode tiles too; on the card, d0 and kc correct at
#              ragged shapes (15 configs, random and exact: DEPTH 1 and 2, BN 96 and 160, the old
#              defaults), the same bits on three launches (split-K workspaces and the cluster
#              reduction, 7 cases), DEPTH 2's bits = DEPTH 1's (4 cases); sx's 16- and 32-row tiles
#              correct at 15 shapes and the same bits twice
#   bench_d0*  ~37 s (limits 25 + 10 + 9 + 9): d0 at its new defaults and cuBLAS BF16 at 16x6144x4096,
#              16x4096x14336, 16x57344x8192, 1x6144x4096; the first card run's defaults (KW 8 MINB 2
#              DEPTH 1) at 16x6144x4096 and 1x6144x4096 (the A/B in this call); at 16x6144x4096 also
#              two steps of one chunk at KW 8 MINB 2 (S = 1, 192 blocks) and the new defaults at S = 1
#   bench_kc*  ~30 s (22 + 9 + 9): kc at BN 128 SPLIT 2 and cuBLAS at 128x6144x4096, 128x4096x4096,
#              1024x1024x4096; BN 96 at 128x6144x4096 and BN 64 at 128x4096x4096 (128 blocks each)
#   bench_sx*, bench_sgemm, bench_gv  ~40 s (9 + 9 + 22 + 9): cuBLAS FP32 beside sx's 16-row tiles
#              (S 16) and sx's default (64-row tiles, S 4) at 16x6144x4096; v13 and v14 at
#              128x6144x4096 and 1024x4096x4096; gv at 1x6144x4096
# Logs and CSVs (bench_bf16.csv, bench_sgemm.csv) go to $OUT/kernels2/; summary.txt first.
# Expected in all ~150 s; the limits add to 202, cut to the 195 s budget as it runs out (step.sh).
# Usage: bash scripts/device_trial.sh kernels2:200
set -u
source scripts/device_step.sh
trials_begin kernels2 195
bf16="$dir/bench_bf16.csv"
sg="$dir/bench_sgemm.csv"
TAIL=12 trial tests 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 \
    tests/test_gemm_bf16.py tests/test_sgemm_skinny_compile.py tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_skinny_gpu.py \
    -k "small_tile or split_k_kernels or two_steps or sx_decode or (accepted_configs and sx)"
TAIL=12 trial bench_d0 25 gpulab bench gemm_bf16 --no-sanitize --variant d0,cublas --shape 16x6144x4096 --shape 16x4096x14336 \
    --shape 16x57344x8192 --shape 1x6144x4096 --out "$bf16"
TAIL=4 trial bench_d0_old 10 gpulab bench gemm_bf16 --no-sanitize --variant d0 -p KW=8 -p MINB=2 -p DEPTH=1 \
    --shape 16x6144x4096 --shape 1x6144x4096 --out "$bf16"
TAIL=3 trial bench_d0_u1 9 gpulab bench gemm_bf16 --no-sanitize --variant d0 -p U=1 -p KW=8 -p MINB=2 --shape 16x6144x4096 --out "$bf16"
TAIL=3 trial bench_d0_s1 9 gpulab bench gemm_bf16 --no-sanitize --variant d0 -p S=1 --shape 16x6144x4096 --out "$bf16"
TAIL=10 trial bench_kc 22 gpulab bench gemm_bf16 --no-sanitize --variant kc,cublas --shape 128x6144x4096 --shape 128x4096x4096 \
    --shape 1024x1024x4096 --out "$bf16"
TAIL=3 trial bench_kc_bn96 9 gpulab bench gemm_bf16 --no-sanitize --variant kc -p BN=96 --shape 128x6144x4096 --out "$bf16"
TAIL=3 trial bench_kc_bn64 9 gpulab bench gemm_bf16 --no-sanitize --variant kc -p BN=64 --shape 128x4096x4096 --out "$bf16"
TAIL=3 trial bench_sx16 9 gpulab bench sgemm --no-sanitize --variant sx -p BM=16 -p BN=256 -p BK=16 -p WM=16 -p WN=64 -p WNITER=2 \
    -p STAGES=4 -p S=16 --shape 16x6144x4096 --out "$sg"
TAIL=4 trial bench_sx 9 gpulab bench sgemm --no-sanitize --variant sx,cublas --shape 16x6144x4096 --out "$sg"
TAIL=10 trial bench_sgemm 22 gpulab bench sgemm --no-sanitize --variant v13,v14,cublas --shape 128x6144x4096 --shape 1024x4096x4096 \
    --out "$sg"
TAIL=4 trial bench_gv 9 gpulab bench sgemm --no-sanitize --variant gv,cublas --shape 1x6144x4096 --out "$sg"
trials_end
