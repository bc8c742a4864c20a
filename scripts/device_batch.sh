#!/usr/bin/env bash
# The device session as named stages; one call runs several in order, so a call can fill its
# 10-minute limit without a second machine start.
#   "verify":    GPU tests, 8 workers (compile.py passes NVRTC --no-cache, so two workers compiling one
#                kernel both get a ptxas report); any failure is re-run alone, serially, to tell a
#                parallel-only failure from a real one; then the `exclusive` tests alone
#   "ceilings":  the card's ceilings, measured again (--refresh)
#   "tune":      the tune of the top SGEMM rung
#   "sgemm":     `gpulab bench sgemm` (the ladder, tuned configs) into results/<gpu>/
#   "memory":    `gpulab bench` coalesce, stencil and grayscale into results/<gpu>/
#   "compare":   `gpulab compare sgemm v0 v1` under ncu
#   "fidelity":  predicted vs ncu-measured counters for every variant (results/<gpu>/fidelity.csv)
#   "probe":     notebook/probes/probe_counters.py: three captures of one launch, hardware vs instrumented counters
#   "ncu_fixtures": re-record tests/fixtures/ncu (the CSV the CPU tests parse)
#   "profile_tests": the GPU tests that run ncu (after a change to what gpulab asks ncu for)
#   "faults":    the planted fault, hang and out-of-bounds kernels (tests/gpu/test_faults_gpu.py) alone
#   "sanitize":  `gpulab sanitize`: every variant and tuned config under compute-sanitizer's four tools
#   "overhead":  the same small bench in-process and through the isolated worker, timed whole
#   "transpose": the out-of-tree transpose example's bench into examples/transpose/results/<gpu>/
#                (its GPU tests are part of "verify", its fidelity of "fidelity")
#   "diag_small": sgemm at 512 and 1024, in-process and through the worker (small-shape timings)
#   "cluster":   the same SGEMM tune serially and with --workers 14 (Dask, installed from the wheels
#                in .whl: run with carry [".whl"]), each from an empty compile cache and results
#                folder, the wall times in the step lines; then both best configs
#   "sass":      `gpulab profile --sass` of every run whose counted quantities differ in
#                fidelity.csv: per-instruction counts to settle whether the model or the
#                launch-wide counter is off (CSV per run under $OUT/logs/sass)
# Everything it writes lands in results/ and $OUT; logs are tarred into $OUT/batch.tgz.
# Usage (from the repository root, on the GPU machine): bash scripts/device_batch.sh STAGE [STAGE...]
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: device_batch.sh verify|ceilings|tune|sgemm|memory|compare|fidelity|probe|ncu_fixtures|profile_tests|faults|sanitize|overhead|transpose|diag_small|cluster|sass ..." >&2; exit 2; }
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
for stage in "$@"; do
case $stage in
verify)
    TAIL=12 step pytest_gpu "${LIMIT:-300}" python3 -m pytest -m "gpu and not exclusive" -q -n 8 \
        -o cache_dir="$OUT/pytest-cache" --maxfail=30
    grep -q " passed" "$logs/pytest_gpu.log" && ! grep -qE "[0-9]+ (failed|error)" "$logs/pytest_gpu.log" || \
        TAIL=12 step pytest_gpu_rerun "${RERUN_LIMIT:-200}" python3 -m pytest -m gpu -q -p no:xdist -o cache_dir="$OUT/pytest-cache" --lf
    TAIL=4 step pytest_gpu_exclusive 120 python3 -m pytest -m "gpu and exclusive" -q -p no:xdist
    ;;
ceilings)
    step ceilings 80 gpulab ceilings --refresh
    ;;
tune)
    TAIL=14 step tune_v9 200 gpulab tune sgemm v9 --param BM=64,128 --param BN=64,128 --param BK=8 \
        --param WM=32,64 --param WN=64 --param WNITER=2 --param STAGES=2,3 --param MINB=2 --param GROUP_M=8
    ;;
cluster)
    echo "machine: $(uname -m), $(nproc) cores"  # the wheels in .whl are for x86_64, CPython 3.12
    python3 -m pip install -q --no-index --find-links .whl dask distributed >"$logs/cluster_install.log" 2>&1 ||
        tail -3 "$logs/cluster_install.log"
    space="--param BM=64,128 --param BN=64,128 --param BK=8,16 --param WM=32,64 --param WN=64 --param WNITER=2
        --param STAGES=2,3,4 --param MINB=2 --param GROUP_M=8 --limit 24 --shape 2048x2048x2048 --shape 4096x4096x4096"
    for mode in serial parallel; do
        dir=$OUT/cluster/$mode; mkdir -p "$dir"
        extra=$([ $mode = parallel ] && echo "--workers 14")
        (cd "$dir" && export GPULAB_CACHE="$dir/cache" && TAIL=20 step "tune_$mode" 280 gpulab tune sgemm v9 $space $extra)
        rm -rf "$dir/cache"
    done
    python3 -c "import json, sys; [print(m, json.load(open(f'$OUT/cluster/{m}/results/h200/tuned.json'))['sgemm']['v9']['params']) for m in sys.argv[1:]]" serial parallel
    ;;
sgemm)
    TAIL=40 step bench_sgemm 240 gpulab bench sgemm
    ;;
memory)
    for e in coalesce stencil grayscale; do TAIL=3 step "bench_$e" 80 gpulab bench "$e"; done
    ;;
compare)
    TAIL=40 step compare 60 gpulab compare sgemm v0 v1 --size 2048
    ;;
fidelity)
    TAIL=8 step fidelity_sgemm 200 gpulab fidelity sgemm
    TAIL=8 step fidelity_memory 200 gpulab fidelity coalesce stencil grayscale
    export GPULAB_PATH=$PWD/examples
    TAIL=8 step fidelity_transpose 150 gpulab fidelity transpose \
        --out examples/transpose/results/${GPU_SLUG:-h200}/fidelity.csv
    unset GPULAB_PATH
    ;;
faults)
    TAIL=12 step pytest_faults "${LIMIT:-300}" python3 -m pytest tests/gpu/test_faults_gpu.py -q -p no:cacheprovider
    ;;
sanitize)
    TAIL=30 step sanitize "${LIMIT:-240}" gpulab sanitize
    ;;
overhead)
    for mode in inproc isolated; do
        t0=$(date +%s%N)
        if [ $mode = inproc ]; then export GPULAB_IN_PROCESS=1; else unset GPULAB_IN_PROCESS; fi
        TAIL=3 step "overhead_$mode" 120 gpulab bench sgemm --variant v1 --size 512,1024 --out "$logs/overhead_$mode.csv"
        unset GPULAB_IN_PROCESS
        echo "overhead $mode: $(( ($(date +%s%N) - t0) / 1000000 )) ms whole command"
    done
    ;;
transpose)
    export GPULAB_PATH=$PWD/examples
    TAIL=20 step bench_transpose 120 gpulab bench transpose --shape 8192x8192 \
        --shape 4096x4096 --shape 1000x1532 --shape 333x517 --out examples/transpose/results/${GPU_SLUG:-h200}/transpose.csv
    unset GPULAB_PATH
    ;;
diag_small)
    export GPULAB_IN_PROCESS=1
    TAIL=14 step diag_inproc 120 gpulab bench sgemm --size 512,1024 --out "$logs/diag_inproc.csv"
    unset GPULAB_IN_PROCESS
    TAIL=14 step diag_isolated 120 gpulab bench sgemm --size 512,1024 --out "$logs/diag_isolated.csv"
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
probe)
    # Is a counter a fixed count of one launch? Three captures each of the two runs that settled it.
    hw_vs_sass="--metric l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum --metric smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_st.sum
        --metric lts__t_sectors_srcunit_tex_op_write.sum --metric smsp__inst_executed_op_shared_ld.sum
        --metric smsp__inst_executed_op_shared_ld_pred_on_any.sum --metric smsp__inst_executed_op_shared_ld_pred_off_all.sum
        --metric smsp__sass_inst_executed_op_shared_ld.sum"
    TAIL=12 step probe_v9 120 python3 notebook/probes/probe_counters.py sgemm v9 --shape 129x67x33 $hw_vs_sass
    TAIL=12 step probe_gray 120 python3 notebook/probes/probe_counters.py grayscale row --shape 3840x2160 $hw_vs_sass
    ;;
ncu_fixtures)
    # the recorded ncu output the CPU tests parse, with today's metric list (after a change to it)
    TAIL=4 step ncu_fixtures 120 python3 scripts/ncu_capture_fixtures.py --out tests/fixtures/ncu
    ;;
profile_tests)
    TAIL=6 step pytest_profile 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_profile_gpu.py tests/gpu/test_occupancy_gpu.py
    ;;
*)
    echo "unknown stage $stage" >&2
    ;;
esac
done
# One archive (few files come back from the machine); the logs stay beside it for a call cut short.
tar czf "$OUT/batch.tgz" -C "$OUT" logs $(cd "$OUT" && ls -d cluster 2>/dev/null) -C "$PWD" results tests/fixtures $(ls -d examples/*/results 2>/dev/null)
