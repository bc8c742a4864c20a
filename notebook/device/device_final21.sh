#!/usr/bin/env bash
# t4 with the descriptor change and its header note, as committed: its fidelity rows for both recorded
# configs, and the README's 4096^3 rows (t4 with SCHEDULE=0, and the best row) against cuBLAS: t4
# 0.1860 ms, 99.4% of cuBLAS (2026-12-01). hopper.cuh is also t2's and t3's source: their SASS is
# byte-identical before and after (scripts/sass_digest.py, NVRTC 13.0 and 13.5), so their fidelity
# rows were re-stamped, not measured again. Logs in $OUT/final21/.
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
