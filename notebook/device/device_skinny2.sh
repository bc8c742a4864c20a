#!/usr/bin/env bash
# The H200 trial of issue 15's GEMV-class kernels (gv: a few rows, gt: a few columns) and split-K
# across blocks (sx), with gpulab's best row now defaulting to them; every step under a time limit,
# continuing past a failing one.
# Usage, from the repository root on the GPU machine:
#   source scripts/device_setup.sh && bash notebook/device/device_skinny2.sh   (or: bash scripts/device_trial.sh skinny2)
# Step limits add up to 149 s.
# Writes $OUT/skinny2/: one log per step, bench.csv (sk, gv, gt, sx, the best row, cuBLAS on the
# skinny classes and 512^3), tune-sgemm-{gv,gt,sx}.csv, tuned.json (this card's, with the entries the
# short tunes added). results/<gpu>/tuned.json is restored afterwards.
set -uo pipefail
OUT=${OUT:-/tmp/gpulab-out}
dir=$OUT/skinny2; mkdir -p "$dir"
source scripts/device_step.sh  # step NAME SECONDS COMMAND...

# 1. Resources with this machine's NVRTC (the constraints were checked with 13.5): the defaults and
#    the best row's fallback configs; a spill or a compile error is printed in full.
TAIL=14 step resources 10 python3 - <<'EOF'
from gpulab.experiments.sgemm import EXPERIMENT as S
from gpulab.gpu.compile import compile_kernel
configs = [(n, S.variant(n).default_params()) for n in ("gv", "gt", "sx")]
for shape in ((1, 8192, 8192), (8192, 1, 8192), (4096, 64, 4096), (64, 4096, 4096), (512, 512, 512)):
    name, params, _ = S.best_default(S.shape(*shape))
    configs.append((name, params))
for name, params in configs:
    v = S.variant(name)
    try:
        c = compile_kernel(S.source(v), S.entry, params)
    except Exception as exc:
        print("COMPILE ERROR", name, v.params_label(params), exc); continue
    r = c.resources
    print(name, v.params_label(params), f"regs {r.registers} spill {r.spill_stores_bytes}/{r.spill_loads_bytes} "
          f"stack {r.stack_frame_bytes} smem {r.smem_static_bytes}")
    if r.spill_stores_bytes or r.stack_frame_bytes:
        print(c.log)
EOF

# 2. GPU tests: gv, gt, sx correct (random and exact, ragged, skinny, 1 x N x K, N = 1), the same
#    bits every launch, split-K counters back at zero; sk's tests (the config its constraints refused
#    in the last trial now fits) and the best row checked and timed. A failure names the config,
#    shape, first wrong element and max error (--tb=line keeps one line per failure; -x not used).
TAIL=30 step pytest 55 python3 -m pytest tests/gpu/test_skinny_gpu.py tests/gpu/test_sk_gpu.py -q -p no:xdist \
    --tb=line -o cache_dir="$dir/pytest-cache"

# 3. The skinny classes, N = 1 and 512^3: sk, gv, gt, sx at their defaults, the best row (before any
#    tune of the new kernels: their defaults by class, or v9 tuned at 1024^3 for 512^3) and cuBLAS
#    beside; % of the copy ceiling on the memory-bound shapes.
SHAPES=(--shape 4096x64x4096 --shape 64x4096x4096 --shape 1x8192x8192 --shape 8192x1x8192 --shape 512x512x512)
TAIL=40 step bench 40 gpulab bench sgemm --variant sk,gv,gt,sx,best "${SHAPES[@]}" --out "$dir/bench.csv"

# 4. Short tunes so that tuned.json gets entries for the new kernels (the picker then weighs them
#    against everything tuned near): gv at 1x4096x8192 and gt at 4096x1x8192 (half the GEMV shapes:
#    host inputs and CPU references cost seconds; 1 from the full ones for the picker), sx on its
#    three few-tile shapes. Full tunes, for the lead: gpulab tune sgemm gv / gt / sx (~5-10 min each).
slug=$(python3 -c "from gpulab.gpu.device import probe; print(probe()[0].slug)")
tuned=results/$slug/tuned.json
cp "$tuned" "$dir/tuned.before.json" 2>/dev/null
TAIL=12 step tune_gv 12 gpulab tune sgemm gv --limit 4 --shape 1x4096x8192 \
    --param BM=1 --param CT=32,64,128 --param KT=2,4,8 --param U=4,8 --param S=8,16,32 --param MINB=2
TAIL=12 step tune_gt 10 gpulab tune sgemm gt --limit 3 --shape 4096x1x8192 \
    --param BN=1 --param WARPS=4,8 --param RW=1,2 --param U=4,8 --param MINB=2
TAIL=14 step tune_sx 22 gpulab tune sgemm sx --limit 3 --shape 4096x64x4096 --shape 64x4096x4096 --shape 512x512x512 \
    --param BM=64,128 --param BN=64,128 --param WM=32,64 --param WN=64 --param WNITER=2 --param STAGES=3,4 --param S=2,4,6,8
cp "$tuned" "$dir/tuned.json" 2>/dev/null
for v in gv gt sx; do mv "results/$slug/tune-sgemm-$v.csv" "$dir/" 2>/dev/null; done
if [ -f "$dir/tuned.before.json" ]; then cp "$dir/tuned.before.json" "$tuned"; else rm -f "$tuned"; fi
echo "== skinny2: logs and CSVs in $dir"
