#!/usr/bin/env bash
# call 96 (2026-12-07, fifteenth session): what calls 93-95 left, in one call whichever card comes.
#   On an H200: each llm suite's best row, cuBLAS and the model alone's pick timed again (--alone):
#          gemm_bf16's pick at 1024x6144x4096 is untimed there and six recorded best rows ran configs
#          the model no longer picks; then the 12 sgemm shapes whose picks the gv change
#          (gemm_common.passes_past_l2) moved, best row beside gv, sx and cuBLAS.
#   Elsewhere: the whole GPU suite on this tree (last clean pass on b17ba27), then the card as a
#          fresh one (the H200's runs lent, fresh_card) and the same 12 sgemm shapes (call 95).
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call96.sh
set -u
source scripts/device_step.sh
call_begin "call96" 570
MOVED=1x31x1000,3x2000x1000,3x2304x768,4x16384x2048,4x16384x8192,4x37888x3584,7x5120x3072,12x4800x1600,257x131x77,300x31x1000,300x31x2048,1x8192x8192
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 200 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 200 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
    TAIL=40 trial gv_moved 150 gpulab bench sgemm -v best,gv,sx,cublas --shape $MOVED --no-sanitize --out "$OUT/gv-moved.csv"
else
    gpu_suite 340 60
    fresh_card "call96" notebook/probes/alone-h100/ceilings.csv
    TAIL=40 trial gv_moved 150 gpulab bench sgemm -v best,gv,sx,cublas --shape $MOVED --no-sanitize --out "$OUT/gv-moved.csv"
fi
rm -rf results/*/reports
call_end "call96"
