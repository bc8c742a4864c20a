#!/usr/bin/env bash
# The staged TMA rungs launched as programmatic dependents of their staging copy (griddepcontrol):
# the tensor-core GPU tests (every staged shape there now takes that launch), then the pair timed
# both ways in alternation with cuBLAS at the two staged target shapes, t4 at the tuned picks there
# (BN 192; clusters of 1 at 1000x3000x777) and at clusters of 2, t2 and t3 at their defaults.
# Logs in $OUT/pdl/.
# Usage: bash scripts/device_trial.sh pdl:330
set -u
source scripts/device_step.sh
trials_begin pdl 325
trial tests 200 python3 -m pytest -m gpu -q -n 16 -p no:cacheprovider tests/gpu/test_wgmma_gpu.py \
    tests/gpu/test_gemm_bf16_gpu.py
TAIL=30 trial ab_small 60 python3 notebook/probes/ab_pdl.py 1000x3000x777 --run t4:BN=192,CLUSTER=1 --run t4:BN=192 \
    --run t2 --run t3 --rounds 7
TAIL=30 trial ab_4097 60 python3 notebook/probes/ab_pdl.py 4097x4097x4097 --run t4:BN=192,CLUSTER=1 --run t4:BN=192 --rounds 3
trials_end
