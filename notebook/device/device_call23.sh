#!/usr/bin/env bash
# call 23 (2026-12-05): the whole GPU suite on this session's tree (ks's new fixup, the tests' results
# root, device_setup.sh's reader wheel), the tests that may share the card 16 at a time, then those
# marked exclusive alone; results/ checked unchanged by them. Measured: 2951 passed, 1 failed (the
# ceilings test: a row's interval reached below zero under 16 workers, which the reader refused),
# exclusive 2 passed, 1 skipped; two profile tests left four .ncu-rep files in results/h200/reports/.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call23.sh
set -u
source scripts/device_step.sh
call_begin call23 580
find results -type f | sort | xargs md5sum >"$dir/results-before.md5"
gpu_suite 440 70
find results -type f | sort | xargs md5sum >"$dir/results-after.md5"
TAIL=5 trial results_unchanged 5 diff "$dir/results-before.md5" "$dir/results-after.md5"
call_end call23
exit 0
