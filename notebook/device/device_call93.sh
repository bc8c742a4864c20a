#!/usr/bin/env bash
# call 93 (2026-12-07, thirteenth session): the whole GPU suite on this tree, and sgemm's llm best rows
# again. Two device commands on one warm machine.
#   suite: the whole GPU suite (gpu_suite: the shared tests 16 at a time, then the exclusive ones
#          alone); the last clean pass of it was at 47713a0 (call 90).
#   probe: each experiment's best row, cuBLAS and the model alone's pick (--alone) at every llm shape,
#          timed again in one run: 5 of the 40 sgemm best rows in results/h200/sgemm-llm.csv
#          (2026-12-05) ran a config the model no longer picks (gv at 1 token of the three wide
#          layers, v14 at 1024x4096x4096 and 1024x4096x14336), and t4's declared SCHEDULE
#          (Variant.stream_k_param) moved gemm_bf16's at 8192x4096x4096 to whole tiles, so the
#          README's suite table quoted picks gpulab no longer makes; the model alone now picks t4 in
#          192-wide whole tiles at 1024x6144x4096, where its 256-wide stream-K ran 1.13x the fastest.
#          Then `gpulab best --alone` on the card's rows, and the best row's GPU tests where the
#          BUDGET leaves time. On another card than an H200, the whole GPU suite instead. On any
#          card, the copy rate with a part of the SMs busy (notebook/probes/copy_sms/): the DRAM
#          limit the best row's model counts assumes every SM pulls.
#   last: the probe's llm suites alone (then the copy probe), for a call with little device time left.
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call93.sh suite|probe|last
set -u
source scripts/device_step.sh
PART=${1:?suite or probe}
if [ "$PART" = suite ]; then
    call_begin "call93-suite" 480
    gpu_suite 400 60
    rm -rf results/*/reports; call_end "call93-suite"; exit 0
fi
if [ "$PART" = last ]; then  # what little device time is left: the llm suites' rows, else the copy probe
    call_begin "call93-last" 240
    if grep -q H200 "$OUT/gpu.txt"; then
        TAIL=30 trial bf16_llm 200 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
        TAIL=30 trial sgemm_llm 200 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
    fi
    TAIL=40 trial copy_sms 90 python3 notebook/probes/copy_sms/copy_sms.py "$OUT/copy-sms.csv"
    rm -rf results/*/reports; call_end "call93-last"; exit 0
fi
call_begin "call93-probe" 560
if ! grep -q H200 "$OUT/gpu.txt"; then  # the suite's figures are the H200's: on another card, the GPU suite
    TAIL=40 trial copy_sms 90 python3 notebook/probes/copy_sms/copy_sms.py "$OUT/copy-sms.csv"
    gpu_suite 400 60; rm -rf results/*/reports; call_end "call93-probe"; exit 0
fi
TAIL=50 trial bf16_llm 200 gpulab bench gemm_bf16 --suite llm -v best,cublas --alone --no-sanitize
TAIL=50 trial sgemm_llm 300 gpulab bench sgemm --suite llm -v best,cublas --alone --no-sanitize
TAIL=10 trial alone_bf16 30 gpulab best gemm_bf16 --alone
TAIL=10 trial alone_sgemm 30 gpulab best sgemm --alone
TAIL=40 trial copy_sms 90 python3 notebook/probes/copy_sms/copy_sms.py "$OUT/copy-sms.csv"
best_tests 170
rm -rf results/*/reports
call_end "call93-probe"
