#!/usr/bin/env bash
# Call 4 of 2026-12-04, on the machine call 3 left warm: one bench run twice (issue 41: each median
# against the other's interval), the softmax example beside torch, then `gpulab run --full`, the
# whole grid, timed (issue 39: no slower than the 432 s of 2026-12-03), under what time is left.
# Usage (on the card, from the repository root): LIMIT=SECONDS bash notebook/device/device_call4.sh
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
tar czf "$BACK/call4.tgz" -C "$OUT" . -C "$PWD" examples/softmax/results 2>/dev/null
TAIL=30 part full "${LIMIT:-380}" bash -c "TIMEFORMAT='gpulab run --full wall time: %R s'; time gpulab run --full"
tar czf "$BACK/call4.tgz" -C "$OUT" . -C "$PWD" results/h200 examples/softmax/results 2>/dev/null
exit 0
