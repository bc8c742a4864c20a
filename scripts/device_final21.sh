#!/usr/bin/env bash
# t4 with the descriptor change and its header note (scripts/scratch/desc_low_words.patch, applied to
# the tree when this ran on 2026-12-01): its fidelity rows for both recorded configs, and the README's
# 4096^3 rows (t4 with SCHEDULE=0, and the best row) against cuBLAS: t4 0.1860 ms, 99.4% of cuBLAS.
# Its CSVs were not committed: hopper.cuh is also t2's and t3's recorded source, whose fidelity rows
# would need measuring again, and the session's device time was spent. Logs in $OUT/final21/.
# Usage: bash scripts/device_trial.sh final21:180
set -u
source scripts/device_step.sh
trials_begin final21 175
TAIL=3 trial fidelity 45 gpulab fidelity gemm_bf16 --variant t4 --shapes both
TAIL=3 trial fidelity_cfg 45 gpulab fidelity gemm_bf16 --variant t4 --shapes both \
    -p STORE=0 -p BN=128 -p STAGES=6 -p PINGPONG=1
TAIL=10 trial bench_t4 40 gpulab bench gemm_bf16 --variant t4 -p SCHEDULE=0 --shape 4096x4096x4096
TAIL=10 trial bench_best 40 gpulab bench gemm_bf16 --variant best --shape 4096x4096x4096
trials_end
