#!/usr/bin/env bash
# t4's epilogue split between its two ways out, on top of the scale-d = 0 start: the TMA unit and the
# warps' STG.128 each took a tile out at ~29 B per cycle alone (device_epvar.sh); if they are separate
# paths to L2, sharing the chunks between them shortens the tile boundary. Consumer 1's chunks all by
# STG (notebook/patches/t4_mix_consumer.patch), every odd chunk (t4_mix_alt.patch), 3 of 8
# (t4_mix_three.patch), in alternation with t4 and cuBLAS. Usage: bash scripts/device_trial.sh epmix:300
set -u
source scripts/device_step.sh
T=src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu
RUNS="--run t4"
for m in consumer alt three; do
    patch -s -o /tmp/t4_mix_$m.cu $T notebook/patches/t4_mix_$m.patch
    RUNS="$RUNS --run t4@/tmp/t4_mix_$m.cu"
done
trials_begin epmix 290
TAIL=20 trial ab 170 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4000x4000x4000 2048x2048x2048 $RUNS --rounds 5
TAIL=8 trial ab8192 110 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 $RUNS --rounds 3
trials_end
