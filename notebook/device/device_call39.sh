#!/usr/bin/env bash
# call 39 (2026-12-06, H200), after call 36's results were copied into the tree: kc's fidelity rows at
# call 24's shapes measured again (they recorded kc's source before the 96-wide tiles); t3 and t4
# tuned at the llm shapes of 128 tokens, where the suite's rows timed them faster than kc's tuned
# pick at two shapes (128x57344x8192 t3, 128x10240x8192 t4: a tune of kc alone says which kc config
# is best, not which variant), and those rows timed again; then the model-alone picks timed where the
# suite's rows had not timed their config (notebook/probes/alone/time_alone_picks.py), so `gpulab best
# --suite llm --alone` judges every pick on its own time, not on its variant's fastest there.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call39.sh
set -u
source scripts/device_step.sh
call_begin "call39" 300
if ! grep -q H200 "$OUT/gpu.txt"; then
    call_end "call39"; exit 0
fi
TAIL=8 trial fidelity_kc 40 gpulab fidelity gemm_bf16 -v kc --shape 16x4096x4096,13x1000x776
m128=128x6144x4096,128x4096x4096,128x28672x4096,128x4096x14336,128x10240x8192,128x8192x8192,128x57344x8192,128x8192x28672
TAIL=12 trial tune_t3 60 gpulab tune gemm_bf16 t3 -p BN=128,256 -p STAGES=3,4,5 -p GROUP_M=4,8 --shape "$m128"
TAIL=12 trial tune_t4 60 gpulab tune gemm_bf16 t4 -p BN=128,192,256 -p STAGES=4,6 -p GROUP_M=8 -p CLUSTER=1 \
    -p STORE=1 -p PINGPONG=0 -p SCHEDULE=0,1 -p EDGE=0 --shape "$m128"
TAIL=14 trial llm128 60 gpulab bench gemm_bf16 --suite notebook/probes/llm128/llm.toml --contenders 1.2 --no-sanitize
TAIL=40 trial alone_bf16 200 python3 notebook/probes/alone/time_alone_picks.py gemm_bf16 llm
TAIL=10 trial alone_sgemm 60 python3 notebook/probes/alone/time_alone_picks.py sgemm llm
rm -rf results/*/reports
call_end "call39"
exit 0
