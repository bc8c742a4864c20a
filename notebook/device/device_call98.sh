#!/usr/bin/env bash
# call 98 (2026-12-07, fifteenth session): where gv's time goes at a few hundred rows.
#   On an H200: each llm suite's best row, cuBLAS and the model alone's pick timed again (--alone),
#          the work calls 96 and 97 could not do on the H100s they got.
#   Elsewhere: gv at 300x31x1000 and 300x31x2048, which the model now puts at 3-5 us (its efficiency
#          lent from runs of 16 rows or fewer) and which ran 24.3 and 35.3 us on a fresh H100 in
#          4-row blocks (call 96): its row blocks and K slices swept (bench, -p), then one launch under
#          Nsight Compute with the stalls by instruction (--sass).
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call98.sh
set -u
source scripts/device_step.sh
call_begin "call98" 420
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=30 trial bf16_llm 200 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
    TAIL=30 trial sgemm_llm 200 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
else
    fresh_card "call98" notebook/probes/alone-h100/ceilings.csv
    TAIL=30 trial gv_sweep 120 gpulab bench sgemm -v gv -p BM=1,4 -p CT=32 -p KT=8 -p U=8 -p S=1,4,16 -p MINB=2 \
        --shape 300x31x1000,300x31x2048,7x31x2048 --no-sanitize --out "$OUT/gv-rows.csv"
    TAIL=20 trial beside 60 gpulab bench sgemm -v best,cublas --shape 300x31x1000,300x31x2048,7x31x2048 \
        --no-sanitize --out "$OUT/beside.csv"
    TAIL=60 trial gv_profile 120 gpulab profile sgemm gv -p BM=4 -p CT=32 -p KT=8 -p U=8 -p S=16 -p MINB=2 \
        --shape 300x31x2048 --sass --sass-csv "$OUT/gv-sass.csv" --csv "$OUT/gv-profile.csv"
fi
rm -rf results/*/reports
call_end "call98"
