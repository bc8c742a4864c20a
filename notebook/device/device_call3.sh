#!/usr/bin/env bash
# Call 3 of 2026-12-04: the whole GPU suite on the session's final tree (scripts/device_suite.sh),
# profiles read through the ncu-report wheel carried in .whl/ (the install's own interface crashes
# Python 3.12 on the H200: device_call2.sh). Logs come back as call3.tgz.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call3.sh
set -u
BACK=$OUT
export OUT=/tmp/call3; mkdir -p "$OUT"
python3 -m pip install -q --no-deps --no-index --target /tmp/site .whl/ncu_report*.whl && export PYTHONPATH=/tmp/site
t0=$SECONDS
bash scripts/device_suite.sh final 430 40
echo "== suite: exit $? in $((SECONDS - t0)) s"
tar czf "$BACK/call3.tgz" -C "$OUT" . 2>/dev/null
exit 0
