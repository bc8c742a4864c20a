#!/usr/bin/env bash
# call 93 (2026-12-07, thirteenth session): the whole GPU suite on this tree, and sgemm's llm best rows
# again. Two device commands on one warm machine.
#   suite: the whole GPU suite (gpu_suite: the shared tests 16 at a time, then the exclusive ones
#          alone); the last clean pass of it was at 47713a0 (call 90).
#   probe: sgemm's best row and cuBLAS at every llm shape, timed again in one run: 5 of the 40 best
#          rows in results/h200/sgemm-llm.csv (2026-12-05) ran a config the model no longer picks
#          (gv at 1 token of the three wide layers, v14 at 1024x4096x4096 and 1024x4096x14336), so the
#          README's suite table quoted picks gpulab no longer makes. H200 only (the figures are its).
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call93.sh suite|probe
set -u
source scripts/device_step.sh
PART=${1:?suite or probe}
if [ "$PART" = suite ]; then
    call_begin "call93-suite" 480
    gpu_suite 400 60
    rm -rf results/*/reports; call_end "call93-suite"; exit 0
fi
call_begin "call93-probe" 560
grep -q H200 "$OUT/gpu.txt" || { echo "not an H200: the suite's figures are the H200's"; call_end "call93-probe"; exit 0; }
TAIL=50 trial sgemm_llm 400 gpulab bench sgemm --suite llm -v best,cublas --no-sanitize
TAIL=10 trial alone 60 gpulab best sgemm --alone
rm -rf results/*/reports
call_end "call93-probe"
