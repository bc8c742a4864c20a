#!/usr/bin/env bash
# The whole GPU suite and the exclusive tests on the tree that launches staged one-round GEMMs behind
# their copy (device_pdl2.sh's test step was cut by its limit after 9 failures: the staging test
# still called pad_k without its new keyword). Each failure's reason in the log. Then t4's grouped
# tile order, never varied in its tunes (GROUP_M 8 throughout; t3's tune found 16 ahead of 8 by
# 0.8% at 4096^3), in alternation with cuBLAS at 4096^3 and 8192^3. Logs in $OUT/verify25/.
# Usage: bash scripts/device_trial.sh verify25:500
set -u
source scripts/device_step.sh
trials_begin verify25 495
TAIL=40 trial gpu 340 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=6 trial exclusive 50 python3 -m pytest -q -rfE -p no:cacheprovider -m "gpu and exclusive" tests/gpu
TAIL=6 trial group_4096 50 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 --run t4 --run t4:GROUP_M=4 \
    --run t4:GROUP_M=16 --rounds 6
TAIL=6 trial group_8192 50 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 --run t4:SCHEDULE=1 \
    --run t4:SCHEDULE=1,GROUP_M=4 --run t4:SCHEDULE=1,GROUP_M=16 --rounds 3
trials_end
