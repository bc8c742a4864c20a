#!/usr/bin/env bash
# Call 3 of 2026-12-04: the whole GPU suite on the session's final tree (scripts/device_suite.sh),
# profiles read through the ncu-report wheel carried in .whl/ (the install's own interface crashes
# Python 3.12 on the H200: device_call2.sh); then the main job as a user first meets it (`gpulab
# run`, the tour, from an empty compile cache, its output piped, each line stamped with the seconds
# since the start). Logs and the results written come back as call3.tgz.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call3.sh
set -u
BACK=$OUT
export OUT=/tmp/call3; mkdir -p "$OUT"
python3 -m pip install -q --no-deps --no-index --target /tmp/site .whl/ncu_report*.whl && export PYTHONPATH=/tmp/site
t0=$SECONDS
bash scripts/device_suite.sh final 420 40
echo "== suite: exit $? in $((SECONDS - t0)) s"
stamp='import sys, time
t = time.time()
for line in sys.stdin:
    print(f"{time.time() - t:7.1f} {line}", end="", flush=True)'
t0=$SECONDS
timeout -k 5 130 bash -c "GPULAB_CACHE=/tmp/fresh-cache gpulab run 2>&1 | python3 -c '$stamp'" >"$OUT/tour.log" 2>&1
echo "== tour: exit $? in $((SECONDS - t0)) s"; head -n 3 "$OUT/tour.log"; tail -n 25 "$OUT/tour.log"
tar czf "$BACK/call3.tgz" -C "$OUT" . -C "$PWD" results/h200 2>/dev/null
exit 0
