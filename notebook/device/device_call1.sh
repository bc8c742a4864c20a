#!/usr/bin/env bash
# First call of 2026-12-04 (issues 39-43 session): the new BF16 kernels for few tiles (d0 decode,
# kc split-K in a cluster: their GPU tests and benches beside t4 and cuBLAS), issue 41's timing
# targets and its GPU tests, and the cost of a default bench against the code before issue 41
# (carried in .old/, the tree of 524a651). Logs and CSVs come back as one archive, call1.tgz.
# Usage (on the card, from the repository root, carry [".old"]): bash notebook/device/device_call1.sh
set -u
BACK=$OUT
export OUT=/tmp/call1; mkdir -p "$OUT"
source scripts/device_setup.sh || exit 1
export GPULAB_CACHE=/tmp/gpulab-cache  # a fresh compile cache: cold compiles are part of what is measured
t0=$SECONDS
timeout -k 5 235 bash notebook/device/device_bf16_small.sh >"$OUT/bf16_small.log" 2>&1
echo "== bf16_small: exit $? in $((SECONDS - t0)) s"; tail -n 45 "$OUT/bf16_small.log"
t0=$SECONDS
timeout -k 5 300 bash notebook/device/device_timing.sh >"$OUT/timing.log" 2>&1
echo "== timing: exit $? in $((SECONDS - t0)) s"; tail -n 70 "$OUT/timing.log"
tar czf "$BACK/call1.tgz" -C "$OUT" . 2>/dev/null
exit 0
