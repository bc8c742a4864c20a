#!/usr/bin/env bash
# call 25 (written 2026-12-05; ran on an H100 the next session, in two slices, 1:20 and 20:): whether
# notebook/patches/best_config_factor.patch (each config calibrated against its variant's fastest
# where a tune timed both, from every row the tunes wrote) picks faster configs where it moves the
# pick. On the recorded tunes, leaving each tuned shape out, it ranks first a config within 5% of the
# tune's fastest more often (d0 3 of 8 against 1, ks 24 of 24 against 16, geomean over the configs
# the tunes timed 1.05x against 1.145x for d0, 1.18x against 1.44x for sgemm's v14), but it moves
# the pick at 37 llm and unlisted shapes (recomputed after call 24's tunes, 2026-12-05; 35 before) to configs no card timed there, and its model errs more on
# sgemm's suite rows (notebook/probes/config_factor/). Each moved pair is timed here with gpulab's A/B;
# keep the patch only if the patch's picks are not slower overall.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call25.sh [1:20|20:]
# (a slice of the 37 pairs, so that each call stays near four minutes; default all)
set -u
source scripts/device_step.sh
part=${1:-1:}
name="call25_${part/:/_}"
call_begin "$name" 560
TAIL=40 trial ab_moved 540 python3 notebook/probes/config_factor/ab_moved_picks.py "$dir" 1% "$part"
call_end "$name"
exit 0
