#!/usr/bin/env bash
# The H200 trial of gemm_bf16 rung t4 (persistent grid, 2-block clusters with TMA multicast of Bt,
# wgmma wait depth 1): one script, <= 150 s, every step under timeout, going on past a failing step.
# Run from the repo root after `source scripts/device_setup.sh`; logs and CSVs go to $OUT/t4/.
# Read summary.txt first (one line per step with its exit status), then the logs in step order:
#   compile      ptxas (168 regs at entry, 0 spills), SASS counts: HGMMA, UTMALDG.2D.MULTICAST, UTMASTG, USETMAXREG
#   tiny_pp      PINGPONG=1 (consumers alternate whole 128 x 128 tiles, ordered mainloops), exact:
#                CLUSTER=1 STORE=0 first, then CLUSTER=2 STORE=1; several tiles per consumer (the order
#                barriers' phases); a HANG (timeout, no OK line) = order/empty barrier counts or parity
#   exact_pp     PINGPONG=1, the exact step's shapes; random_pp: random inputs
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
#   tune         t4 at 4096^3, 5 configs: BN 256 x 4 stages, BN 128 x 4/6 stages x PINGPONG 0/1
#                (results/h200/tuned.json, copied to $OUT/t4/tuned.json; the bench then uses it)
#   bench        t3, t4 (tuned) and cuBLAS at 2048^3, 4096^3, 8192^3 (bench.csv); bench_pp: t4
#                PINGPONG=1 BN=128 STAGES=6 at the same sizes (bench_pp.csv)
#   configs      PINGPONG=1 with 4 stages / GROUP_M 1, exact
# Usage: source scripts/device_setup.sh && bash notebook/device/device_t4.sh  (or: bash scripts/device_trial.sh t4)
set -u
OUT=${OUT:-/tmp/gpulab-out}
dir=$OUT/t4; mkdir -p "$dir"
: >"$dir/summary.txt"
source scripts/device_step.sh  # step / trial NAME SECONDS COMMAND...
BUDGET=140  # seconds for the whole script: each step's limit is cut to what is left
FAILED=""
PROBE="python3 notebook/probes/wgmma_probe.py --variant t4"

# 1. This machine's NVRTC (13.0): ptxas report and SASS of the default, CLUSTER=1 and BN=128 builds.
trial compile 15 python3 - <<'PY'
import subprocess, shutil
from pathlib import Path
from gpulab.gpu.compile import compile_kernel, nvrtc_version
folder = Path("src/gpulab/experiments/gemm_bf16")
print("NVRTC", nvrtc_version())
tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
base = {"BM": 128, "BN": 256, "STAGES": 4, "GROUP_M": 8, "CLUSTER": 2, "STORE": 1, "PINGPONG": 0}
pp = base | {"BN": 128, "STAGES": 6, "PINGPONG": 1}
for p in (base, pp, pp | {"CLUSTER": 1, "STORE": 0}):
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

# (The clusters step ran on 2026-12-01: 66 two-block clusters fit at once, as the grid assumes.)

# 2. Tiny exact cases, one block / one cluster: CLUSTER=1 first (t3's loads on the persistent loop),
#    then the multicast path on its own, so a hang in one does not hide the other's verdict.
#    The new path first: pingpong consumers, one tile, then several per consumer (2048 x 2048 x 64: 256
#    128 x 128 tiles for 132 blocks, ~1 per consumer; 4096 x 2048: ~2 per consumer), then clusters + TMA store.
PP=BN=128,STAGES=6,PINGPONG=1
trial tiny_pp 20 $PROBE --exact --params $PP,CLUSTER=1,STORE=0 --params $PP,CLUSTER=2,STORE=1 \
    128x128x64 256x128x1024 300x600x520 2048x2048x64 4096x2048x128
trial tiny_c2 10 $PROBE --exact --params STORE=0 256x256x64 300x600x520
trial tiny_store 10 $PROBE --exact --params CLUSTER=1 128x256x64 300x600x520
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
trial exact 20 $PROBE --exact $P 1x1x8 129x257x72 200x300x136 1000x3001x776 200x300x137 65x130x777 \
    4096x4096x256 3000x5000x264
if ! grep -q " tiny_pp " <<<" $FAILED "; then
    trial exact_pp 20 $PROBE --exact --params $PP 1x1x8 129x257x72 1000x3001x776 200x300x137 65x130x777 \
        4096x4096x256 3000x5000x264
    trial random_pp 15 $PROBE --params $PP 2048x2048x2048 1000x3000x777 4096x4096x512
else
    echo "exact_pp, random_pp, bench_pp skipped: tiny_pp failed" >>"$dir/summary.txt"
fi
trial random 12 $PROBE $P 2048x2048x2048 1000x3000x777
# 4. The experiment's own path: bench beside cuBLAS BF16 (and t3), then a short tune at 4096^3.
# The tune first (5 configs at 4096^3, ~3 s each: the default, BN 128 at 4 and 6 stages, each with
# and without pingpong consumers), so that bench's t4 row runs the tuned config (tuned.json).
TUNE_PP="-p PINGPONG=0,1"
grep -q " tiny_pp \| exact_pp " <<<" $FAILED " && TUNE_PP="-p PINGPONG=0"
if [ -z "$OVR" ]; then
    trial tune 30 gpulab tune gemm_bf16 t4 --size 4096 -p BN=128,256 -p STAGES=4,6 -p GROUP_M=8 -p CLUSTER=2 \
        -p STORE=1 $TUNE_PP
else
    trial tune 30 gpulab tune gemm_bf16 t4 --size 4096 -p BN=128,256 -p STAGES=4,6 -p GROUP_M=8 $BP -p PINGPONG=0
fi
cp results/h200/tuned.json "$dir/tuned.json" 2>/dev/null
if [ -z "$OVR" ]; then
    trial bench 40 gpulab bench gemm_bf16 --variant t3,t4 --size 2048,4096,8192 --out "$dir/bench.csv"
else
    trial bench 40 bash -c "gpulab bench gemm_bf16 --variant t3 --size 2048,4096,8192 --out $dir/bench.csv && \
        gpulab bench gemm_bf16 --variant t4 $BP --size 2048,4096,8192 --out $dir/bench_t4.csv"
fi
if ! grep -q " tiny_pp \| exact_pp " <<<" $FAILED "; then
    trial bench_pp 25 gpulab bench gemm_bf16 --variant t4 -p BN=128 -p STAGES=6 -p PINGPONG=1 -p GROUP_M=8 \
        -p CLUSTER=2 -p STORE=1 --size 2048,4096,8192 --out "$dir/bench_pp.csv"
fi
# 5. Other configs of the tune space, exact, with several tiles per block.
if ! grep -q " tiny_pp \| exact_pp " <<<" $FAILED "; then
    trial configs 12 $PROBE --exact --params BN=128,STAGES=4,PINGPONG=1,GROUP_M=1 \
        --params BN=128,STAGES=2,PINGPONG=1,CLUSTER=1 1030x2100x520 4096x4096x192
fi
# 6. Only when a check failed: the memory checker on a small ragged case (multicast writes, remote arrivals).
if [ -n "$FAILED" ]; then
    SAN=$P; grep -q " tiny_pp \| exact_pp " <<<" $FAILED " && SAN="--params $PP,CLUSTER=1"  # the failing path
    trial sanitize 20 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $PROBE --exact $SAN 300x600x520
fi
echo "failed steps:${FAILED:- none}" >>"$dir/summary.txt"
echo "== summary ($dir/summary.txt; each step's log is $dir/<step>.log)"
cat "$dir/summary.txt"
