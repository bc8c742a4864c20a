#!/usr/bin/env bash
# call 19 (2026-12-05, on the machine call 18 left warm; run as one command line, recorded here): the
# shapes of no list on gemm_bf16 after call 18's tunes (probes/ks/call19/: the model picked d0 at 1 and
# 7 tokens, 0.78x and 0.85x cuBLAS BF16), then gemm_bf16's GPU tests and the four in-process benches
# that now write under a temporary results root (405 passed; 2 failed: the two Nsight Compute tests of
# test_own_kernels_gpu.py, their workers killed, as in call 14, by Nsight Compute 2025.3.1's own report
# reader without the reader wheel; and results/ changed under the tests: a profile test wrote
# results/h200/reports/transpose-tile-ROWS8-1000x1532-profile.ncu-rep).
# Usage (on the card, from the repository root): bash notebook/device/device_call19.sh
set -u
source scripts/device_step.sh
call_begin call19 400
find results -type f | sort | xargs md5sum >"$dir/results-before.md5"
mkdir -p "$dir/unlisted"
TAIL=12 trial unlisted_bf16 70 gpulab bench gemm_bf16 --suite notebook/probes/unlisted/unlisted.toml --contenders 1.5 \
    --no-sanitize --out "$dir/unlisted/gemm_bf16-unlisted.csv"
find results -type f | sort | xargs md5sum >"$dir/results-mid.md5"
TAIL=12 trial tests 240 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_suite_gpu.py tests/gpu/test_own_kernels_gpu.py \
    tests/gpu/test_torch_problem_gpu.py
find results -type f | sort | xargs md5sum >"$dir/results-after.md5"
TAIL=5 trial results_unchanged_by_tests 5 diff "$dir/results-mid.md5" "$dir/results-after.md5"
call_end call19
exit 0
