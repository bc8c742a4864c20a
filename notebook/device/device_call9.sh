#!/usr/bin/env bash
# Call 9 (session of 2026-12-04, second): the whole GPU suite on the session's final tree (the t1
# access-model rule, the tune's kept overall pick, the best-row model's lowest borrowed efficiency,
# the sanitizer fixtures), profiles read through the ncu-report wheel carried in .whl/.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call9.sh
set -u
BACK=$OUT
export OUT=/tmp/call9; mkdir -p "$OUT"
python3 -m pip install -q --no-deps --no-index --target /tmp/site .whl/ncu_report*.whl && export PYTHONPATH=/tmp/site
t0=$SECONDS
BUDGET=480 bash scripts/device_suite.sh suite9 410 55
echo "== suite: exit $? in $((SECONDS - t0)) s"
tar czf "$BACK/call9.tgz" -C "$OUT" . 2>/dev/null
exit 0
