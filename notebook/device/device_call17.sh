#!/usr/bin/env bash
# Call 17 (2026-12-05): issue 41's cost target is against a default bench before issue 41 (524a651,
# carried in .old/pre41/src), which call 16 did not time (its .old was 37fffb1, already noise-aware):
# the same default bench, warm compile cache, in alternation, twice each. And `gpulab profile` without
# the reader wheel, which call 16's command line got wrong (--out needs --full): one line, exit 2.
#   mkdir -p .old/pre41 && git archive 524a651 src | tar -x -C .old/pre41
# Ran: the default bench 13.2 and 11.1 s against 16.7 and 16.6 before issue 41 (warm cache); profile
# without the wheel still died (exit 139) with ncu_reader's child-process check in place. Two commands
# after it (same machine): `python3 -X faulthandler -m gpulab.cli profile sgemm v1 --size 64 --csv
# /tmp/p.csv` showed the crash in the install's ncu_report.py, IMetric.unit, under launch_of, also
# with the child reading every metric's unit and value first (it did not crash); with the 2026.3.1
# wheel on PYTHONPATH the same profile exited 0.
# Usage (on the card, from the repository root, carry [".old"]): bash notebook/device/device_call17.sh
set -u
source scripts/device_step.sh
call_begin call17 200
TAIL=4 trial profile_without_wheel 40 bash -c "gpulab profile sgemm v1 --size 64 --csv $dir/p.csv; echo exit \$?"
TAIL=2 trial warm_cache 40 env PYTHONPATH=.old/pre41/src python3 -m gpulab.cli bench sgemm --size 1024,2048 --out "$dir/warm.csv"
for i in 1 2; do
    TAIL=1 trial "default_bench_$i" 30 bash -c "TIMEFORMAT='default bench wall time: %R s'; \
        time gpulab bench sgemm --size 1024,2048 --out '$dir/default_bench_$i.csv' >/dev/null"
    TAIL=1 trial "pre41_bench_$i" 30 bash -c "TIMEFORMAT='pre-41 default bench wall time: %R s'; \
        time env PYTHONPATH=.old/pre41/src python3 -m gpulab.cli bench sgemm --size 1024,2048 --out '$dir/pre41_bench_$i.csv' >/dev/null"
done
call_end call17
exit 0
