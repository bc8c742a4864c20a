#!/usr/bin/env bash
# Call 10 (session of 2026-12-04, third): issue 40's llm suite on both GEMMs with the best-row model
# as it now stands (cluster tiles counted, a config's own measured efficiency; never timed before),
# the shapes no suite has again (notebook/probes/unlisted/), then issue 41: one bench twice and
# notebook/probes/probe_twice_sources.py (is a row's drift between runs its addresses or the
# moment?). Logs and results come back as call10.tgz.
# Usage (on the card, from the repository root): bash notebook/device/device_call10.sh
set -u
BACK=$OUT
export OUT=/tmp/call10; mkdir -p "$OUT"
source scripts/device_setup.sh || exit 1
source scripts/device_step.sh
trials_begin call10 560
U=notebook/probes/unlisted
TAIL=6 trial llm_bf16 150 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
TAIL=6 trial llm_sgemm 110 gpulab bench sgemm --suite llm --contenders 1.3 --no-sanitize
TAIL=40 trial llm_figure 15 python3 -c 'import sys; from gpulab.report.picks import summary; print(summary(sys.argv[1:]))' \
    results/h200/gemm_bf16-llm.csv results/h200/sgemm-llm.csv
TAIL=12 trial unlisted_bf16 60 gpulab bench gemm_bf16 --suite $U/unlisted.toml --contenders 1.5 --no-sanitize \
    --out "$dir/gemm_bf16-unlisted.csv"
TAIL=12 trial unlisted_sgemm 50 gpulab bench sgemm --suite $U/unlisted.toml --contenders 1.3 --no-sanitize \
    --out "$dir/sgemm-unlisted.csv"
mkdir -p "$dir/twice"
TAIL=8 trial twice 50 bash -c "for i in 1 2; do gpulab bench sgemm --size 2048 --no-sanitize \
    --out $dir/twice/twice_\$i.csv >$dir/twice/twice_\$i.log 2>&1 || exit 1; done; \
    python3 notebook/device/device_timing_summary.py twice $dir/twice"
TAIL=70 trial sources 80 python3 notebook/probes/probe_twice_sources.py "$dir/sources.csv"
trials_end
tar czf "$BACK/call10.tgz" -C "$OUT" . -C "$PWD" results/h200 2>/dev/null
exit 0
