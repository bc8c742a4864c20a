#!/usr/bin/env bash
# Call 16 (2026-12-05): call 14's GPU suite failed 16 tests: 15 where the profile read its report
# through Nsight Compute 2025.3.1's own interface, which killed Python 3.12 (signal 11, no message),
# and one window test that reads times while 15 other processes share the card. Now: `gpulab
# profile` without the reader wheel (expected: one line naming it, exit 2, since ncu_reader opens the
# first report in a child process first), then the whole GPU suite with the wheel (as `pip install
# gpulab[test]` brings it; carried here, no registry), then issue 41's timing targets: the default
# bench against the code before blocks (.old/src) in alternation, and the A/B verdicts.
#   rm -rf .old && mkdir .old && git archive 37fffb1 src | tar -x -C .old
# Usage (on the card, from the repository root, carry [".old", ".whl"]): bash notebook/device/device_call16.sh
set -u
source scripts/device_step.sh
call_begin call16 570
SUMMARY="python3 notebook/device/device_timing_summary.py"
TAIL=4 trial profile_without_wheel 40 bash -c "gpulab profile sgemm v1 --size 64 --out $dir/p.csv; echo exit \$?"
python3 -m pip install -q --no-deps --no-index --target /tmp/site .whl/ncu_report*.whl && export PYTHONPATH=/tmp/site
gpu_suite 400 40
TAIL=2 trial warm_cache 40 env PYTHONPATH=.old/src python3 -m gpulab.cli bench sgemm --size 1024,2048 --out "$dir/warm.csv"
for i in 1 2; do
    TAIL=1 trial "default_bench_$i" 40 bash -c "TIMEFORMAT='default bench wall time: %R s'; \
        time gpulab bench sgemm --size 1024,2048 --out '$dir/default_bench_$i.csv' >/dev/null"
    TAIL=1 trial "old_bench_$i" 40 bash -c "TIMEFORMAT='old default bench wall time: %R s'; \
        time env PYTHONPATH=.old/src python3 -m gpulab.cli bench sgemm --size 1024,2048 --out '$dir/old_bench_$i.csv' >/dev/null"
done
TAIL=14 trial t4_cublas 30 bash -c "gpulab ab gemm_bf16 t4 cublas --size 4096 --csv '$dir/t4_cublas.csv' && \
    $SUMMARY ratio '$dir/t4_cublas.csv'"
TAIL=4 trial aa_cli 20 gpulab ab sgemm v13 v13 --size 4096 --csv "$dir/aa.csv"
TAIL=4 trial aa_api 75 $SUMMARY aa_api "$dir/aa.csv"
TAIL=2 trial aa_count 10 $SUMMARY aa "$dir/aa.csv"
call_end call16
exit 0
