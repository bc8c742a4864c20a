#!/usr/bin/env bash
# The device session in three calls, so each stays inside the 10-minute limit of one call.
#   stage "check":    GPU tests, ceilings, and the tune of the top SGEMM rung
#   stage "verify":   GPU tests only (after a change to GPU code), in one process. With pytest -n 8
#                     on the H200 (2026-11-30) a kernel two workers compiled came back from NVRTC's own
#                     cache without a ptxas report; compile.py now turns that cache off (--no-cache),
#                     which the card has not run yet. Serial, all 883 passed in 122 s
#   stage "publish":  every benchmark into results/<gpu>/ and a compare (ncu)
#   stage "fidelity": predicted vs ncu-measured counters for every variant (results/<gpu>/fidelity.csv)
#   stage "sass":     `gpulab profile --sass` of every run whose counted quantities differ in
#                     fidelity.csv: per-instruction counts to settle whether the model or the
#                     launch-wide counter is off (CSV per run under $OUT/logs/sass)
# Everything it writes lands in results/ and $OUT; logs are tarred into $OUT/batch-<stage>.tgz.
# Usage (from the repository root, on the GPU machine): bash scripts/device_batch.sh check|verify|publish|fidelity|sass
set -uo pipefail
stage=${1:?usage: device_batch.sh check|verify|publish|fidelity|sass}
source scripts/device_setup.sh || exit 1
logs=$OUT/logs; mkdir -p "$logs"
step() {  # step NAME SECONDS COMMAND...: run with a time limit, keep the log, print its tail
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" >"$logs/$name.log" 2>&1
    local rc=$?
    echo "== $name: exit $rc in $((SECONDS - t0)) s"
    tail -n "${TAIL:-6}" "$logs/$name.log"
}
case $stage in
check)
    step pytest_gpu 230 python3 -m pytest -m gpu -q -p no:cacheprovider --maxfail=10
    step ceilings 80 gpulab ceilings --refresh
    TAIL=14 step tune_v9 200 gpulab tune sgemm v9 --param BM=64,128 --param BN=64,128 --param BK=8 \
        --param WM=32,64 --param WN=64 --param WNITER=2 --param STAGES=2,3 --param MINB=2 --param GROUP_M=8
    ;;
verify)
    TAIL=12 step pytest_gpu "${LIMIT:-400}" python3 -m pytest -m gpu -q -p no:cacheprovider -p no:xdist --maxfail=10
    ;;
publish)
    TAIL=40 step bench_sgemm 220 gpulab bench sgemm
    for e in coalesce stencil grayscale; do TAIL=3 step "bench_$e" 80 gpulab bench "$e"; done
    TAIL=40 step compare 60 gpulab compare sgemm v0 v1 --size 2048
    ;;
fidelity)
    TAIL=8 step fidelity_sgemm 200 gpulab fidelity sgemm
    TAIL=8 step fidelity_memory 200 gpulab fidelity coalesce stencil grayscale
    ;;
sass)
    mkdir -p "$logs/sass"
    # experiment, variant:params, shape of each run with a 'differs' row (params joined by commas)
    python3 - "$(ls results/*/fidelity.csv | head -1)" > "$logs/sass_runs.txt" <<'PY'
import csv, sys
seen = []
for r in csv.DictReader(open(sys.argv[1])):
    if r["verdict"] == "differs":
        run = (r["experiment"], r["variant"] + (":" + r["params"].replace(" ", ",") if r["params"] else ""), r["shape"])
        if run not in seen:
            seen.append(run)
for run in seen:
    print(*run)
PY
    while read -r exp var shape <&3; do  # fd 3: the profiled programs must not eat the list
        name=$(echo "$exp-$var-$shape" | tr ':,=' '_._')
        TAIL=2 step "sass_$name" 60 gpulab profile "$exp" "$var" --shape "$shape" --sass \
            --sass-csv "$logs/sass/$name.csv" --csv "$logs/sass/profile.csv"
    done 3< "$logs/sass_runs.txt"
    ;;
esac
# One archive (few files come back from the machine); the logs stay beside it for a call cut short.
tar czf "$OUT/batch-$stage.tgz" -C "$OUT" logs -C "$PWD" results
