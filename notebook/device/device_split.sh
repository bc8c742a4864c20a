#!/usr/bin/env bash
# The sgemm split by family and the GEMM problem written once (gemm_common.GemmProblem), on the card:
# what the CPU tests could only check with stand-ins. Every sgemm and gemm_bf16 variant correct at
# 1000x1531x777 (the CPU float64 reference) and 4097^3 (the GPU one, cupy); the cuBLAS rows of both
# (their vendor calls); v14's TF32 split; and the split-K workspaces and counters (gv, sx, v12, v13:
# split_workspace.split_buffers, splitk.launch) allocated by cupy and left zero, launch after launch.
# 306 tests (244 + 62) of the 2,532 in tests/gpu, whose non-exclusive part took 320 s at -n 16;
# expected about 90 s, most of it compiling. Logs go to $OUT/split/. summary.txt first.
# Usage: bash scripts/device_trial.sh split:200
set -u
source scripts/device_step.sh
trials_begin split 190
TAIL=10 trial correct 150 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m "gpu and not exclusive" \
    tests/gpu/test_sgemm_gpu.py tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_tf32_split_gpu.py \
    -k "1000x1531x777 or 4097x4097x4097 or cublas or tf32_split"
TAIL=10 trial workspaces 40 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m "gpu and not exclusive" \
    tests/gpu/test_skinny_gpu.py tests/gpu/test_split_schedules_gpu.py -k "same_bits"
trials_end
