#!/usr/bin/env bash
# call 82 (2026-12-06, seventh session): the serial fixup in the best row's model
# (Variant.serial_fixup, cost.serial_fixup_s: v12, v13 and d0, whose fixups read a tile's slices
# one after another), as committed, on a fresh card (the H100's ceilings only, the H200's runs lent):
# the GPU tests of the best row, then the best row at the shapes whose pick it moved on such a card
# (notebook/probes/fixup/, CPU), and the picks it replaced where call 81 did not time them
# (16x4096x4096: v12; 1024x1024x4096: sx); rows to $OUT. On an H200 it runs device_call77.sh's steps.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call82.sh
set -u
source scripts/device_step.sh
source notebook/device/h200_steps.sh
call_begin "call82" 400
if grep -q H200 "$OUT/gpu.txt"; then
    best_tests 200
    untimed_picks sgemm gemm_bf16
    rm -rf results/*/reports; call_end "call82"; exit 0
fi
fresh_card "call82" notebook/probes/alone-h100/ceilings.csv
best_tests 220
MOVED=16x4096x4096,64x4096x4096,257x129x8191,512x512x512,1024x1024x4096,2048x31x4096,4096x64x4096,300x31x2048,33x8191x129
TAIL=14 trial moved 80 gpulab bench sgemm -v best --shape $MOVED --no-sanitize --out "$OUT/moved-sgemm.csv"
TAIL=4 trial was_v12 30 gpulab bench sgemm -v v12 --shape 16x4096x4096 --no-sanitize --out "$OUT/was-sgemm.csv" \
    -p BM=64 -p BN=128 -p BK=8 -p WM=32 -p WN=64 -p WNITER=2 -p TM=4 -p TN=4 -p STAGES=2 -p MINB=2 -p GROUP_M=8 -p SK_ROUNDS=99
TAIL=4 trial was_sx 30 gpulab bench sgemm -v sx --shape 1024x1024x4096 --no-sanitize --out "$OUT/was-sgemm.csv" \
    -p BM=64 -p BN=64 -p BK=8 -p WM=32 -p WN=64 -p WNITER=2 -p TM=4 -p TN=4 -p STAGES=3 -p MINB=2 -p GROUP_M=8 -p S=4
rm -rf results/*/reports
call_end "call82"
exit 0
