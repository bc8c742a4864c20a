#!/usr/bin/env bash
# The whole GPU suite on this tree, under a name: the tests that may share the card (16 at a time),
# then those marked `exclusive` alone. Logs and a summary in $OUT/NAME/.
# Usage, on the GPU machine from the repository root: bash scripts/device_suite.sh NAME [SECONDS [EXCLUSIVE_SECONDS]]
# On the H200 (2026-12-02) the first part took 320-330 s: the default limit is 430 s, the exclusive part 70 s.
set -u
[ $# -ge 1 ] || { echo "usage: device_suite.sh NAME [SECONDS [EXCLUSIVE_SECONDS]]" >&2; exit 2; }
source scripts/device_setup.sh || exit 1
source scripts/device_step.sh
trials_begin "$1" $(( ${2:-430} + ${3:-70} + 10 ))
gpu_suite "${2:-430}" "${3:-70}"
trials_end
[ -z "$FAILED" ]
