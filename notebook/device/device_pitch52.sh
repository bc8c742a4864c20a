#!/usr/bin/env bash
# Does t4 read operands whose row pitch is 16-byte aligned (K % 16 == 8) slower than 32- or 128-byte
# aligned ones? 4096x4096x4104 ran 199.3 us against 4096^3's 183.7 (device_edge42.sh), far more than
# its one more k-tile. First K = 4104 / 4112 / 4160 against 4096 (all but 4096 65 k-tiles) and the
# 1000x3000 K = 768 / 776 / 784 / 832 series, then the staging copy's pitch rounded up to 8 (today),
# 16 or 64 elements at 4097^3 and 1000x3000x777 (notebook/probes/ab_pitch.py).
# Logs in $OUT/pitch52/. Usage: bash scripts/device_trial.sh pitch52:200
set -u
source scripts/device_step.sh
trials_begin pitch52 195
TAIL=10 trial k_big 45 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 4096x4096x4104 4096x4096x4112 \
    4096x4096x4160 --run t4 --rounds 3
TAIL=16 trial k_small 35 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x768 1000x3000x776 1000x3000x784 \
    1000x3000x832 --run t4:BN=192,CLUSTER=1 --run t4:BN=200,CLUSTER=4 --rounds 5
for pad in 8 16 64; do
    TAIL=4 trial pad$pad 30 python3 notebook/probes/ab_pitch.py $pad gemm_bf16 4097x4097x4097 1000x3000x777 \
        --run t4:EDGE=2 --run t4:BN=192,CLUSTER=1 --run t4:BN=200,CLUSTER=4 --rounds 3
done
trials_end
