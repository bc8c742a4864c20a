#!/usr/bin/env bash
# The session's last call, on the committed tree (t4 with scale-d = 0): t4 against cuBLAS round after
# round at the two sizes where the BF16 target is 1.00x (8 rounds at 4096^3, 3 at 8192^3), then the
# whole GPU suite and the exclusive tests. Logs in $OUT/final22/.
# Usage: bash scripts/device_trial.sh final22:480
set -u
source scripts/device_step.sh
trials_begin final22 470
TAIL=4 trial ab4096 60 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 --run t4 --rounds 8
TAIL=4 trial ab8192 50 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 --run t4 --rounds 3
TAIL=8 trial gpu 330 python3 -m pytest -q -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=4 trial exclusive 60 python3 -m pytest -q -p no:cacheprovider -m "gpu and exclusive" tests/gpu
trials_end
