"""Record real Nsight Compute output as test fixtures (run on a GPU machine with ncu; < 1 minute).

    python3 scripts/ncu_capture_fixtures.py [--out tests/fixtures/ncu] [--library]

Captures SGEMM v0 (BLOCK=16) and v1 (TILE=16) at 512^3, the configs of matmul_profile.cu's predicted table
(docs/SOURCES.md), with
exactly the metrics `gpulab profile` asks for, the way it asks (gpulab.gpu.ncu's export, then import
as raw CSV), and writes into --out:
  sgemm_v0_512_raw.csv, sgemm_v1_512_raw.csv    what `ncu --import ... --csv --page raw` printed
  sgemm_v0_512_info.json, sgemm_v1_512_info.json what the profiled program reported
  sgemm_v1_512_oneshot.txt                        the one-step form: program stdout, then the CSV
  no_kernel.txt                                   ncu's output when the kernel name matches nothing
  MANIFEST.json                                   ncu version, commands, exit codes, seconds
The CPU tests (tests/test_ncu.py) parse these and skip with a reason while they are absent.

With --library it records only the vendor library's captures instead (the call inside the profiler
range, as `gpulab profile sgemm cublas` takes it), at 512^3 for each experiment with a library:
  <experiment>_cublas_512_raw.csv, <experiment>_cublas_512_info.json, LIBRARY_MANIFEST.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpulab import quantities as Q
from gpulab.errors import GpulabError
from gpulab.gpu import ncu as ncu_mod
from gpulab.jobs.profile import capture_request, child_env
from gpulab.files import write_atomic
from gpulab.run.args import make_spec

CONFIGS = (("v0", {"BLOCK": 16}), ("v1", {"TILE": 16}))
LIBRARY_RUNS = (("sgemm", "cublas"), ("gemm_bf16", "cublas"))
SIZE = 512


def record_libraries(out: Path) -> int:
    """The vendor library's call at SIZE^3 for each of LIBRARY_RUNS, captured as `gpulab profile` does."""
    ncu = ncu_mod.find_ncu()
    manifest = {"ncu": ncu, "ncu_version": ncu_mod.ncu_version(ncu), "size": SIZE, "runs": []}
    with tempfile.TemporaryDirectory(prefix="gpulab-fixtures-") as tmp:
        tmp = Path(tmp)
        for experiment, library in LIBRARY_RUNS:
            spec = make_spec(experiment, library, {}, f"{SIZE}x{SIZE}x{SIZE}")
            stem = f"{experiment}_{library}_{SIZE}"
            request = capture_request(spec, tmp / f"{stem}.json", metrics=tuple(Q.metric_names()))
            t0 = time.monotonic()
            cap = ncu_mod.capture(request, tmp / f"{stem}.ncu-rep", ncu, child_env())
            write_atomic(out / f"{stem}_raw.csv", cap.csv_text)
            shutil.copyfile(tmp / f"{stem}.json", out / f"{stem}_info.json")
            manifest["runs"].append({"file": f"{stem}_raw.csv", "label": spec.label,
                                     "command": ncu_mod.capture_command(ncu, request, Path("REPORT.ncu-rep")),
                                     "seconds": round(time.monotonic() - t0, 1)})
            print(f"{spec.label}: {time.monotonic() - t0:.1f} s", flush=True)
    write_atomic(out / "LIBRARY_MANIFEST.json", json.dumps(manifest, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/ncu"))
    parser.add_argument("--library", action="store_true", help="record only the vendor library's captures")
    ns = parser.parse_args(argv)
    out: Path = ns.out
    out.mkdir(parents=True, exist_ok=True)
    if ns.library:
        return record_libraries(out)
    ncu = ncu_mod.find_ncu()
    env = child_env()
    start = time.monotonic()
    manifest = {"ncu": ncu, "ncu_version": ncu_mod.ncu_version(ncu), "size": SIZE, "runs": []}

    with tempfile.TemporaryDirectory(prefix="gpulab-fixtures-") as tmp:
        tmp = Path(tmp)
        for variant, params in CONFIGS:
            spec = make_spec("sgemm", variant, params, f"{SIZE}x{SIZE}x{SIZE}")
            info = tmp / f"{variant}.json"
            request = capture_request(spec, info, metrics=tuple(Q.metric_names()))
            t0 = time.monotonic()
            cap = ncu_mod.capture(request, tmp / f"{variant}.ncu-rep", ncu, env)
            write_atomic(out / f"sgemm_{variant}_{SIZE}_raw.csv", cap.csv_text)
            shutil.copyfile(info, out / f"sgemm_{variant}_{SIZE}_info.json")
            manifest["runs"].append({"file": f"sgemm_{variant}_{SIZE}_raw.csv", "label": spec.label,
                                     "command": ncu_mod.capture_command(ncu, request, Path("REPORT.ncu-rep")),
                                     "seconds": round(time.monotonic() - t0, 1)})
            print(f"{spec.label}: {time.monotonic() - t0:.1f} s", flush=True)

        # The one-step form, program output and CSV on one stdout (what the parser must also read).
        spec = make_spec("sgemm", "v1", dict(CONFIGS[1][1]), f"{SIZE}x{SIZE}x{SIZE}")
        request = capture_request(spec, tmp / "oneshot.json", metrics=tuple(Q.metric_names()))
        t0 = time.monotonic()
        cmd = ncu_mod.oneshot_command(ncu, request)
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        write_atomic(out / f"sgemm_v1_{SIZE}_oneshot.txt", r.stdout)
        manifest["runs"].append({"file": f"sgemm_v1_{SIZE}_oneshot.txt", "command": cmd, "exit": r.returncode,
                                 "stderr_tail": r.stderr[-2000:], "seconds": round(time.monotonic() - t0, 1)})
        print(f"one-step: {time.monotonic() - t0:.1f} s (exit {r.returncode})", flush=True)

        # No match: the real words ncu prints when the kernel filter matches nothing.
        bad = dataclasses.replace(capture_request(spec, tmp / "none.json", metrics=("dram__bytes_read.sum",)),
                                  kernel_name="no_such_kernel")
        t0 = time.monotonic()
        cmd = ncu_mod.capture_command(ncu, bad, tmp / "none.ncu-rep")
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        write_atomic(out / "no_kernel.txt", f"exit {r.returncode}\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}")
        manifest["runs"].append({"file": "no_kernel.txt", "command": cmd, "exit": r.returncode,
                                 "report_written": (tmp / "none.ncu-rep").exists(),
                                 "seconds": round(time.monotonic() - t0, 1)})
        print(f"no match: {time.monotonic() - t0:.1f} s (exit {r.returncode})", flush=True)

    manifest["seconds"] = round(time.monotonic() - start, 1)
    write_atomic(out / "MANIFEST.json", json.dumps(manifest, indent=1))
    print(f"wrote fixtures to {out} in {manifest['seconds']} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except GpulabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
