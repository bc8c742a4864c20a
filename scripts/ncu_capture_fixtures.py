"""Record real Nsight Compute reports as test fixtures (run on a GPU machine with ncu; about a minute).

    python3 scripts/ncu_capture_fixtures.py [--out tests/fixtures/ncu_reports] [--only NAME,...]

Each fixture is one capture exactly as `gpulab profile` (or `--sass`) takes it (gpulab.jobs.profile:
the child program, the metrics of gpulab.quantities, one ncu process writing a .ncu-rep), kept small
(a counters capture leaves the kernel's code out; only the source-counter capture needs it). Into
--out, per fixture NAME:
  NAME.ncu-rep     the report
  NAME.json        what the profiled program reported (device, resources, occupancy, check)
and MANIFEST.json: the ncu and its version, the card, each fixture's run, command, seconds and size.
Then every report is read back through the report interface (gpulab.gpu.ncu_reader), and the
metrics gpulab asks for that a report has no value for are listed (there should be none).

The fixtures: the runs results/h200/fidelity.csv holds, at small shapes, so the CPU tests hold each
report to the recorded rows and to the access model (tests/test_ncu_reports.py), and a vendor
library's call (two kernels: a split-K GEMM and its reduction):
  sgemm_v1_512, sgemm_v1_512_again   a classic rung, captured twice (hardware counters that move)
  sgemm_v9_129x67x33                 cp.async (LDGSTS) counters
  sgemm_v9_129x67x33_source          the same launch's source counters (per SASS instruction)
  gemm_bf16_t1_131x67x37             ldmatrix (LDSM) counters
  gemm_bf16_t4_131x67x37             wgmma (GMMA) and TMA counters, a cluster launch
  sgemm_cublas_512                   cuBLAS FP32's call (split-K GEMM + reduction)
  gemm_bf16_cublas_512               cuBLAS BF16's call (one nvjet kernel)
The CPU tests skip, naming this command, while a fixture is absent.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from gpulab import quantities as Q
from gpulab.errors import GpulabError
from gpulab.files import write_atomic
from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu import ncu_reader
from gpulab.jobs.profile import capture_request, child_env
from gpulab.run.args import make_spec

OUT = Path("tests/fixtures/ncu_reports")
# name -> (experiment, variant, params, shape, what is captured: 'metrics' or 'source')
FIXTURES: dict[str, tuple[str, str, dict, str, str]] = {
    "sgemm_v1_512": ("sgemm", "v1", {}, "512x512x512", "metrics"),
    "sgemm_v1_512_again": ("sgemm", "v1", {}, "512x512x512", "metrics"),
    "sgemm_v9_129x67x33": ("sgemm", "v9", {}, "129x67x33", "metrics"),
    "sgemm_v9_129x67x33_source": ("sgemm", "v9", {}, "129x67x33", "source"),
    "gemm_bf16_t1_131x67x37": ("gemm_bf16", "t1", {}, "131x67x37", "metrics"),
    "gemm_bf16_t4_131x67x37": ("gemm_bf16", "t4", {}, "131x67x37", "metrics"),
    "sgemm_cublas_512": ("sgemm", "cublas", {}, "512x512x512", "metrics"),
    "gemm_bf16_cublas_512": ("gemm_bf16", "cublas", {}, "512x512x512", "metrics"),
}
SIZE_LIMIT = 1 << 20  # bytes: a fixture is committed, so it stays small
COMMAND = "python3 scripts/ncu_capture_fixtures.py"


def capture_one(name: str, out: Path, ncu: str, tmp: Path) -> dict:
    experiment, variant, params, shape, what = FIXTURES[name]
    spec = make_spec(experiment, variant, params, shape)
    info = tmp / f"{name}.json"
    mode = {"source_counters": True} if what == "source" else {"metrics": tuple(Q.metric_names())}
    request = capture_request(spec, info, **mode)
    report = out / f"{name}.ncu-rep"
    t0 = time.monotonic()
    ncu_mod.capture(request, report, ncu, child_env())
    shutil.copyfile(info, out / f"{name}.json")
    return {"name": name, "label": spec.label, "captured": what, "file": report.name,
            "bytes": report.stat().st_size, "seconds": round(time.monotonic() - t0, 1),
            "command": ncu_mod.capture_command(ncu, request, Path(report.name))}


def check(entry: dict, out: Path, interface: ncu_reader.Interface) -> list[str]:
    """Problems with one recorded fixture: too big, unreadable, metrics without a value."""
    problems = []
    if entry["bytes"] > SIZE_LIMIT:
        problems.append(f"{entry['file']} is {entry['bytes']:,} bytes, over {SIZE_LIMIT:,}")
    try:
        launches = ncu_reader.read_launches(out / entry["file"], interface)
    except GpulabError as exc:
        return problems + [str(exc)]
    if entry["captured"] == "metrics":
        for launch in launches:
            if missing := ncu_mod.missing_metrics(launch, Q.metric_names()):
                problems.append(f"{entry['file']} {launch.kernel}: no value for {', '.join(missing)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", help=f"comma-separated fixture names (default: all of {', '.join(FIXTURES)})")
    ns = parser.parse_args(argv)
    names = [n.strip() for n in ns.only.split(",")] if ns.only else list(FIXTURES)
    if unknown := [n for n in names if n not in FIXTURES]:
        raise GpulabError(f"no fixture named {', '.join(unknown)}; the fixtures: {', '.join(FIXTURES)}")
    out: Path = ns.out
    out.mkdir(parents=True, exist_ok=True)
    ncu = ncu_mod.find_ncu()
    interface = ncu_reader.find_interface(ncu)
    start = time.monotonic()
    manifest_path = out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() and ns.only else {"fixtures": []}
    entries = {e["name"]: e for e in manifest["fixtures"]}
    with tempfile.TemporaryDirectory(prefix="gpulab-fixtures-") as tmp:
        for name in names:
            entries[name] = capture_one(name, out, ncu, Path(tmp))
            print(f"{name}: {entries[name]['label']}, {entries[name]['bytes']:,} bytes in "
                  f"{entries[name]['seconds']} s", flush=True)
    device = json.loads((out / f"{names[0]}.json").read_text()).get("device", {})
    manifest = {
        "generated_by": COMMAND, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "ncu": ncu, "ncu_version": ncu_mod.ncu_version(ncu), "gpu": device.get("name", ""),
        "read_by": interface.describe(),
        "fixtures": [entries[n] for n in FIXTURES if n in entries],
    }
    write_atomic(manifest_path, json.dumps(manifest, indent=1) + "\n")
    problems = [p for e in manifest["fixtures"] if e["name"] in names for p in check(e, out, interface)]
    for p in problems:
        print(f"problem: {p}", file=sys.stderr)
    print(f"wrote {len(names)} fixtures to {out} in {time.monotonic() - start:.1f} s, read back by "
          f"{interface.describe()}: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except GpulabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
