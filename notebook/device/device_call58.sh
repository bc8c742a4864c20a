#!/usr/bin/env bash
# call 58 (2026-12-06, third session; call 52 again, on 36569a5): on an H200, d0 tuned at all sixteen decode shapes of the llm suite (its tune
# had timed eight; resuming, it times the other eight: 8B's gate+up and 70B's qkv, gate+up and down,
# at 1 and 16 tokens), then the llm rows of gemm_bf16 timed again with each shape's model-alone pick beside
# its best row (bench --alone) and the verdict. On another card: the whole GPU suite on this tree.
# Ran on an H100 80GB HBM3 (2026-12-06, the H200 asked for and not come): its other-card branch, the
# whole GPU suite on 36569a5: "3325 passed, 1 skipped in 306.38s"; exclusive "2 passed, 1 skipped"
# (notebook/probes/gpu_suite/call58-h100/).
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call58.sh
set -u
source scripts/device_step.sh
call_begin "call58" 560
if ! grep -q H200 "$OUT/gpu.txt"; then
    gpu_suite 420 60
    call_end "call58"; exit 0
fi
TAIL=12 trial tune_d0 200 gpulab tune gemm_bf16 d0
TAIL=20 trial bench_alone_bf16 250 gpulab bench gemm_bf16 --suite llm -v best --alone --no-sanitize
TAIL=6 trial judge_bf16 40 gpulab best gemm_bf16 --suite llm --alone
rm -rf results/*/reports
call_end "call58"
exit 0
