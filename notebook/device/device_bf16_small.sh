#!/usr/bin/env bash
# gemm_bf16's kernels for few output tiles (issue 40 item 2), first run on the card: d0 (decode,
# M <= 16: Bt streamed once into mma.sync fragments) and kc (split-K across a cluster, partials added
# through distributed shared memory).
#   tests  (~40 s) their GPU tests: correct at ragged M, N, K (1, 7, 16 x 31, 4097 x 8, 1000, 4099;
#          kc also 128x640x4096, 257x129x8191, 1000x1531x777), random and exact, every config in
#          SMALL_CONFIGS and the defaults at the experiment's test shapes but the two cubes (their float64
#          reference alone takes seconds: the full GPU suite checks them); and the same output bits
#          on three launches of one launcher (d0's workspace and counters, kc's cluster reduction),
#          the counters left at zero
#   bench  (~150 s in three calls) beside t4 (its tuned configs) and cuBLAS BF16 in the same run:
#          decode shapes with d0 (and 1024x28672x4096, t4's own), then the few-tile shapes with kc at
#          SPLIT 3 and 4 (BN 256: 72-128 blocks), then kc at BN 128 in clusters of 2 (96-128 blocks),
#          then 257x129x8191 (3 tiles of 128 x 256, 9 of 128 x 64) split 4 and 8 ways.
#          The big shapes cost their input generation on the host (16x57344x8192: 940 MB of Bt, ~6 s a
#          row twice), so the rows there are few.
# Logs and CSVs (bench_small.csv: every bench row) go to $OUT/bf16_small/.
# Usage: bash scripts/device_trial.sh bf16_small:240
set -u
source scripts/device_step.sh
trials_begin bf16_small 235
csv="$dir/bench_small.csv"
TAIL=30 trial tests 60 python3 -m pytest -m gpu -q -n 8 -rfE -p no:cacheprovider tests/gpu/test_gemm_bf16_gpu.py \
    -k "(d0 or kc or small_tile or same_bits) and not 4096x4096x4096 and not 4097x4097x4097"
TAIL=20 trial bench_decode 70 gpulab bench gemm_bf16 --variant t4,d0 --shape 1x6144x4096 --shape 16x6144x4096 \
    --shape 16x57344x8192 --shape 1024x28672x4096 --out "$csv"
TAIL=25 trial bench_split 60 gpulab bench gemm_bf16 --variant t4,kc --param SPLIT=3,4 --shape 128x6144x4096 \
    --shape 128x8192x28672 --shape 1024x1024x4096 --shape 257x129x8191 --out "$csv"
TAIL=25 trial bench_split_bn 35 gpulab bench gemm_bf16 --variant kc --param BN=128 --param SPLIT=2 \
    --shape 128x6144x4096 --shape 128x8192x28672 --shape 1024x1024x4096 --out "$csv"
TAIL=10 trial bench_ragged 10 gpulab bench gemm_bf16 --variant kc --param BN=64,256 --param SPLIT=4,8 \
    --shape 257x129x8191 --out "$csv"
trials_end
