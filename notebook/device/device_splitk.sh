#!/usr/bin/env bash
# The H200 trial of issue 15's few-tile and skinny work (sgemm's sk variant, gpulab's best row, the %
# of the copy ceiling), ~2 minutes, every step under a time limit, continuing past a failing one.
# Usage, from the repository root on the GPU machine:
#   source scripts/device_setup.sh && bash notebook/device/device_splitk.sh   (or: bash scripts/device_trial.sh splitk)
# Step limits add up to 144 s.
# Writes $OUT/splitk/: one log per step, bench.csv (before the tune), tune-sgemm-sk.csv, tuned.json
# (this card's, with the sk entry the short tune added), bench_tuned.csv (the best row after it).
# results/<gpu>/tuned.json is restored afterwards, so the trial leaves the tree's tuned data as it was.
set -uo pipefail
OUT=${OUT:-/tmp/gpulab-out}
dir=$OUT/splitk; mkdir -p "$dir"
source scripts/device_step.sh  # step NAME SECONDS COMMAND...
SKINNY=(--shape 512x512x512 --shape 4096x64x4096 --shape 64x4096x4096 --shape 1x8192x8192)

# 1. sk's resources with this machine's NVRTC (the constraints were fitted to 13.5): the defaults and
#    the best row's fallback configs; a spill or a compile error is printed in full.
TAIL=12 step resources 15 python3 - <<'EOF'
from gpulab.experiments.sgemm import EXPERIMENT as S, SK_DEFAULTS
from gpulab.gpu.compile import compile_kernel
v = S.variant("sk")
for params in [v.default_params(), *SK_DEFAULTS.values()]:
    try:
        c = compile_kernel(S.source(v), S.entry, params)
    except Exception as exc:
        print("COMPILE ERROR", v.params_label(params), exc); continue
    r = c.resources
    print(v.params_label(params), f"regs {r.registers} spill {r.spill_stores_bytes}/{r.spill_loads_bytes} "
          f"stack {r.stack_frame_bytes} smem {r.smem_static_bytes}")
    if r.spill_stores_bytes or r.stack_frame_bytes:
        print(c.log)
EOF

# 2. GPU tests: sk correct (random and exact, ragged, skinny, 1 x N x K), the same bits every run,
#    the best row checked and timed. A failure names the config, shape, first wrong element, max error.
TAIL=25 step pytest_sk 35 python3 -m pytest tests/gpu/test_sk_gpu.py -q -p no:xdist --tb=line -o cache_dir="$dir/pytest-cache"

# 3. The skinny classes and 512^3: v9 (tuned), sk (defaults), the best row (what it picks before any
#    tune of sk) and cuBLAS beside; % of the copy ceiling on the memory-bound shapes.
TAIL=30 step bench 36 gpulab bench sgemm --variant v9,sk,best "${SKINNY[@]}" --out "$dir/bench.csv"

# 4. A short tune of sk on the skinny classes (the 1 x N x K one at half N: its host-side inputs and
#    CPU reference cost seconds per run; it is 1 from 1x8192x8192 for the picker): 8 configs from a
#    space around the fallback configs; then the best row again, now reading the tuned entry.
#    The full tune, for the lead: gpulab tune sgemm sk (its tune shapes, --limit 120: ~10 minutes).
slug=$(python3 -c "from gpulab.gpu.device import probe; print(probe()[0].slug)")
tuned=results/$slug/tuned.json
cp "$tuned" "$dir/tuned.before.json" 2>/dev/null
TAIL=20 step tune 38 gpulab tune sgemm sk --limit 8 --shape 4096x64x4096 --shape 64x4096x4096 \
    --shape 1x4096x8192 --param BM=1,16,32,64 --param BN=1,16,32,64 \
    --param BK=32,64 --param TM=1,2,4 --param TN=1,2,4 --param KS=2,4,8 --param MINB=1,2,3
cp "$tuned" "$dir/tuned.json" 2>/dev/null
mv "results/$slug/tune-sgemm-sk.csv" "$dir/" 2>/dev/null
TAIL=14 step bench_tuned 20 gpulab bench sgemm --variant best "${SKINNY[@]}" --out "$dir/bench_tuned.csv"
if [ -f "$dir/tuned.before.json" ]; then cp "$dir/tuned.before.json" "$tuned"; else rm -f "$tuned"; fi
echo "== splitk: logs and CSVs in $dir"
