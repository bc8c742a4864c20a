#!/usr/bin/env bash
# The H200 trial of SGEMM v10 (register-fragment double buffering), <= 150 s, each step under a time
# limit and run even when the one before failed. Writes logs and CSVs under $OUT/fp32rung/.
#   1. ptxas on this machine's NVRTC (13.0; the rung was written against 13.5): registers and spills
#      of v10's default and the tune configs, the full log of any that spills or fails to compile
#   2. the GPU correctness tests of v10 (random and exact, ragged and 4096/4097; a wrong result
#      prints its first wrong row and column and the largest error)
#   3. `gpulab bench` v9 and v10 at 2048^3, 4096^3, 8192^3 with cuBLAS beside
#   4. a small tune of v10 at 4096^3: 16 x 8 per thread, block tiles 64-128 x 128-256, BK 8 or 16
#   5. `gpulab compare sgemm v9 v10` at 4096^3 under ncu (the README's evidence of what v10 changed)
# Usage (repository root, on the H200): bash notebook/device/device_fp32rung.sh
set -uo pipefail
source scripts/device_setup.sh || exit 1
dir=$OUT/fp32rung; mkdir -p "$dir"
step() {  # step NAME SECONDS COMMAND...: run with a time limit, keep the log, print its tail
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" >"$dir/$name.log" 2>&1
    local rc=$?
    echo "== $name: exit $rc in $((SECONDS - t0)) s"
    tail -n "${TAIL:-8}" "$dir/$name.log"
}

# 16 x 8 per thread (two 64 x 64 warp tiles ... eight), 64-256 threads, BK 8 or 16: 7 configs pass the
# constraints (64 x 128 x 16 needs ~258 registers). MINB=1: up to 256 threads it gives the same
# 255-register cap as MINB=2, so it drops no config.
TUNE=(--param BM=64,128 --param BN=128,256 --param BK=8,16 --param WM=64 --param WN=64 --param WNITER=2
      --param STAGES=2 --param MINB=1 --param GROUP_M=8)

# Compiles the default and every tune config in parallel; the cubins are cached for the steps after.
TAIL=12 step ptxas 25 python3 - <<'EOF'
from concurrent.futures import ProcessPoolExecutor
from gpulab.experiments import get_experiment
from gpulab.errors import CompileError
from gpulab.gpu.compile import compile_kernel
exp = get_experiment("sgemm")
v = exp.variant("v10")
configs = [v.default_params()] + [v.default_params() | dict(BM=bm, BN=bn, BK=bk, MINB=1)
                                  for bm in (64, 128) for bn in (128, 256) for bk in (8, 16)]
def one(p):
    label = v.params_label(p)
    try:
        c = compile_kernel(exp.source(v), exp.entry, p)
    except CompileError as e:
        return f"COMPILE ERROR {label}\n{e}"
    r = c.resources
    bad = r.spill_stores_bytes or r.spill_loads_bytes
    return (f"{'SPILLS ' if bad else ''}{label}: {r.registers} registers, spills {r.spill_stores_bytes}/"
            f"{r.spill_loads_bytes} B, constraints: {v.constraints(p, None)}" + (f"\n{c.log}" if bad else ""))
with ProcessPoolExecutor(9) as pool:
    print("\n".join(pool.map(one, configs)))
EOF

TAIL=15 step tests_v10 35 python3 -m pytest tests/gpu/test_sgemm_gpu.py -m gpu -q -n 8 -k "v10" -rfE \
    --maxfail=6 -o cache_dir="$dir/pytest-cache"

TAIL=20 step bench 30 gpulab bench sgemm --variant v9,v10 --size 2048,4096,8192 --out "$dir/bench.csv"

# The tune writes results/<gpu>/tune-sgemm-v10.csv and tuned.json in this tree: copied out after.
TAIL=14 step tune_v10 40 gpulab tune sgemm v10 --shape 4096x4096x4096 "${TUNE[@]}"
cp results/h200/tune-sgemm-v10.csv results/h200/tuned.json "$dir/" 2>/dev/null
python3 - "$dir/bench.csv" <<'EOF'
# v10 / v9 and v10 / cuBLAS per shape from the bench CSV: the numbers the report needs.
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def rate(r): return float(r["gflops"]) if r.get("gflops") else None
for shape in dict.fromkeys(r["shape"] for r in rows):
    best = {}
    for r in rows:
        if r["shape"] == shape and rate(r):
            name = r["variant"]
            best[name] = max(best.get(name, 0.0), rate(r))
    v9, v10, cb = best.get("v9"), best.get("v10"), best.get("cublas")
    print(shape, {k: round(x) for k, x in best.items()},
          f"v10/v9 {v10 / v9:.3f}" if v9 and v10 else "", f"v10/cuBLAS {v10 / cb:.3f}" if cb and v10 else "")
EOF

TAIL=40 step compare 20 gpulab compare sgemm v9 v10 --size 4096 --csv "$dir/profile.csv"
