#!/usr/bin/env bash
# After the tuned-defaults fix (nearest tuned shape by class, not volume): the best row and the rungs
# whose configs it changed, at every FP32 target shape, with cuBLAS; then the GPU tests on the final
# tree. Results in results/<gpu>/; logs in $OUT/final3/. Usage: bash scripts/device_trial.sh final3:420
source scripts/device_step.sh
dir=$OUT/final3; mkdir -p "$dir"
TAIL=30 step bench_best 110 gpulab bench sgemm --variant v11,sx,best \
    --shape 1024x1024x1024 --shape 2048x2048x2048 --shape 4000x4000x4000 --shape 4096x4096x4096 \
    --shape 4097x4097x4097 --shape 8192x8192x8192 --shape 1000x3000x777 --shape 512x512x512 \
    --shape 4096x64x4096 --shape 64x4096x4096 --shape 1x8192x8192 --shape 8192x1x8192
TAIL=12 step pytest_gpu 250 python3 -m pytest -m "gpu and not exclusive" -q -n 16 -p no:cacheprovider --maxfail=30
