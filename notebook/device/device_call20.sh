#!/usr/bin/env bash
# call 20 (2026-12-05, warm machine, one command line, recorded here, carry [".whl"]): with the report
# reader wheel, test_own_kernels_gpu.py passes (6 passed) but its profile tests write five .ncu-rep
# files under results/h200/reports/; and ks beside d0 at two decode shapes of no list
# (probes/ks/call20/ks-unlisted.csv: at 7x4096x4096 ks 19.6 us, d0 16.8, cuBLAS 14.3).
# Usage (on the card, from the repository root): bash notebook/device/device_call20.sh
set -u
source scripts/device_step.sh
call_begin call20 200
pip install -q --no-deps --no-index --target /tmp/site .whl/ncu_report*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site
find results -type f | sort | xargs md5sum >"$dir/results-before.md5"
TAIL=12 trial own_kernels 120 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 4 -m gpu \
    tests/gpu/test_own_kernels_gpu.py
find results -type f | sort | xargs md5sum >"$dir/results-after.md5"
TAIL=5 trial results_unchanged 5 diff "$dir/results-before.md5" "$dir/results-after.md5"
TAIL=20 trial ks_unlisted 40 gpulab bench gemm_bf16 -v ks,d0 -p TN=8,16 --shape 1x5120x3000 --shape 7x4096x4096 \
    --no-sanitize --out "$dir/ks-unlisted.csv"
call_end call20
exit 0
