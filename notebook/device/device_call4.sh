#!/usr/bin/env bash
# Call 4 of 2026-12-04, on the machine call 3 left warm: one bench run twice (issue 41: each median
# against the other's interval), the softmax example beside torch, d0, kc and t3 at shapes of no
# suite (the best-row model's efficiency for them, into the main CSV), then the llm suite on both
# GEMMs and the figure of the model's picks.
# Usage (on the card, from the repository root): bash notebook/device/device_call4.sh
set -u
BACK=$OUT
export OUT=/tmp/call4; mkdir -p "$OUT"
source scripts/device_setup.sh || exit 1
part() {  # part NAME SECONDS COMMAND...: one piece under its own limit, its log in $OUT/NAME.log
    local name=$1 limit=$2; shift 2; local t0=$SECONDS
    timeout -k 5 "$limit" "$@" >"$OUT/$name.log" 2>&1
    echo "== $name: exit $? in $((SECONDS - t0)) s"; tail -n "${TAIL:-25}" "$OUT/$name.log"
}
mkdir -p "$OUT/twice"
TAIL=8 part twice 40 bash -c "for i in 1 2; do gpulab bench sgemm --size 2048 --no-sanitize \
    --out $OUT/twice/twice_\$i.csv >$OUT/twice/twice_\$i.log 2>&1 || exit 1; done; \
    python3 notebook/device/device_timing_summary.py twice $OUT/twice"
mkdir -p examples/softmax/results/h200
TAIL=14 part softmax 25 gpulab bench softmax --problem examples/softmax/softmax.py --shape 8192x4096 \
    --shape 16384x1024 --out examples/softmax/results/h200/softmax.csv
TAIL=8 part calibrate 30 gpulab bench gemm_bf16 --variant d0,kc --no-sanitize --shape 8x12288x4096 \
    --shape 16x5120x5120 --shape 128x3072x4096 --shape 256x5120x2048
TAIL=4 part calibrate_t3 15 gpulab bench gemm_bf16 --variant t3 --no-sanitize --shape 128x3072x4096 \
    --shape 256x5120x2048
TAIL=6 part llm_bf16 95 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
TAIL=6 part llm_sgemm 75 gpulab bench sgemm --suite llm --contenders 1.3 --no-sanitize
TAIL=40 part llm_figure 10 python3 -c 'import sys; from gpulab.report.picks import summary; print(summary(sys.argv[1:]))' \
    results/h200/gemm_bf16-llm.csv results/h200/sgemm-llm.csv
tar czf "$BACK/call4.tgz" -C "$OUT" . -C "$PWD" results/h200 examples/softmax/results 2>/dev/null
exit 0
