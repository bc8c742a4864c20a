# Sourced by device scripts after trials_begin (scripts/device_step.sh): gpulab ceilings on two bad
# days, each of which must leave results/h200/ceilings.csv byte-identical and exit non-zero:
#   truncated    the file cut off mid-line;
#   interrupted  Ctrl-C (SIGINT) INTERRUPT_AFTER seconds into measuring the tensor_tf32 row the file
#                lacks (a warm card measures it in under 4 s: at 6 s a complete run can rightly have
#                written the file first).
# The good file is restored after each.
F=results/h200/ceilings.csv
cp "$F" /tmp/ceilings.good
bad_day() {  # NAME SECONDS: gpulab ceilings under `timeout -s INT SECONDS` on the file as prepared, then the verdict
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
TAIL=4 trial interrupted 30 bash -c "bad_day 'interrupted while measuring tensor_tf32 again' ${INTERRUPT_AFTER:-2.5}"
