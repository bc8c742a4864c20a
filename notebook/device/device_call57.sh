#!/usr/bin/env bash
# call 57 (2026-12-06): the GPU tests of the best row (bench with best, --alone and the suites; sk's
# best row; the memory experiments' best rows; your own kernels' best rows) on the tree where a
# lending card's run of a config at the shape counts as measured there, on a card that borrows the
# H200's runs (any but the H200).
# Ran on an H100 80GB HBM3 (2026-12-06), on the source committed next as 0b38762 (the
# measured_here change, not yet committed; src and tests unchanged since): "874 passed in 136.38s".
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call57.sh
set -u
source scripts/device_step.sh
call_begin "call57" 200
TAIL=8 trial best_tests 190 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_suite_gpu.py tests/gpu/test_sk_gpu.py tests/gpu/test_memory_experiments_gpu.py \
    tests/gpu/test_own_kernels_gpu.py
call_end "call57"
exit 0
