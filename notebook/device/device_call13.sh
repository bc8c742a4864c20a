#!/usr/bin/env bash
# Call 13 (written 2026-12-05, not run: no device was lent; optional, after calls 12 and 11): the llm
# shapes where call 10's best rows ran under 0.90x the vendor library (9 of sgemm's, 20 of
# gemm_bf16's: notebook/probes/short/*.toml), tuned for the model's first variants at each
# (gpulab tune --suite: sgemm's two first, 6 configs a variant at each of its shapes, 108 runs;
# gemm_bf16's first, 8 configs, 160 runs), then benched again, so the best row there reads 'tuned
# here'. A tune its limit cuts short keeps what it timed and resumes there when run again. This is
# what issue 40's targets ask of the best row at those shapes past the model's untuned pick (which
# calls 11 and 12 time). The tunes write results/h200/tuned.json and tune-*.csv; the benches go to
# this call's folder, not results/.
# Usage (on the card, from the repository root): bash notebook/device/device_call13.sh
set -u
source scripts/device_step.sh
call_begin call13 580
S=notebook/probes/short
TAIL=12 trial tune_sgemm 200 gpulab tune sgemm --suite $S/sgemm-short.toml --top 2 --budget 6
TAIL=12 trial tune_bf16 220 gpulab tune gemm_bf16 --suite $S/gemm_bf16-short.toml --top 1 --budget 8
TAIL=12 trial short_sgemm 60 gpulab bench sgemm --suite $S/sgemm-short.toml --contenders 1.2 --no-sanitize \
    --out "$dir/sgemm-short.csv"
TAIL=12 trial short_bf16 80 gpulab bench gemm_bf16 --suite $S/gemm_bf16-short.toml --contenders 1.2 --no-sanitize \
    --out "$dir/gemm_bf16-short.csv"
call_end call13
exit 0
