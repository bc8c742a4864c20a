#!/usr/bin/env bash
# The params of gemm_bf16's few-tile kernels, after device_bf16_small.sh has shown them correct: d0
# over row groups, chunks per step, warps and blocks per SM at decode batches of 1 and 16 tokens; kc
# over its tile width and split at 128 tokens, 1024 x 1024 x 4096 and the ragged 257 x 129 x 8191.
# Each tune writes its rows under results/<gpu>/ and its picks, per shape, into results/<gpu>/tuned.json,
# which the best row of `gpulab bench --suite llm` reads (jobs/best.py: the nearest tuned shape).
# The tune shapes are the cheaper of the Llama shapes (inputs are drawn on the host for every row:
# 16 x 57344 x 8192 alone costs ~12 s a row), one per class the best row tells apart.
#   tune_d0  (~110 s) 24 of the 3 x 3 x 2 x 2 configs, S chosen on the host
#   tune_kc  (~110 s) BN 128 / 256 x SPLIT 2, 3, 4, 6, 8 (what fits the ring), 4 stages
# Logs go to $OUT/bf16_small_tune/.
# Usage: bash scripts/device_trial.sh bf16_small_tune:240
set -u
source scripts/device_step.sh
trials_begin bf16_small_tune 235
TAIL=15 trial tune_d0 115 gpulab tune gemm_bf16 d0 -p G=1,2,4 -p U=1,2,4 -p KW=4,8 -p S=0 -p MINB=1,2 --limit 24 \
    --shape 1x6144x4096 --shape 16x6144x4096 --shape 16x4096x14336
TAIL=15 trial tune_kc 115 gpulab tune gemm_bf16 kc -p BN=128,256 -p SPLIT=2,3,4,6,8 -p STAGES=4 -p GROUP_M=8 \
    --shape 128x6144x4096 --shape 128x4096x14336 --shape 1024x1024x4096 --shape 257x129x8191
trials_end
