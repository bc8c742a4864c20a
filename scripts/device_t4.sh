#!/usr/bin/env bash
# The H200 trial of gemm_bf16 rung t4 (persistent grid, 2-block clusters with TMA multicast of Bt,
# wgmma wait depth 1): one script, <= 150 s, every step under timeout, going on past a failing step.
# Run from the repo root after `source scripts/device_setup.sh`; logs and CSVs go to $OUT/t4/.
# Read summary.txt first (one line per step with its exit status), then the logs in step order:
#   compile      ptxas (168 regs at entry, 0 spills), SASS counts: HGMMA, UTMALDG.2D.MULTICAST, UTMASTG, USETMAXREG
#   clusters     how many 2-block clusters fit at once (the grid assumes SMs / 2)
#   tiny_c1      CLUSTER=1 STORE=0 (no multicast, register epilogue: persistence and wait depth alone)
#   tiny_c2      CLUSTER=2 STORE=0, one cluster: a multicast or remote-barrier bug shows on one rank's
#                rows ("wrong 128-row blocks") or one half of Bt's columns; a HANG (timeout, no OK
#                line) means a barrier count/parity or an expect_tx byte count is off
#   tiny_store   STORE=1 (shared memory + TMA store epilogue), CLUSTER=1: a swizzle bug shows
#                as wrong cols mod 8 / moved values within 32-column chunks; N (never written) = a
#                store that did not happen or a bad C map
#   exact        default config, ragged and tiny shapes (peer rows past M), K % 8 != 0, several tiles
#                per block (4096x4096x256: the ring's parity across tiles)
#   random       random inputs, including 2048^3
#   bench        t3, t4 and cuBLAS at 2048^3, 4096^3, 8192^3 (bench.csv; bench_t4.csv if a fallback ran)
#   tune         t4 at 4096^3, CLUSTER 1/2 x STORE 0/1 (results/h200/tuned.json, tune.log)
#   configs      BN 128 x 6 stages, 2 stages, GROUP_M 1/16, CLUSTER 1, STORE 0, exact
# Usage: source scripts/device_setup.sh && bash scripts/device_t4.sh  (or: bash scripts/device_trial.sh t4)
set -u
OUT=${OUT:-/tmp/gpulab-out}
dir=$OUT/t4; mkdir -p "$dir"
: >"$dir/summary.txt"
source scripts/device_step.sh  # step / trial NAME SECONDS COMMAND...
BUDGET=148  # seconds for the whole script: each step's limit is cut to what is left
FAILED=""
PROBE="python3 scripts/wgmma_probe.py --variant t4"

# 1. This machine's NVRTC (13.0): ptxas report and SASS of the default, CLUSTER=1 and BN=128 builds.
trial compile 20 python3 - <<'PY'
import subprocess, shutil
from pathlib import Path
from gpulab.gpu.compile import compile_kernel, nvrtc_version
folder = Path("src/gpulab/experiments/gemm_bf16")
print("NVRTC", nvrtc_version())
tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
base = {"BM": 128, "BN": 256, "STAGES": 4, "GROUP_M": 8, "CLUSTER": 2, "STORE": 1}
for p in (base, base | {"CLUSTER": 1, "STORE": 0}, base | {"BN": 128, "STAGES": 6}):
    c = compile_kernel(folder / "t4_persistent_cluster.cu", "gemm_bf16", p, arch="sm_90a")
    print(p, c.resources)
    print("\n".join(l for l in c.log.splitlines() if l.strip()))
    try:
        sass = subprocess.run([tool, "-sass", str(c.cubin_path)], capture_output=True, text=True, timeout=20).stdout
        for op in ("HGMMA", "UTMALDG.2D.MULTICAST", "UTMALDG", "UTMASTG", "SYNCS", "UCGABAR", "WARPGROUP.DEPBAR",
                   "USETMAXREG", "LDL", "STL"):
            print(f"  SASS {op}: {sass.count(op)}")
    except Exception as exc:
        print("  no SASS:", exc)
PY

# 1b. How many 2-block clusters of t4 fit at once (the persistent grid assumes SMs / 2): fewer would
#     leave the last clusters of the grid for a second wave (t4 CLUSTER=2 then ~2x slower than CLUSTER=1).
trial clusters 15 python3 - <<'PY'
from pathlib import Path
from cuda.bindings import driver as d
from gpulab.experiments.gemm_bf16.tma_rungs import T4, sm_count, t4_smem_bytes
from gpulab.gpu.compile import compile_kernel
p = T4.default_params()
c = compile_kernel(Path("src/gpulab/experiments/gemm_bf16") / T4.file, "gemm_bf16", p, arch="sm_90a")
smem = t4_smem_bytes(p)
print("cuInit", d.cuInit(0))
err, dev = d.cuDeviceGet(0)
err, ctx = d.cuDevicePrimaryCtxRetain(dev)
print("ctx", err, d.cuCtxSetCurrent(ctx))
err, mod = d.cuModuleLoadData(Path(c.cubin_path).read_bytes())
print("module", err)
err, f = d.cuModuleGetFunction(mod, b"gemm_bf16")
print("function", err, d.cuFuncSetAttribute(f, d.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem))
cfg = d.CUlaunchConfig()
cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = sm_count(), 1, 1
cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = 384, 1, 1
cfg.sharedMemBytes, cfg.numAttrs = smem, 0
err, n = d.cuOccupancyMaxActiveClusters(f, cfg)
print(f"SMs {sm_count()}, max active 2-block clusters: {n} ({err}); the grid uses {sm_count() // 2}")
PY

# 2. Tiny exact cases, one block / one cluster: CLUSTER=1 first (t3's loads on the persistent loop),
#    then the multicast path on its own, so a hang in one does not hide the other's verdict.
trial tiny_c1 15 $PROBE --exact --params CLUSTER=1,STORE=0 128x256x64 128x256x1024 300x600x520
trial tiny_c2 15 $PROBE --exact --params STORE=0 256x256x64 256x256x1024 128x256x64 300x600x520
trial tiny_store 15 $PROBE --exact --params CLUSTER=1 128x256x64 256x256x1024 300x600x520
# What the later steps run: the default config, or (when a tiny step failed) the path that passed,
# so a broken multicast or TMA store does not also cost the bench its verdict (and the time of hangs).
OVR=""
case " $FAILED " in *" tiny_c2 "*) OVR="CLUSTER=1";; esac
case " $FAILED " in *" tiny_store "*) OVR="${OVR:+$OVR,}STORE=0";; esac
echo "later steps run t4 with: ${OVR:-its defaults}" >>"$dir/summary.txt"
P=${OVR:+--params $OVR}
# 3. Default config (128 x 256 tiles, 4 stages, clusters of 2, TMA-store epilogue), exact: ring wrap,
#    ragged M/N (TMA zero fill, clipped and odd-N register stores, a peer's rows wholly past M), K not
#    a multiple of 8 (element copies, no tensor map), then more cluster tiles than clusters (each
#    block loops over 4 tiles: parity and the epilogue's bulk groups across tiles).
trial exact 30 $PROBE --exact $P 1x1x8 129x257x72 200x300x136 1000x3001x776 200x300x137 1x1x1 65x130x777 \
    4096x4096x256 3000x5000x264
trial random 20 $PROBE $P 2048x2048x2048 777x1234x1000 1000x3000x777 4096x4096x512
# 4. The experiment's own path: bench beside cuBLAS BF16 (and t3), then a short tune at 4096^3.
if [ -z "$OVR" ]; then
    trial bench 45 gpulab bench gemm_bf16 --variant t3,t4 --size 2048,4096,8192 --out "$dir/bench.csv"
else
    BP=$(tr ',' '\n' <<<"$OVR" | sed 's/^/-p /' | tr '\n' ' ')
    trial bench 45 bash -c "gpulab bench gemm_bf16 --variant t3 --size 2048,4096,8192 --out $dir/bench.csv && \
        gpulab bench gemm_bf16 --variant t4 $BP --size 2048,4096,8192 --out $dir/bench_t4.csv"
fi
if [ -z "$OVR" ]; then
    trial tune 35 gpulab tune gemm_bf16 t4 --size 4096 -p GROUP_M=8 -p CLUSTER=1,2 -p STORE=0,1
else
    trial tune 35 gpulab tune gemm_bf16 t4 --size 4096 -p GROUP_M=4,8,16 $BP
fi
# 5. Other configs of the tune space, exact, with several tiles per block.
trial configs 25 $PROBE --exact --params BN=128,STAGES=6${OVR:+,$OVR} --params STAGES=2,GROUP_M=1${OVR:+,$OVR} \
    --params GROUP_M=16,CLUSTER=1${OVR:+,$OVR} --params BN=128,STAGES=3,CLUSTER=1,STORE=0 1030x2100x520 4096x4096x192
# 6. Only when a check failed: the memory checker on a small ragged case (multicast writes, remote arrivals).
if [ -n "$FAILED" ]; then
    trial sanitize 25 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $PROBE --exact 300x600x520
fi
echo "failed steps:${FAILED:- none}" >>"$dir/summary.txt"
echo "== summary ($dir/summary.txt; each step's log is $dir/<step>.log)"
cat "$dir/summary.txt"
