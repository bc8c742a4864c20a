# Sourced by the helpers' device scripts (scripts/device_<name>.sh): one step of a trial.
# step NAME SECONDS COMMAND...: run COMMAND under a time limit, keep its output in $dir/NAME.log (the
# caller sets dir), print its exit code, duration and last ${TAIL:-8} lines; never stops the script.
step() {
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" >"$dir/$name.log" 2>&1
    local rc=$?
    echo "== $name: exit $rc in $((SECONDS - t0)) s"
    tail -n "${TAIL:-8}" "$dir/$name.log"
}

# trial NAME SECONDS COMMAND...: a step within the caller's BUDGET of seconds (its limit cut to what
# is left; skipped under 5 s), its first line noted in $dir/summary.txt; a failing step's name is
# appended to FAILED. The helpers' scripts set dir, BUDGET and FAILED="" first.
trial() {
    local name=$1 secs=$2; shift 2
    local left=$((BUDGET - SECONDS))
    if [ "$left" -lt 5 ]; then echo "$name skipped: out of time" >>"$dir/summary.txt"; return; fi
    [ "$secs" -gt "$left" ] && secs=$left
    local out; out=$(TAIL=${TAIL:-40} step "$name" "$secs" "$@")
    echo "$out"
    head -n 1 <<<"$out" >>"$dir/summary.txt"  # '== NAME: exit RC in S s'
    grep -q "^== $name: exit 0 " <<<"$out" || FAILED="$FAILED $name"
}

# trials_begin NAME SECONDS: the usual start of a helper's script: its log folder $OUT/NAME/ (dir), an
# empty summary.txt, BUDGET (the caller's, else SECONDS) and FAILED. trials_end: the summary, printed.
trials_begin() {
    OUT=${OUT:-/tmp/gpulab-out}
    dir=$OUT/$1; mkdir -p "$dir"
    : >"$dir/summary.txt"
    BUDGET=${BUDGET:-$2}
    FAILED=""
}
trials_end() {
    echo "failed steps:${FAILED:- none}" >>"$dir/summary.txt"
    cat "$dir/summary.txt"
}

# hopper_tests SECONDS: the trial step that checks a change to t4 (or what includes it): the
# tensor-core and gemm_bf16 GPU tests, the TF32 split and sgemm's v14 (t4 under TF32).
hopper_tests() {
    TAIL=8 trial tests "$1" python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
        tests/gpu/test_wgmma_gpu.py tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_tf32_split_gpu.py \
        tests/gpu/test_sgemm_gpu.py -k "not test_sgemm_gpu or v14"
}

# gpu_suite SECONDS [EXCLUSIVE_SECONDS]: the whole GPU suite as two trial steps: the tests that may
# share the card, 16 at a time, then those marked exclusive (they compare rates measured at
# different moments), alone.
# On the H200 (2026-12-02) the first part took 320 s (final64) and ran out at 320 (final63): give it 400.
gpu_suite() {
    TAIL=10 trial gpu_suite "$1" python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 \
        -m "gpu and not exclusive" tests/gpu
    TAIL=6 trial exclusive "${2:-60}" python3 -m pytest -q -rfE --tb=short -p no:cacheprovider \
        -m "gpu and exclusive" tests/gpu
}

# best_tests SECONDS: the trial step that checks a change to the best row (its model, bench's best
# and --alone rows, suites): those GPU tests, 16 at a time (about 150 s on an H100).
best_tests() {
    TAIL=6 trial best_tests "$1" python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
        tests/gpu/test_suite_gpu.py tests/gpu/test_sweep_gpu.py tests/gpu/test_memory_experiments_gpu.py \
        tests/gpu/test_own_kernels_gpu.py tests/gpu/test_sk_gpu.py tests/gpu/test_skinny_gpu.py
}

# fresh_card NAME CEILINGS: for a call about a card with no runs of its own, the model lent another
# card's: on an H200 (whose runs are the ones lent) the call ends there; elsewhere the card's results
# folder ($CARD_DIR) gets only CEILINGS (that card's measured ceilings.csv), so bench does not
# measure them again.
fresh_card() {
    if grep -q H200 "$OUT/gpu.txt"; then
        echo "an H200: nothing is lent there; this call is for another card"; call_end "$1"; exit 0
    fi
    local slug
    slug=$(python3 -c "from gpulab.gpu.device import probe; print(probe()[0].slug)") || {
        echo "no card to name the results folder by"; call_end "$1"; exit 1; }
    CARD_DIR=results/$slug
    mkdir -p "$CARD_DIR" && cp "$2" "$CARD_DIR/ceilings.csv"
}

# call_begin NAME SECONDS: the start of one device call (notebook/device/device_callN.sh): what the
# device tool brings back ($OUT) kept as BACK, the call's logs under /tmp/NAME, this tree installed
# (device_setup.sh; the call stops if that fails), its trials begun within SECONDS.
# call_end NAME: the trials' summary, then the logs and results/ packed into $BACK/NAME.tgz (every
# card's folder: a session may be lent an H100 where the records expect the H200).
call_begin() {
    BACK=$OUT
    export OUT=/tmp/$1
    mkdir -p "$OUT"
    source scripts/device_setup.sh || exit 1
    trials_begin "$1" "$2"
}
call_end() {
    trials_end
    tar czf "$BACK/$1.tgz" -C "$OUT" . -C "$PWD" results 2>/dev/null
}
