#!/usr/bin/env bash
# One device call that tries several pieces of new work at once: each helper script named on the
# command line (notebook/device/device_<name>.sh, the records of calls) under its own time limit, then any device_batch.sh stages.
# A failing or slow piece does not stop the next. Logs land under $OUT/<name>/ and $OUT/logs/.
# Usage: bash scripts/device_trial.sh NAME[:SECONDS]... [-- STAGE...]
set -uo pipefail
source scripts/device_setup.sh || exit 1
archive() { tar czf "$OUT/trial.tgz.part" --exclude="*.tgz*" -C "$OUT" . -C "$PWD" results tests/fixtures 2>/dev/null &&
    mv "$OUT/trial.tgz.part" "$OUT/trial.tgz"; }
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    name=${1%%:*}; limit=${1#*:}; [ "$limit" = "$1" ] && limit=150; shift
    mkdir -p "$OUT/$name"
    t0=$SECONDS
    timeout -k 5 "$limit" bash "notebook/device/device_$name.sh" >"$OUT/$name/trial.log" 2>&1
    echo "== $name: exit $? in $((SECONDS - t0)) s"
    tail -n 25 "$OUT/$name/trial.log"
    archive  # after each piece: a call cut short by its time limit still brings back what ran
done
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] && bash scripts/device_batch.sh "$@"
archive
exit 0
