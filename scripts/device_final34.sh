#!/usr/bin/env bash
# The last look on the card: gpulab ceilings on bad days (a truncated ceilings.csv; Ctrl-C while it
# measures the tensor rows a file lacks), each leaving the file byte-identical and exiting non-zero,
# then the GPU suite on this exact tree. Logs in $OUT/final34/.
# Usage: bash scripts/device_trial.sh final34:540
set -u
source scripts/device_step.sh
trials_begin final34 535
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
TAIL=4 trial interrupted 30 bash -c "bad_day 'interrupted while measuring tensor_tf32 again' 6"
TAIL=15 trial gpu_suite 340 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=8 trial exclusive 60 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m "gpu and exclusive" tests/gpu
trials_end
