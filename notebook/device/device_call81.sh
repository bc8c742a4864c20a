#!/usr/bin/env bash
# call 81 (2026-12-06, seventh session, on 5ee0f05 plus notebook/probes/fixup/): does the best row's
# model need a split tile's fixup as a serial cost? sgemm's v12 ran 110.3 us at 300x31x2048 on an
# H100 (call 80), cuBLAS 12.8: 5 tiles on 528 persistent blocks, each tile's first block adding 105
# partials one after another, which the model (2.5 us) does not count. notebook/probes/fixup/
# hack_fixup.py adds the tile's partials read by one SM at its share of the L2 read ceiling; on the
# recorded rows (CPU) it moves 8 gemm_bf16 and 13 sgemm picks over the broad shapes. Here, as a fresh
# card (the H100's ceilings only, the H200's runs lent): the best row at those shapes and the four
# of call 80 with the model as it is, then with the hack, then the contenders (each variant the
# model puts within 1.5x, at its tuned defaults) at call 80's four shapes; rows to $OUT.
# On an H200 it runs device_call77.sh's steps instead (the three untimed picks, the verdicts, d0's tune).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call81.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call81" 440
if grep -q H200 "$OUT/gpu.txt"; then  # an H200 at last: device_call77.sh's steps instead
    untimed_picks sgemm gemm_bf16
    tune_d0
    rm -rf results/*/reports; call_end "call81"; exit 0
fi
fresh_card "call81" notebook/probes/alone-h100/ceilings.csv
BF16=1x4096x1000,7x3000x1000,32x27648x5120,64x8192x8192,96x6400x1600,128x3072x4096,128x6144x4096,200x3584x3584,257x129x8191,300x31x2048,300x1536x1000,2049x31x4093
SG=1x4096x1000,4x16384x8192,7x3000x1000,12x4800x1600,16x6144x4096,16x10240x8192,32x27648x5120,33x8191x129,64x4096x4096,96x6400x1600,257x129x8191,300x31x2048,300x1536x1000,512x512x512,2048x31x4096,4096x64x4096,8191x33x8193
OFF=7x3000x1000,300x1536x1000,1x4096x1000,300x31x2048
TAIL=4 trial base_bf16 60 gpulab bench gemm_bf16 -v best --shape $BF16 --no-sanitize --out "$OUT/base-gemm_bf16.csv"
TAIL=4 trial fix_bf16 60 python3 notebook/probes/fixup/with_fixup.py bench gemm_bf16 -v best --shape $BF16 --no-sanitize --out "$OUT/fix-gemm_bf16.csv"
TAIL=4 trial base_sgemm 70 gpulab bench sgemm -v best --shape $SG --no-sanitize --out "$OUT/base-sgemm.csv"
TAIL=4 trial fix_sgemm 70 python3 notebook/probes/fixup/with_fixup.py bench sgemm -v best --shape $SG --no-sanitize --out "$OUT/fix-sgemm.csv"
TAIL=4 trial cont_bf16 80 gpulab bench gemm_bf16 --shape $OFF --contenders 1.5 --no-sanitize --out "$OUT/cont-gemm_bf16.csv"
TAIL=4 trial cont_sgemm 80 gpulab bench sgemm --shape $OFF --contenders 1.5 --no-sanitize --out "$OUT/cont-sgemm.csv"
rm -rf results/*/reports
call_end "call81"
exit 0
