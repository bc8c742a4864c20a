#!/usr/bin/env bash
# The H200 trial of the wgmma rungs (issue 14, t2 and t3): one script, <= 150 s, every step under timeout,
# going on past a failing step. Run from the repo root after `source scripts/device_setup.sh`;
# logs and CSVs go to $OUT/wgmma/. Read summary.txt first: one line per step with its exit status.
# Usage: source scripts/device_setup.sh && bash notebook/device/device_wgmma.sh  (or: bash scripts/device_trial.sh wgmma)
set -u
OUT=${OUT:-/tmp/gpulab-out}
dir=$OUT/wgmma; mkdir -p "$dir"
: >"$dir/summary.txt"
source scripts/device_step.sh  # step / trial NAME SECONDS COMMAND...
BUDGET=148  # seconds for the whole script: each step's limit is cut to what is left
FAILED=""
PROBE="python3 notebook/probes/wgmma_probe.py"

# 1. Compile on this machine's NVRTC (13.0) and read the ptxas report and the SASS: HGMMA and
#    UTMALDG must be there, no LDL/STL (spills), no 'serialized' warning.
trial compile 20 python3 - <<'PY'
import subprocess, shutil
from pathlib import Path
from gpulab.gpu.compile import compile_kernel, nvrtc_version
folder = Path("src/gpulab/experiments/gemm_bf16")
print("NVRTC", nvrtc_version())
tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
for f, p in (("t2_wgmma_tma.cu", {"BM": 128, "BN": 256, "STAGES": 4, "GROUP_M": 8}),
             ("t2_wgmma_tma.cu", {"BM": 64, "BN": 128, "STAGES": 2, "GROUP_M": 1}),
             ("t3_warp_specialized.cu", {"BM": 128, "BN": 256, "STAGES": 4, "GROUP_M": 8})):
    c = compile_kernel(folder / f, "gemm_bf16", p, arch="sm_90a")
    print(p, c.resources)
    print("\n".join(l for l in c.log.splitlines() if l.strip()))
    try:
        sass = subprocess.run([tool, "-sass", str(c.cubin_path)], capture_output=True, text=True, timeout=20).stdout
        for op in ("HGMMA", "UTMALDG", "SYNCS", "WARPGROUP", "BAR.SYNC", "USETMAXREG", "LDL", "STL", "HMMA"):
            print(f"  SASS {op}: {sass.count(op)}")
    except Exception as exc:
        print("  no SASS:", exc)
PY

# 2. The plumbing alone: a 128-byte struct between two ints reaches a kernel intact through CuPy
#    (launch.by_value), and the driver encodes a tensor map for a device matrix.
trial plumbing 20 python3 -m pytest -q -x tests/gpu/test_wgmma_gpu.py -k "by_value or driver_encodes"
# 3. The smallest exact case first: one block, one warpgroup, one k-tile. A wrong result here is a
#    descriptor, swizzle or fragment-mapping bug, and the probe says which rows/cols/k-slices.
trial exact_tiny 20 $PROBE --exact --params BM=64,BN=128,STAGES=2,GROUP_M=1 64x128x64 64x128x128
# 4. The default config (128 x 256, 4 stages): ring wrap-around (k-tiles > stages), several blocks,
#    ragged M/N/K (zero fill, masked stores, odd N: scalar stores), tiny shapes, K not a multiple of 8
#    (no tensor map: the threads' element copies, last three shapes); then random inputs.
trial exact_default 20 $PROBE --exact 128x256x64 128x256x1024 256x512x4096 200x300x136 1x1x8 1000x3001x776 129x257x72 200x300x137 1x1x1 65x130x777
trial random 15 $PROBE 512x512x512 2048x2048x2048 777x1234x1000 1000x3000x777
# t3 (warp specialized): the same shapes, exact then random, in one process.
trial t3_exact 25 bash -c "$PROBE --variant t3 --exact 128x256x64 128x256x1024 256x512x4096 200x300x136 1x1x8 1000x3001x776 129x257x72 200x300x137 1x1x1 65x130x777 && $PROBE --variant t3 2048x2048x2048 777x1234x1000 1000x3000x777"
# 5. The experiment's own path (needs the gemm_bf16 skeleton): the bench of t2 and t3 at 4096^3 and
#    8192^3 (and a ragged 4000^3) beside cuBLAS BF16, rows of the same CSV.
trial bench 50 gpulab bench gemm_bf16 --variant t2,t3 --shape 4096x4096x4096 --shape 8192x8192x8192 \
    --shape 4000x4000x4000 --out "$dir/bench.csv"
# 6. Other tile configs (1, 2 and 4 warpgroups; BN 64/128/256; 2-6 stages), exact.
trial exact_configs 20 bash -c "$PROBE --exact --params BN=64 --params BN=128,STAGES=5 --params BM=256,BN=128,STAGES=3 \
    --params BM=64,BN=256,STAGES=5 300x200x520 130x513x2056 && $PROBE --variant t3 --exact --params BN=128,STAGES=6 --params STAGES=2 300x200x520 130x513x2056"
trial pytest_gpu 25 python3 -m pytest -q -m gpu tests/gpu/test_wgmma_gpu.py -k "not by_value and not driver_encodes"
# 7. Only when a check failed: the memory checker on a small ragged case (TMA writes, masked stores).
if [ -n "$FAILED" ]; then
    trial sanitize 30 bash -c "/usr/local/cuda/bin/compute-sanitizer --tool memcheck $PROBE --exact 200x300x136; /usr/local/cuda/bin/compute-sanitizer --tool memcheck $PROBE --variant t3 --exact 200x300x136"
fi
echo "failed steps:${FAILED:- none}" >>"$dir/summary.txt"
echo "== summary ($dir/summary.txt; each step's log is $dir/<step>.log)"
cat "$dir/summary.txt"
