#!/usr/bin/env bash
# If the lent card is an H100, not the H200 every figure so far is from (written 2026-12-05, not run):
# a second card for "any NVIDIA GPU": its ceilings, the main job's tour, and the GPU tests of what
# changed since the H200's last suite (sx's 32-wide tiles and the best row at 2048x31x4096), all
# under results/h100-80gb-hbm3/. Calls 24-26 were written for the H200's gaps and tunes: keep them for an H200.
# Then the whole GPU suite on this card (bash scripts/device_suite.sh h100suite 440 70, its own call).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_h100.sh
set -u
source scripts/device_step.sh
call_begin h100 560
TAIL=20 trial ceilings 240 gpulab ceilings
TAIL=30 trial tour 200 gpulab run
TAIL=12 trial tests 100 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 8 -m gpu \
    tests/gpu/test_skinny_gpu.py tests/gpu/test_sk_gpu.py -k "narrow or best_row"
call_end h100
exit 0
