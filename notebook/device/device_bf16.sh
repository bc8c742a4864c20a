#!/usr/bin/env bash
# The H200 trial of gemm_bf16 (t0 WMMA, t1 mma.sync + ldmatrix + cp.async) and the BF16 ceilings,
# <= 150 s (the step limits add up to 140, plus the setup), each step under a time limit and run
# even when the one before failed. Writes logs and CSVs under $OUT/bf16/.
#   1. ptxas on this machine's NVRTC (13.0; written against 13.5): registers and spills of t0, t1
#      (default and the tune configs) and the mma.sync ceiling kernel; the SASS instruction mix of t0
#      and t1 (HMMA, LDSM, LDGSTS; no HGMMA expected); the full log of any that spills or fails
#   2. the GPU tests of gemm_bf16 (every rung, random and exact, ragged and 4096/4097; the cuBLAS
#      row; planted wrong kernels; the BF16 ceilings measured and plausible). A wrong result prints
#      its first wrong row and column and the largest error
#   3. `gpulab ceilings`: adds tensor_bf16 (mma.sync) and cublas_bf16_4096/8192 to the committed
#      results/h200/ceilings.csv (only those rows are measured), beside the 989 TFLOP/s datasheet
#   4. `gpulab bench gemm_bf16` t0, t1 at 2048^3, 4096^3, 8192^3 with cuBLAS BF16 beside, then t1 at
#      the ragged 4097^3, 1000x3000x777 and 4096x4096x4104
#   5. a small tune of t1 at 4096^3 (block 128 x 128-256, warp 64 x 32-64, 3-4 stages)
# Usage (repository root, on the H200): bash notebook/device/device_bf16.sh
set -uo pipefail
source scripts/device_setup.sh || exit 1
dir=$OUT/bf16; mkdir -p "$dir"
source scripts/device_step.sh  # step NAME SECONDS COMMAND...

TUNE=(--param BM=128 --param BN=128,256 --param BK=64 --param WM=64 --param WN=32,64 --param STAGES=3,4
      --param MINB=1 --param GROUP_M=8)

# Compiles t0, t1 (default and tune configs) and the ceiling kernel in parallel; cached for later steps.
TAIL=16 step ptxas 20 python3 - <<'EOF'
import re, shutil, subprocess
from concurrent.futures import ProcessPoolExecutor
from gpulab import ceilings as ceil
from gpulab.experiments import get_experiment
from gpulab.errors import CompileError
from gpulab.gpu.compile import compile_kernel
exp = get_experiment("gemm_bf16")
t0, t1 = exp.variant("t0"), exp.variant("t1")
jobs = [("t0", t0.default_params()), ("t1", t1.default_params())]
jobs += [("t1", t1.default_params() | dict(BN=bn, WN=wn, STAGES=st, MINB=1))
         for bn in (128, 256) for wn in (32, 64) for st in (3, 4)]
def one(job):
    name, p = job
    v = exp.variant(name)
    label = f"{name} {v.params_label(p)}"
    if reason := v.constraints(p, None):
        return f"rejected {label}: {reason}"
    try:
        c = compile_kernel(exp.source(v), exp.entry, p)
    except CompileError as e:
        return f"COMPILE ERROR {label}\n{e}"
    r = c.resources
    bad = r.spill_stores_bytes or r.spill_loads_bytes or r.stack_frame_bytes
    return (f"{'SPILLS ' if bad else ''}{label}: {r.registers} registers, spills {r.spill_stores_bytes}/"
            f"{r.spill_loads_bytes} B, stack {r.stack_frame_bytes} B" + (f"\n{c.log}" if bad else ""))
with ProcessPoolExecutor(8) as pool:
    print("\n".join(pool.map(one, jobs)))
try:
    r = compile_kernel(ceil.KERNEL_DIR / "mma_bf16.cu", "mma_bf16_peak", {"CHAINS": ceil.MMA_CHAINS}).resources
    print(f"mma_bf16_peak: {r.registers} registers, spills {r.spill_stores_bytes} B")
except CompileError as e:
    print(f"COMPILE ERROR mma_bf16_peak\n{e}")
# The instruction mix: WMMA and mma.sync both lower to HMMA.16816 (no HGMMA, Hopper's wgmma).
for name in ("t0", "t1"):
    v = exp.variant(name)
    cubin = compile_kernel(exp.source(v), exp.entry, v.default_params()).cubin_path
    try:
        tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
        run = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=20)
        sass = run.stdout + run.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"{name}: no cuobjdump ({e})"); continue
    ops = re.findall(r"\b(HGMMA|HMMA|LDSM|LDGSTS|BAR|LDG|STG|STS|LDS)\b[.\w]*", sass)
    print(name, {op: ops.count(op) for op in dict.fromkeys(ops)} or sass[-300:])
EOF

TAIL=25 step tests 45 python3 -m pytest tests/gpu/test_gemm_bf16_gpu.py -m gpu -q -n 8 -rfE -s \
    --maxfail=10 -o cache_dir="$dir/pytest-cache"

TAIL=16 step ceilings 15 gpulab ceilings
cp results/h200/ceilings.csv "$dir/" 2>/dev/null

TAIL=24 step bench 30 gpulab bench gemm_bf16 --variant t0,t1 --size 2048,4096,8192 --out "$dir/bench.csv"
TAIL=14 step bench_ragged 15 gpulab bench gemm_bf16 --variant t1 --shape 4097x4097x4097 --shape 1000x3000x777 \
    --shape 4096x4096x4104 --out "$dir/bench_ragged.csv"

TAIL=14 step tune_t1 15 gpulab tune gemm_bf16 t1 --shape 4096x4096x4096 "${TUNE[@]}"
cp results/h200/tune-gemm_bf16-t1.csv results/h200/tuned.json "$dir/" 2>/dev/null

python3 - "$dir" <<'EOF'
# Per shape: t0, t1 and cuBLAS TFLOP/s, each / cuBLAS and / the mma.sync ceiling.
import csv, sys
from pathlib import Path
d = Path(sys.argv[1])
ceil = {r["ceiling"]: r for r in csv.DictReader(open(d / "ceilings.csv"))} if (d / "ceilings.csv").exists() else {}
tensor = float(ceil["tensor_bf16"]["gflops"]) if ceil.get("tensor_bf16", {}).get("gflops") else None
print("tensor_bf16 (mma.sync):", f"{tensor / 1e3:.0f} TFLOP/s" if tensor else "missing",
      {k: round(float(v["gflops"]) / 1e3) for k, v in ceil.items() if k.startswith("cublas_bf16")})
for name in ("bench.csv", "bench_ragged.csv"):
    if not (d / name).exists():
        print(name, "missing"); continue
    rows = list(csv.DictReader(open(d / name)))
    for shape in dict.fromkeys(r["shape"] for r in rows):
        best = {}
        for r in rows:
            if r["shape"] == shape and r.get("gflops"):
                best[r["variant"]] = max(best.get(r["variant"], 0.0), float(r["gflops"]))
            elif r["shape"] == shape and r.get("skip_reason"):
                print(" ", shape, r["variant"], "SKIPPED:", r["skip_reason"])
        cb = best.get("cublas")
        print(shape, {k: f"{x / 1e3:.0f} TFLOP/s" for k, x in best.items()},
              *(f"{k}/cuBLAS {x / cb:.2f}" for k, x in best.items() if cb and k != "cublas"),
              *(f"{k}/mma.sync {x / tensor:.2f}" for k, x in best.items() if tensor))
EOF
