#!/usr/bin/env bash
# The H200 trial of tcmisc (issue 14): padded staging for K % 8 != 0 on the TMA rungs t2/t3, the wgmma
# tensor-rate ceiling, the t2/t3 access models against ncu. One script, <= 150 s, every step under
# timeout, going on past a failing step. Run from the repo root after `source scripts/device_setup.sh`;
# logs and CSVs go to $OUT/tcmisc/. Read summary.txt first: one line per step with its exit status.
# Usage: source scripts/device_setup.sh && bash notebook/device/device_tcmisc.sh  (or: bash scripts/device_trial.sh tcmisc)
set -u
OUT=${OUT:-/tmp/gpulab-out}
dir=$OUT/tcmisc; mkdir -p "$dir"
: >"$dir/summary.txt"
source scripts/device_step.sh  # step / trial NAME SECONDS COMMAND...
BUDGET=148  # seconds for the whole script: each step's limit is cut to what is left
FAILED=""

# 1. Compile on this machine's NVRTC (13.0): the staging kernel, t2/t3 without their per-thread copy
#    path, the wgmma ceiling kernel; the ptxas report in full and the SASS opcodes that matter.
trial compile 15 python3 - <<'PY'
import shutil, subprocess
from pathlib import Path
from gpulab.gpu.compile import compile_kernel, nvrtc_version
print("NVRTC", nvrtc_version())
tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
src = Path("src/gpulab/experiments")
for f, entry, p, arch in (("gemm_bf16/pad_k.cu", "pad_k_bf16", {}, "sm_90"),
                          ("gemm_bf16/t2_wgmma_tma.cu", "gemm_bf16", {"BM": 128, "BN": 256, "STAGES": 4, "GROUP_M": 8}, "sm_90a"),
                          ("gemm_bf16/t3_warp_specialized.cu", "gemm_bf16", {"BM": 128, "BN": 256, "STAGES": 4, "GROUP_M": 8}, "sm_90a"),
                          ("ceilings/wgmma_peak.cu", "wgmma_peak", {}, "sm_90a")):
    c = compile_kernel(src / f, entry, p, arch=arch)
    print(f, p, c.resources)
    print("\n".join(l for l in c.log.splitlines() if l.strip()))
    sass = subprocess.run([tool, "-sass", str(c.cubin_path)], capture_output=True, text=True, timeout=20).stdout
    print("  SASS", {op: sass.count(op) for op in ("HGMMA", "UTMALDG", "WARPGROUP.DEPBAR", "LDS", "STS", "LDG", "STG", "LDL", "STL")})
PY
# 2. The staged path's correctness: pad_k alone (first wrong row/col), then t2/t3 through the lab at
#    K = 137 and 777 (staged; exact and random) and 4097^3, 4000^3 (random); t4 too (test_rung_correct).
trial pytest_staging 45 python3 -m pytest -q -m gpu tests/gpu/test_wgmma_gpu.py \
    -k "staging or 137 or 777 or (random and (4097 or 4000x4000))"
# 3. The BF16 ceilings: the stored tensor_bf16 row was mma.sync, so `gpulab ceilings` measures just the
#    BF16 rows again (wgmma tensor_bf16, tensor_bf16_mma_sync, cuBLAS BF16) and keeps the others.
trial ceilings 30 bash -c "gpulab ceilings && cp results/*/ceilings.csv '$dir/ceilings.csv'"
# 4. What the staging copy costs alone: staged bytes, time, GB/s against the copy ceiling.
trial staging_cost 15 python3 - "$dir/staging_cost.csv" <<'PY'
import csv, sys
from gpulab.experiments import get_experiment
from gpulab.gpu.timing import TimingPolicy, time_it, L2Flusher
from gpulab.lab import Lab, RunSpec
from gpulab import ceilings
lab = Lab()
copy_gbps = (ceilings.load(ceilings.ceilings_path(f"results/{lab.device.slug}")) or ceilings.Ceilings([])).copy_gbps
exp, t3 = get_experiment("gemm_bf16"), get_experiment("gemm_bf16").variant("t3")
rows = []
for dims in ((4097, 4097, 4097), (1000, 3000, 777), (8191, 8191, 8191)):
    shape = exp.shape(*dims)
    inputs = lab.device_inputs(RunSpec(exp, t3, t3.default_params(), shape), False, 1)
    staged = t3.stage(inputs, shape, t3.default_params(), lab.arch)
    t = time_it(staged.copy, TimingPolicy(), L2Flusher(lab.device.l2_bytes))
    gbps = staged.moved_bytes / (t.median_ms / 1e3) / 1e9
    row = {"shape": shape.label, "staged_bytes": staged.moved_bytes, "time_ms": t.median_ms, "time_min_ms": t.min_ms,
           "gbps": gbps, "copy_ceiling_gbps": copy_gbps, "pct_of_copy_ceiling": 100 * gbps / copy_gbps if copy_gbps else None}
    print(row); rows.append(row)
with open(sys.argv[1], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0])); w.writeheader(); w.writerows(rows)
PY
# 5. The bench (t2, t3 and t4, which stages the same way): staged (4097^3, 1000x3000x777) beside the nearest aligned shapes (4096^3, 1000x3000x776)
#    and 4000^3 (ragged M/N, K % 8 == 0: no staging), each with cuBLAS BF16.
trial bench 55 gpulab bench gemm_bf16 --variant t2,t3,t4 --shape 4097x4097x4097 --shape 1000x3000x777 \
    --shape 1000x3000x776 --shape 4000x4000x4000 --shape 4096x4096x4096 --out "$dir/bench.csv"
# 6. The t2/t3 access models against ncu: the ragged shapes first (K = 200 and K = 37, staged, N odd),
#    then the default shape if time is left.
trial fidelity_ragged 35 gpulab fidelity gemm_bf16 --variant t2,t3 --shapes ragged --out "$dir/fidelity.csv"
trial fidelity_default 30 gpulab fidelity gemm_bf16 --variant t2,t3 --shapes default --out "$dir/fidelity.csv"
echo "failed steps:${FAILED:- none}" >>"$dir/summary.txt"
echo "== summary ($dir/summary.txt; each step's log is $dir/<step>.log)"
cat "$dir/summary.txt"
