#!/usr/bin/env bash
# Issue 41, timing you can trust, on the H200: the new GPU tests (planted kernels that game the timer
# caught, a correct one passing, ab of a kernel against itself), then the targets measured by
# gpulab itself, CSVs and logs under $OUT/timing/ (summaries by device_timing_summary.py):
#   default_bench.csv, .log  a default `gpulab bench sgemm --size 1024,2048`, its wall time last in the log,
#                            after an untimed run that fills the compile cache (time today's code the same
#                            way, its second run): the cost target is <= 1.3x today's
#   t4_cublas.csv            gpulab ab gemm_bf16 t4 cublas --size 4096: is the ratio's interval within +-0.5%?
#   twice_1/2.csv, twice.csv one small bench twice in one process, each median against the other's interval
#   aa.csv                   gpulab ab sgemm v13 v13 --size 4096, 20 times: "same within noise" 20 of 20?
# Expected: tests ~45 s, each default bench ~30 s warm (more where NVRTC compiles cold), t4/cublas ~8 s,
# twice ~20 s, each A/A ~4 s. Usage: bash scripts/device_trial.sh timing:240
set -u
source scripts/device_step.sh
trials_begin timing 235
SUMMARY="python3 notebook/device/device_timing_summary.py"

TAIL=12 trial tests 70 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m gpu tests/gpu/test_timing_gpu.py
TAIL=2 trial warm_cache 60 gpulab bench sgemm --size 1024,2048 --out "$dir/warm_bench.csv"
TAIL=30 trial default_bench 60 bash -c "TIMEFORMAT='default bench wall time: %R s'; \
    time gpulab bench sgemm --size 1024,2048 --out '$dir/default_bench.csv'"
TAIL=14 trial t4_cublas 30 bash -c "gpulab ab gemm_bf16 t4 cublas --size 4096 --csv '$dir/t4_cublas.csv' && \
    $SUMMARY ratio '$dir/t4_cublas.csv'"
TAIL=8 trial twice 45 $SUMMARY twice "$dir"
# The A/A runs last, each started only while 12 s of the script's budget are left for it and the count.
left=$((BUDGET - SECONDS)); [ "$left" -gt 120 ] && left=120; stop_at=$((left - 12))
TAIL=48 trial aa 120 bash -c "for i in \$(seq 1 20); do [ \$SECONDS -ge $stop_at ] && break; \
    TIMEFORMAT=\"ab \$i: %R s\"; time gpulab ab sgemm v13 v13 --size 4096 --csv '$dir/aa.csv' 2>&1 | \
    grep -E '^verdict|error'; done; $SUMMARY aa '$dir/aa.csv'"
trials_end
