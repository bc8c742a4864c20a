#!/usr/bin/env bash
# call 44 (2026-12-06): kc's 96-wide tiles' own fidelity rows (its access model against Nsight
# Compute at the default and a ragged shape), on an H200 only, with what device time was left.
# Not run: 316 s of device time were left, too little to start a machine.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call44.sh
set -u
source scripts/device_step.sh
call_begin "call44" 200
if ! grep -q H200 "$OUT/gpu.txt"; then
    call_end "call44"; exit 0
fi
TAIL=12 trial fidelity_kc_bn96 180 gpulab fidelity gemm_bf16 -v kc -p BN=96
rm -rf results/*/reports
call_end "call44"
exit 0
