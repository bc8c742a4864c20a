#!/usr/bin/env bash
# call 28 (2026-12-05, an H100): the whole GPU suite on the tree at 8c70b20, 3181 passed, 2 skipped
# (an H100 80GB HBM3, driver 580.159.04; the suite in one call was taken back mid-run twice, so it ran
# as three calls on one warm machine, the commands below). The files this session's GPU changes touch (sx's 32-wide tiles,
# the best row at 2048x31x4096) and those changed since call 23 (profile, ceilings): 1519 passed in
# 168 s; every other GPU test not marked exclusive: 1660 passed, 1 skipped in 200 s; the exclusive
# ones alone: 2 passed, 1 skipped. results/ unchanged by the tests (git status).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call28.sh
set -u
source scripts/device_setup.sh >/dev/null 2>&1
timeout 280 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 12 -m gpu tests/gpu/test_skinny_gpu.py \
    tests/gpu/test_sk_gpu.py tests/gpu/test_profile_gpu.py tests/gpu/test_memory_experiments_gpu.py 2>&1 | tail -25
git status --short results | head
timeout 250 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 14 -m "gpu and not exclusive" tests/gpu \
    --deselect tests/gpu/test_skinny_gpu.py --deselect tests/gpu/test_sk_gpu.py \
    --deselect tests/gpu/test_profile_gpu.py --deselect tests/gpu/test_memory_experiments_gpu.py 2>&1 | tail -15
git status --short results | head
timeout 90 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m "gpu and exclusive" tests/gpu 2>&1 | tail -6
