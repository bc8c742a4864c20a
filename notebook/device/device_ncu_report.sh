#!/usr/bin/env bash
# Issue 43 item 1 on the H200: every profile read through Nsight Compute's Python report interface
# (gpulab.gpu.ncu_reader), no CSV. Records the report fixtures the CPU tests replay, replays them here,
# and runs the profile, a fidelity run and the GPU tests of profiling through the new path. <= 148 s.
# Logs and files go to $OUT/ncu_report/ (summary.txt first); the fixtures to tests/fixtures/ncu_reports
# and, to be committed from there, $OUT/ncu_report/ncu_reports/; the fidelity rows to $OUT/fid.csv.
# Usage: source scripts/device_setup.sh && bash notebook/device/device_ncu_report.sh
set -u
source scripts/device_step.sh
trials_begin ncu_report 148

# 1. Which ncu, and which report interface reads its reports: expected the install's own,
#    /opt/nvidia/nsight-compute/2025.3.1/extras/python (~2 s).
TAIL=4 trial interface 15 python3 -c "
from gpulab.gpu import ncu, ncu_reader
exe = ncu.find_ncu(); print(exe, ncu.ncu_version(exe)); print(ncu_reader.find_interface(exe).describe())"

# 2. The fixtures: 8 captures at small shapes (sgemm v1 twice, v9 and its source counters, gemm_bf16
#    t1 and t4, cuBLAS FP32 and BF16), each read back, sizes listed (~60 s; cuBLAS's two ~20 s of it).
TAIL=14 trial fixtures 75 python3 scripts/ncu_capture_fixtures.py
mkdir -p "$dir/ncu_reports" && cp tests/fixtures/ncu_reports/* "$dir/ncu_reports/" 2>/dev/null

# 3. The CPU tests that replay them, with this machine's interface (~15 s): every metric has a value
#    (ldgsts, ldsm, gmma, tma too), the counts equal results/h200/fidelity.csv's exact ones and the
#    model's, the stand-in ncu of `gpulab profile` serving them.
TAIL=8 trial replay 30 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_ncu_reports.py \
    tests/test_ncu_source.py tests/test_ncu_reader.py tests/test_profile_cli.py

# 4. `gpulab profile sgemm v1 --size 1024`: its record and its report come back in $dir (~8 s).
TAIL=30 trial profile 25 gpulab profile sgemm v1 --size 1024 --csv "$dir/profile.csv"

# 5. A fidelity run through the report, and its rows against today's (results/h200/fidelity.csv):
#    every quantity recorded exact must be measured the same (~12 s).
TAIL=8 trial fidelity 35 gpulab fidelity gemm_bf16 -v t1 --shapes default --out "$OUT/fid.csv"
TAIL=40 trial fid_same 10 python3 - "$OUT/fid.csv" <<'PY'
import sys
from pathlib import Path
from gpulab.records import read_csv
new = read_csv(Path(sys.argv[1]))
key = lambda r: (r["experiment"], r["variant"], r["params"], r["shape"], r["quantity"])
old = {key(r): r for r in read_csv(Path("results/h200/fidelity.csv"))}
same = differ = 0
for r in new:
    was = old.get(key(r))
    if was is None:
        print("no recorded row:", key(r)); differ += 1; continue
    if was.get("exact") is True or r.get("exact") is True:
        ok = r["measured"] == was["measured"] and r["verdict"] == was["verdict"]
        same += ok; differ += not ok
        if not ok:
            print(f"DIFFERS {r['quantity']}: now {r['measured']} {r['verdict']}, recorded {was['measured']} {was['verdict']}")
    else:
        print(f"  {r['quantity']}: now {r['measured']}, recorded {was['measured']} ({r['verdict']})")
reports = {r.get("ncu_report") for r in new}
print(f"{same} exact quantities the same, {differ} not; reports named: {reports}; "
      f"there: {[(Path(sys.argv[1]).parent / str(x)).is_file() for x in reports]}")
sys.exit(1 if differ or not same else 0)
PY

# 6. The GPU tests of profiling, all through the report (what is left of the budget; ~50 s at -n 8).
TAIL=15 trial gpu_tests 60 python3 -m pytest -q -p no:cacheprovider -n 8 -m gpu tests/gpu/test_profile_gpu.py
trials_end
