#!/usr/bin/env bash
# Issue 41, timing you can trust, on the H200: the new GPU tests (planted kernels that game the timer
# caught, a correct one passing, ab of a kernel against itself), then the targets measured by
# gpulab itself, CSVs and logs under $OUT/timing/ (summaries by device_timing_summary.py):
#   t4_cublas.csv            gpulab ab gemm_bf16 t4 cublas --size 4096: is the ratio's interval within +-0.5%?
#   aa.csv                   gpulab ab sgemm v13 v13 --size 4096, 20 times (the first on the command line,
#                            timed; 19 through gpulab.ab in one process): "same within noise" 20 of 20?
#   default_bench.csv, .log  a default `gpulab bench sgemm --size 1024,2048`, its wall time last in the log,
#                            after an untimed run that fills the compile cache (time today's code the same
#                            way, its second run): the cost target is <= 1.3x today's
#   twice_1/2.csv, twice.csv one small bench run twice in one step, each median against the other's interval
# Expected: tests ~45 s, t4/cublas ~8 s, the A/A runs ~5 s + 19 x ~3 s, each default bench ~30 s warm
# (the first more where NVRTC compiles cold), twice ~20 s. Usage: bash scripts/device_trial.sh timing:240
set -u
source scripts/device_step.sh
trials_begin timing 295
SUMMARY="python3 notebook/device/device_timing_summary.py"

TAIL=12 trial tests 70 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m gpu tests/gpu/test_timing_gpu.py
TAIL=14 trial t4_cublas 30 bash -c "gpulab ab gemm_bf16 t4 cublas --size 4096 --csv '$dir/t4_cublas.csv' && \
    $SUMMARY ratio '$dir/t4_cublas.csv'"
TAIL=16 trial aa_cli 20 bash -c "TIMEFORMAT='gpulab ab wall time: %R s'; \
    time gpulab ab sgemm v13 v13 --size 4096 --csv '$dir/aa.csv'"
TAIL=21 trial aa_api 75 $SUMMARY aa_api "$dir/aa.csv"
TAIL=2 trial aa_count 10 $SUMMARY aa "$dir/aa.csv"
# The cost: the code before issue 41 (.old/src, carried in the call) fills the compile cache (the
# kernels are the same text), then today's and the old code's default bench timed one after another.
TAIL=2 trial warm_cache 60 env PYTHONPATH=.old/src python3 -m gpulab.cli bench sgemm --size 1024,2048 \
    --out "$dir/warm_bench.csv"
TAIL=30 trial default_bench 50 bash -c "TIMEFORMAT='default bench wall time: %R s'; \
    time gpulab bench sgemm --size 1024,2048 --out '$dir/default_bench.csv'"
TAIL=4 trial old_bench 50 bash -c "TIMEFORMAT='old default bench wall time: %R s'; \
    time env PYTHONPATH=.old/src python3 -m gpulab.cli bench sgemm --size 1024,2048 --out '$dir/old_bench.csv'"
TAIL=8 trial twice 40 bash -c "for i in 1 2; do gpulab bench sgemm --variant v9,v13,cublas --size 2048 \
    --out '$dir/twice_'\$i.csv >'$dir/twice_'\$i.log 2>&1 || exit 1; done; $SUMMARY twice '$dir'"
trials_end
