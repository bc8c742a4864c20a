#!/usr/bin/env bash
# Call 15 (2026-12-05): issue 41's blocked timing on the card (one bench twice, each median against
# the other's interval, and its wall time against the code before blocks, .old/src, carried), then
# issue 40's llm suite and the shapes of no suite (probes/unlisted/unlisted.toml: M of 1, 7, 300; N of
# 31; K of 1000) on both GEMMs, on the model as it stands (no calibration rows or tunes added
# first, unlike device_call11.sh, which was written and never run: the picks are the model's).
#   rm -rf .old && mkdir .old && git archive 37fffb1 src | tar -x -C .old
# Usage (on the card, from the repository root, carry [".old"]): bash notebook/device/device_call15.sh
set -u
source scripts/device_step.sh
call_begin call15 575
mkdir -p "$dir/twice"
TAIL=12 trial twice 70 bash -c "TIMEFORMAT='bench wall time: %R s'; for i in 1 2; do { time gpulab bench sgemm --size 2048 \
    --no-sanitize --out $dir/twice/twice_\$i.csv >$dir/twice/twice_\$i.log 2>&1 || exit 1; } 2>&1; done; \
    python3 notebook/device/device_timing_summary.py twice $dir/twice"
TAIL=3 trial old_bench 35 bash -c "TIMEFORMAT='old bench wall time: %R s'; time env PYTHONPATH=.old/src python3 -m gpulab.cli \
    bench sgemm --size 2048 --no-sanitize --out $dir/old_bench.csv"
TAIL=6 trial llm_sgemm 130 gpulab bench sgemm --suite llm --contenders 1.3 --no-sanitize
TAIL=6 trial llm_bf16 160 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
U=notebook/probes/unlisted
TAIL=12 trial unlisted_bf16 60 gpulab bench gemm_bf16 --suite $U/unlisted.toml --contenders 1.5 --no-sanitize \
    --out "$dir/gemm_bf16-unlisted.csv"
TAIL=12 trial unlisted_sgemm 50 gpulab bench sgemm --suite $U/unlisted.toml --contenders 1.3 --no-sanitize \
    --out "$dir/sgemm-unlisted.csv"
TAIL=30 trial llm_figure 20 python3 -c 'import sys; from gpulab.report.picks import summary; print(summary(sys.argv[1:]))' \
    results/h200/sgemm-llm.csv results/h200/gemm_bf16-llm.csv "$dir/gemm_bf16-unlisted.csv" "$dir/sgemm-unlisted.csv"
call_end call15
exit 0
