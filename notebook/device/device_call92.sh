#!/usr/bin/env bash
# call 92 (2026-12-07, eleventh session): shapes of no list, as a new user would bring them, and the
# whole GPU suite on this tree. Two device commands on one warm machine.
#   probe: sgemm's rungs beside its best row and cuBLAS at the four shapes of no list where the best
#          row ran under 0.9x cuBLAS on an H100 (call 90), and at six shapes of other public models
#          chosen before any was timed (BERT-base FFN, Phi-3-mini QKV, TinyLlama down, Gemma-2B's
#          up at decode, a 5120x1536 at 24 tokens); the same six and 3x2304x768 (the pick 8d592c3
#          moved to d0) for gemm_bf16 beside every tensor-core variant. On an H200 only: t2 tuned at
#          three memory-bound shapes (its one memory-bound run is 512^3: kc is picked where t2 ran
#          1.17x faster). v13 at S = 1, 2, 4, 16 (at most that many slices; BK 8 and 16) at the four sgemm shapes: its
#          plan cut 300x3000x1000's 120 tiles 13 ways (1,560 blocks, 51 MB of partials), and it ran
#          88.4 us where the model put 48. The picks that counting a split's partials where the access
#          model cannot say moved (split_partials_bytes): the best row there, and v12's config picked before.
#          On another card the model lends the H200's runs (fresh_card).
#          Then the best row's GPU tests (best_tests), where the call's BUDGET (seconds) leaves time.
#   suite: the whole GPU suite on this tree.
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call92.sh probe|suite
set -u
source scripts/device_step.sh
PART=${1:?probe or suite}
if [ "$PART" = suite ]; then
    call_begin "call92-suite" 480
    gpu_suite 400 60
    rm -rf results/*/reports; call_end "call92-suite"; exit 0
fi
call_begin "call92-probe" 560
grep -q H200 "$OUT/gpu.txt" || fresh_card "call92-probe" notebook/probes/alone-h100/ceilings.csv
NEW=512x3072x768,64x768x3072,4x16384x2048,256x9216x3072,2048x2048x5632,24x5120x1536
UNDER=300x3000x1000,300x31x1000,48x11008x4096,96x6400x1600
MOVED=33x8191x129,128x4096x1000,256x3072x768,257x131x77,512x512x512
TAIL=30 trial v13split 80 gpulab bench sgemm -v v13 -p S=1,2,4,16 -p BK=8,16 --shape $UNDER --no-sanitize --out "$OUT/v13-split.csv"
TAIL=20 trial moved 50 gpulab bench sgemm -v best --shape $MOVED --no-sanitize --out "$OUT/moved-best.csv"
TAIL=20 trial moved_v12 50 gpulab bench sgemm -v v12 -p BM=64 -p BN=128 -p BK=8 -p WM=32 -p WN=64 -p WNITER=2 -p STAGES=2 -p MINB=2 -p GROUP_M=8 -p SK_ROUNDS=99 --shape $MOVED,96x6400x1600 --no-sanitize --out "$OUT/moved-v12.csv"
TAIL=60 trial fp32 160 gpulab bench sgemm -v best,v9,v10,v11,v12,v13,v14,sk,sx,gv,gt --shape $UNDER,$NEW --no-sanitize --out "$OUT/off-sgemm.csv"
TAIL=40 trial bf16 120 gpulab bench gemm_bf16 -v best,d0,t1,t2,t3,t4,kc,ks --shape $NEW,3x2304x768 --no-sanitize --out "$OUT/off-gemm_bf16.csv"
best_tests 170
if grep -q H200 "$OUT/gpu.txt"; then
    TAIL=10 trial t2 90 gpulab tune gemm_bf16 t2 --shape 128x2048x2048,256x4096x1024,64x8192x2048 --budget 12
fi
rm -rf results/*/reports
call_end "call92-probe"
