#!/usr/bin/env bash
# gpulab ceilings on bad days again, alone: final34's bad-day steps never ran (a shell function under
# timeout). A truncated ceilings.csv; Ctrl-C while it measures the tensor rows a file lacks: each must
# leave the file byte-identical and exit non-zero (a warm card measures the tensor rows in under
# 4 s: the first try, at 6 s, came after a complete run, which rightly wrote the file). Logs in $OUT/baddays35/.
# Usage: bash scripts/device_trial.sh baddays35:90
set -u
source scripts/device_step.sh
trials_begin baddays35 80
F=results/h200/ceilings.csv
cp "$F" /tmp/ceilings.good
bad_day() {  # NAME: the file as prepared, gpulab ceilings under `timeout -s INT $2`, then the verdict
    cp "$F" /tmp/ceilings.before
    timeout -s INT "$2" gpulab ceilings; rc=$?
    cmp -s "$F" /tmp/ceilings.before && same=byte-identical || same=CHANGED
    echo "$1: exit $rc, $F $same"
    cp /tmp/ceilings.good "$F"
    [ "$rc" -ne 0 ] && [ "$same" = byte-identical ]
}
export -f bad_day; export F  # trial runs its command under timeout: a child bash must see them
head -c 700 /tmp/ceilings.good > "$F"
TAIL=4 trial truncated 30 bash -c "bad_day truncated 25"
grep -v "^[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,tensor_tf32," /tmp/ceilings.good > "$F"
TAIL=4 trial interrupted 30 bash -c "bad_day 'interrupted while measuring tensor_tf32 again' 2.5"
trials_end
