#!/usr/bin/env bash
# After the ring's tile macros moved into cp_async_ring.cuh (SASS of v9-v12 and sx unchanged under
# NVRTC 13.5) and the split-K/stream-K GPU tests took their checks from tests/gpu/sgemm_checks.py:
# v9's and sx's fidelity rows on the new source hash, then sgemm's GPU tests.
# Usage: bash scripts/device_trial.sh final6:330
source scripts/device_step.sh
dir=$OUT/final6; mkdir -p "$dir"
TAIL=6 step fidelity 80 gpulab fidelity sgemm --variant v9,sx --shape 512x512x512 --shape 300x388x196 --shape 129x67x33
TAIL=8 step sgemm_gpu 220 python3 -m pytest -q -n 16 -p no:cacheprovider --maxfail=20 -m "gpu and not exclusive" \
    tests/gpu/test_sgemm_gpu.py tests/gpu/test_skinny_gpu.py tests/gpu/test_stream_k_gpu.py tests/gpu/test_sk_gpu.py
