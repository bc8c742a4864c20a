#!/usr/bin/env bash
# The session's last call, on the committed tree (t4 with BN = 192 as a tune choice): t4 against
# cuBLAS in alternation at 4096^3 (8 rounds) and at 2048^3 with the two cluster sizes (the tune's pick
# there is CLUSTER 1), then the whole GPU suite and the exclusive tests. Logs in $OUT/suite23/.
# Usage: bash scripts/device_trial.sh suite23:480
set -u
source scripts/device_step.sh
trials_begin suite23 470
TAIL=4 trial ab4096 60 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 --run t4 --rounds 8
TAIL=4 trial ab2048 40 python3 notebook/probes/ab_rungs.py gemm_bf16 2048x2048x2048 --run t4:CLUSTER=2 --run t4:CLUSTER=1 --rounds 5
TAIL=8 trial gpu 330 python3 -m pytest -q -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=4 trial exclusive 60 python3 -m pytest -q -p no:cacheprovider -m "gpu and exclusive" tests/gpu
trials_end
