#!/usr/bin/env bash
# pad_k.cu rewritten (a block per row, the second word by shuffle; ORDER=1 stages the rows last-first
# so that the GEMM's first tiles may find theirs in L2, HINTS=1 evicts the source lines first): the
# copy alone against the flat version before it (notebook/patches/pad_k_flat.cu), the copy's own GPU
# test and the staged shapes' rung tests, then t4 in alternation over the three staging builds.
# The rewrite is notebook/patches/pad_k_rows.patch (git apply, on 3e36161), and the flat copy it was
# timed against that commit's pad_k.cu, saved as notebook/patches/pad_k_flat.cu:
#   git show 3e36161:src/gpulab/experiments/gemm_bf16/pad_k.cu > notebook/patches/pad_k_flat.cu
# Logs in $OUT/stage54/. Usage: bash scripts/device_trial.sh stage54:300
set -u
source scripts/device_step.sh
trials_begin stage54 295
TAIL=8 trial alone 40 python3 notebook/probes/time_pad_k.py notebook/patches/pad_k_flat.cu --rounds 3
TAIL=6 trial tests 80 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_wgmma_gpu.py tests/gpu/test_gemm_bf16_gpu.py -k "staging or 777 or 4097 or 137 or 65 or 37"
D="--defines ORDER=0,HINTS=0 --defines ORDER=1,HINTS=0 --defines ORDER=1,HINTS=1"
TAIL=4 trial ab_4097 80 python3 scripts/ab_staging.py 4097x4097x4097 --run t4:EDGE=2 $D --rounds 3
TAIL=4 trial ab_777 40 python3 scripts/ab_staging.py 1000x3000x777 --run t4:BN=200,CLUSTER=4 $D --rounds 5
TAIL=4 trial ab_777c1 40 python3 scripts/ab_staging.py 1000x3000x777 --run t4:BN=192,CLUSTER=1 $D --rounds 5
trials_end
