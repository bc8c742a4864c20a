#!/usr/bin/env bash
# call 90 (2026-12-06, tenth session, on the fixed cost below a variant's runs, Calibration.below):
# two device commands on one warm machine.
#   probe: the best row beside the tensor-core variants (gemm_bf16) or alone (sgemm) and cuBLAS, at
#          shapes of no list chosen before any was timed: the three whose pick the change moved
#          (3x2000x1000: ks to d0; 3x2304x768: ks to t1; 96x6400x1600: kc to t3), N = 31 (1, 7 and
#          300 rows), 300x3000x1000, 7x2500x1000, 48x11008x4096 and 2x3072x3072. On a card other
#          than the H200 the model lends the H200's runs (fresh_card).
#   suite: the whole GPU suite on this tree.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call90.sh probe|suite
set -u
source scripts/device_step.sh
PART=${1:?probe or suite}
if [ "$PART" = suite ]; then
    call_begin "call90-suite" 480
    gpu_suite 400 60
    rm -rf results/*/reports; call_end "call90-suite"; exit 0
fi
call_begin "call90-probe" 420
grep -q H200 "$OUT/gpu.txt" || fresh_card "call90-probe" notebook/probes/alone-h100/ceilings.csv
OFF=3x2000x1000,3x2304x768,96x6400x1600,1x31x1000,7x31x4096,300x31x1000,300x3000x1000,7x2500x1000,48x11008x4096,2x3072x3072
TAIL=40 trial bf16 280 gpulab bench gemm_bf16 -v best,d0,t1,t2,t3,kc,ks --shape $OFF --no-sanitize --out "$OUT/off-gemm_bf16.csv"
TAIL=14 trial fp32 100 gpulab bench sgemm -v best --shape $OFF --no-sanitize --out "$OUT/off-sgemm.csv"
rm -rf results/*/reports
call_end "call90-probe"
