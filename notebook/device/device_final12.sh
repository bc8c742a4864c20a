#!/usr/bin/env bash
# After the plan note and the library call's total duration: the GPU tests they touch, a bench row whose
# RESIDENT the registers do not allow (v13 with 64x64 warp tiles: four blocks fit, RESIDENT=3), and a
# library call of two kernels (cuBLAS FP32 at 512^3: split-K and its reduction). Logs go to $OUT/final12/.
# Usage: bash scripts/device_trial.sh final12:300
set -u
source scripts/device_step.sh
trials_begin final12 290
TAIL=20 trial note 60 gpulab bench sgemm --variant v13 -p WM=64 -p RESIDENT=3,4 --size 2048 --out "$dir/bench.csv"
TAIL=20 trial splitk 40 gpulab profile sgemm cublas --size 512 --csv "$dir/scratch.csv"
TAIL=10 trial tests 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/gpu/test_profile_gpu.py \
    tests/gpu/test_split_schedules_gpu.py tests/gpu/test_sweep_gpu.py tests/gpu/test_faults_gpu.py
trials_end
