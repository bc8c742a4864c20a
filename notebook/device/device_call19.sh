#!/usr/bin/env bash
# call 19 (2026-12-05): after call 18's tunes of ks: ks under compute-sanitizer (every tool; its
# default and tuned configs at the small ragged shape: results/h200/sanitize.csv), the llm suite on
# gemm_bf16 with ks among the candidates (results/h200/gemm_bf16-llm.csv) and the shapes of no list
# (probes/unlisted/call19/), then the GPU tests the session changed: gemm_bf16's and the four
# in-process benches that now write under a temporary results root (results/ checksummed before and
# after: unchanged).
# Usage (on the card, from the repository root): bash notebook/device/device_call19.sh
set -u
source scripts/device_step.sh
call_begin call19 585
find results -type f | sort | xargs md5sum >"$dir/results-before.md5"
TAIL=12 trial sanitize_ks 80 gpulab sanitize gemm_bf16 -v ks -j 8
TAIL=8 trial llm_bf16 170 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
mkdir -p "$dir/unlisted"
TAIL=12 trial unlisted_bf16 60 gpulab bench gemm_bf16 --suite notebook/probes/unlisted/unlisted.toml --contenders 1.5 \
    --no-sanitize --out "$dir/unlisted/gemm_bf16-unlisted.csv"
find results -type f | sort | xargs md5sum >"$dir/results-mid.md5"
TAIL=12 trial tests 200 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_suite_gpu.py tests/gpu/test_own_kernels_gpu.py \
    tests/gpu/test_torch_problem_gpu.py
find results -type f | sort | xargs md5sum >"$dir/results-after.md5"
TAIL=5 trial results_unchanged_by_tests 5 diff "$dir/results-mid.md5" "$dir/results-after.md5"
call_end call19
exit 0
