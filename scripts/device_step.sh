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
