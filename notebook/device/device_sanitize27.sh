#!/usr/bin/env bash
# compute-sanitizer with the harness's host API errors off (--report-api-errors no): verify26 found
# 34 of them in every TMA rung's memcheck (cuda-bindings asking cuGetProcAddress for entry points
# this driver lacks), and racecheck faulting t4 and v14 in clusters of two. Here: sgemm v14 and
# gemm_bf16 t2-t4 under the four tools (rows to results/h200/sanitize.csv), then the GPU test of
# the command for v14 and one other experiment. Logs in $OUT/sanitize27/.
# Usage: bash scripts/device_trial.sh sanitize27:200
set -u
source scripts/device_step.sh
trials_begin sanitize27 195
TAIL=12 trial v14 40 gpulab sanitize sgemm -v v14 -j 8
TAIL=12 trial bf16 50 gpulab sanitize gemm_bf16 -v t2,t3,t4 -j 8
TAIL=8 trial test 90 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 2 tests/gpu/test_faults_gpu.py \
    -k "sanitize_every_variant and (v14 or coalesce)"
trials_end
