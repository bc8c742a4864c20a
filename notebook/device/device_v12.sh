#!/usr/bin/env bash
# The H200 trial of sgemm v12 (stream-K on a persistent grid of MINB x SMs blocks, ordered fixup
# through a workspace and per-block flags): one script, <= 150 s, every step under a timeout, going
# on past a failing step. Run from the repo root after `source scripts/device_setup.sh`; logs and
# CSVs go to $OUT/v12/. Read summary.txt first (one line per step with its exit status), then the logs:
#   compile   NVRTC 13.0's ptxas: v12 default (64 x 128 x 16, MINB=2), MINB=3, SK_ROUNDS=99, and the
#             64 x 256 x 8 config: registers, 0 spill bytes, SASS counts (no LDL/STL)
#   tiny      exact, default config: smaller than a tile (the checked path), one tile, K % BK != 0,
#             N % 4 != 0 (per-element copies/stores), 2 tiles x 256 k tiles over 264 blocks (each tile
#             split ~132 ways: the long fixup chain). A HANG (exit 124, no OK line) = a flag that is
#             never released or an owner waiting on the wrong block; WRONG with a NaN = a tile no
#             block stored; wrong values in whole 64 x 128 tiles = a missing or doubled partial
#   schedules exact, SK_ROUNDS=0 (thin remainder slices), 99 (all stream-K), MINB=3 (396 blocks), MINB=1:
#             1024^3 (128 tiles over 264 blocks), 1000x3000x777 (K shorter than one share), 2048x2048x520
#   random    random inputs, default and SK_ROUNDS=99: 4096^3, 4097^3, 1000x3000x777
#   bench     gpulab bench: v11 (tuned) and v12 default and SK_ROUNDS=99 with cuBLAS at 1024, 2048,
#             4096, 4097, 8192 (bench.csv); bench_minb3: v12 MINB=3 (bench_minb3.csv)
#   fidelity_v9  only if time is left: v9's fidelity rows again (fidelity_v9.csv), see step 6
# Usage: source scripts/device_setup.sh && bash notebook/device/device_v12.sh  (or: bash scripts/device_trial.sh v12:150)
set -u
OUT=${OUT:-/tmp/gpulab-out}
dir=$OUT/v12; mkdir -p "$dir"
: >"$dir/summary.txt"
source scripts/device_step.sh  # step / trial NAME SECONDS COMMAND...
BUDGET=140  # seconds for the whole script: each step's limit is cut to what is left
FAILED=""
CHECK="python3 notebook/probes/stream_k_check.py"

# 1. This machine's NVRTC: ptxas report and SASS counts of the candidate configs.
trial compile 20 python3 - <<'PY'
import shutil, subprocess
from gpulab.experiments.sgemm import EXPERIMENT as S
from gpulab.gpu.compile import compile_kernel, nvrtc_version
print("NVRTC", nvrtc_version())
v = S.variant("v12")
tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
for change in ({}, {"MINB": 3}, {"SK_ROUNDS": 99}, {"BN": 256, "WM": 64, "BK": 8}):
    p = v.default_params() | change
    c = compile_kernel(S.source(v), S.entry, p)
    print(change, c.resources, "constraints:", v.constraints(p, None))
    try:
        sass = subprocess.run([tool, "-sass", str(c.cubin_path)], capture_output=True, text=True, timeout=20).stdout
        print("  SASS", {op: sass.count(op) for op in ("FFMA", "LDGSTS", "BAR.SYNC", "LDL", "STL", "LDG.E.STRONG.GPU", "STG.E.STRONG.GPU")})
    except Exception as exc:
        print("  no SASS:", exc)
PY

# 2. Exact, default config, tiny and ragged shapes (short timeouts: a hang is a flag bug).
trial tiny 15 $CHECK --exact 1x1x1 17x33x65 64x128x16 65x129x17 1531x3x1029 1000x1531x777 128x128x4096
# 3. Exact, the other schedules and grids, at shapes whose tiles are split over several blocks.
trial schedules 25 $CHECK --exact --params SK_ROUNDS=0 --params SK_ROUNDS=99 --params MINB=3 --params MINB=1 \
    1024x1024x1024 1000x3000x777 2048x2048x520 17x33x65
# 4. Random inputs at the large shapes.
trial random 20 $CHECK --params SK_ROUNDS=1 --params SK_ROUNDS=99 4096x4096x4096 4097x4097x4097 1000x3000x777
# 5. The bench beside cuBLAS (checks each row first). Only when the exact steps passed: a wrong or
#    hanging kernel would cost the bench its time.
if ! grep -q " tiny \| schedules " <<<" $FAILED "; then
    trial bench 55 gpulab bench sgemm --variant v11,v12 -p SK_ROUNDS=1,99 --size 1024,2048,4096,4097,8192 \
        --out "$dir/bench.csv"
    trial bench_minb3 25 gpulab bench sgemm --variant v12 -p MINB=3 --size 1024,4096,4097,8192 \
        --out "$dir/bench_minb3.csv"
else
    echo "bench skipped: an exact step failed" >>"$dir/summary.txt"
fi
# 6. Last, if time is left: v9's fidelity runs again (its SASS is unchanged, but results/h200/fidelity.csv
#    keys runs by a hash of the sources, which includes cp_async_ring.cuh): rows for the lead to merge.
trial fidelity_v9 30 gpulab fidelity sgemm -v v9 --out "$dir/fidelity_v9.csv"
echo "failed steps:${FAILED:- none}" >>"$dir/summary.txt"
echo "== summary ($dir/summary.txt; each step's log is $dir/<step>.log)"
cat "$dir/summary.txt"
