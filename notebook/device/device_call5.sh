#!/usr/bin/env bash
# Call 5 (session of 2026-12-04, second): racecheck with and without the name filter, with device-
# and host-drawn inputs (notebook/probes/probe_racecheck_filter.py: issue 42's lead on the faults in
# clusters of two), then the whole GPU suite on the tree the previous session left unverified (the
# sanitizer's launch-count fix, the GPU tests it fixed). Logs come back as call5.tgz.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call5.sh
set -u
BACK=$OUT
export OUT=/tmp/call5; mkdir -p "$OUT"
python3 -m pip install -q --no-deps --no-index --target /tmp/site .whl/ncu_report*.whl && export PYTHONPATH=/tmp/site
source scripts/device_setup.sh || exit 1
t0=$SECONDS
timeout -k 5 85 python3 notebook/probes/probe_racecheck_filter.py --jobs 12 --timeout 75 >"$OUT/racecheck.log" 2>&1
echo "== racecheck probe: exit $? in $((SECONDS - t0)) s"; cat "$OUT/racecheck.log"
t0=$SECONDS
BUDGET=470 bash scripts/device_suite.sh suite5 405 55
echo "== suite: exit $? in $((SECONDS - t0)) s"
tar czf "$BACK/call5.tgz" -C "$OUT" . -C "$PWD" results/h200 2>/dev/null
exit 0
