"""Measure every pattern of model/patterns.py under Nsight Compute and write a JSON fixture.

Run on a machine with an NVIDIA GPU, ncu and CuPy (about half a minute):

    python3 scripts/pattern_fixtures.py --out tests/fixtures/warp_patterns.json

It compiles patterns.cu once, then starts ONE child Python process under ncu that launches the
probe of each pattern in turn (one block of one warp, the pattern's lane offsets loaded into
constant memory first). ncu profiles each launch of a `probe_*` kernel; the i-th profiled launch
is the i-th pattern, which the child confirms by writing the order it launched in. One process
for all patterns keeps the run short: ncu's start-up costs seconds, a tiny kernel milliseconds.

The fixture records, per pattern, its offsets (so a stale fixture is detected when the catalogue
changes) and every metric below as ncu counted it; tests/test_warp_fixtures.py holds the warp
model to those numbers. This is a tool for a GPU machine, built on gpulab.gpu.ncu (finding ncu,
running it, parsing its CSV); CuPy is imported only in the child.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu.compile import compile_kernel
from gpulab.model import patterns as patterns_mod
from gpulab.model.patterns import GLOBAL_BYTES, LANES, PATTERNS

PATTERNS_CU = Path(patterns_mod.__file__).resolve().with_name("patterns.cu")

# Every name checked against ncu's gh100 metric list (tests/fixtures/ncu/gh100_metrics.tsv);
# tests/test_warp_fixtures.py checks them again.
METRICS = (
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "smsp__inst_executed_op_shared_ld_pred_on_any.sum",
    "smsp__inst_executed_op_shared_st_pred_on_any.sum",
    "smsp__inst_executed_op_global_ld.sum",
    "smsp__inst_executed_op_global_st.sum",
)
KERNEL_FILTER = "regex:^probe_"


# -- the parent: compile, run ncu, write the fixture ----------------------------------------------


def measure(out: Path, arch: str, ncu: str, only: str | None, timeout_s: int) -> dict:
    patterns = [p for p in PATTERNS if only is None or re.search(only, p.name)]
    if not patterns:
        raise SystemExit(f"no pattern matches --only {only!r}")
    compiled = compile_kernel(PATTERNS_CU, PATTERNS[0].probe, {}, arch)
    with tempfile.TemporaryDirectory(prefix="gpulab-patterns-") as tmp:
        log, order = Path(tmp) / "ncu.csv", Path(tmp) / "order.json"
        cmd = [
            ncu, *ncu_mod.RAW_CSV_FLAGS, "--clock-control", "none",
            "--kernel-name", KERNEL_FILTER, "--metrics", ",".join(METRICS), "--log-file", str(log),
            sys.executable, str(Path(__file__).resolve()),
            "--launch", str(compiled.cubin_path), "--order", str(order),
            *(["--only", only] if only else []),
        ]
        env = dict(os.environ)
        src = str(Path(patterns_mod.__file__).resolve().parents[2])  # the directory holding the gpulab package
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise SystemExit(
                f"ncu did not finish within {timeout_s} s; measure in parts with --only "
                "(e.g. '^(lds|sts)' then '^(ldg|stg)': each run merges into --out)"
            ) from None
        text = log.read_text() if log.exists() else ""
        if proc.returncode != 0 or '"ID"' not in text:
            _explain_failure(proc, text)
        launched = json.loads(order.read_text())
        rows = ncu_mod.parse_csv(text)

    if len(rows) != len(launched["names"]):
        raise SystemExit(f"ncu profiled {len(rows)} launches, the child launched {len(launched['names'])}")
    by_name = {p.name: p for p in patterns}
    entries = []
    for row, name in zip(rows, launched["names"]):
        p = by_name[name]
        if (row.kernel or p.probe).strip() != p.probe:
            raise SystemExit(f"launch {row.info.get('ID')} is {row.kernel}, expected {p.probe} for {name}")
        entries.append({
            "name": p.name, "space": p.space, "kind": p.kind, "width": p.width, "probe": p.probe,
            "repeat": p.repeat, "offsets": list(p.offsets),
            "measured": {m: number(row.metrics[m]) for m in METRICS if m in row.metrics},
        })
    if only is not None and out.exists():
        # A partial run updates the patterns it measured and keeps the others.
        fresh = {e["name"] for e in entries}
        kept = [e for e in json.loads(out.read_text())["patterns"] if e["name"] not in fresh]
        rank = {p.name: k for k, p in enumerate(PATTERNS)}
        entries = sorted(kept + entries, key=lambda e: rank.get(e["name"], len(rank)))
    fixture = {
        "generated_by": "python3 scripts/pattern_fixtures.py",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": launched.get("device", ""),
        "arch": arch,
        "ncu_version": ncu_mod.ncu_version(ncu),
        "metrics": list(METRICS),
        "sass": probe_sass(compiled.cubin_path),
        "patterns": entries,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = out.with_name(out.name + ".tmp")
    tmp_out.write_text(json.dumps(fixture, indent=1) + "\n")
    os.replace(tmp_out, out)
    return fixture


def number(value: float) -> int | float | None:
    """A count as JSON writes it: 4, not 4.0; None where ncu gave no value."""
    if math.isnan(value):
        return None
    return int(value) if float(value).is_integer() else value


def probe_sass(cubin: Path) -> dict[str, list[str]]:
    """The memory instructions of each probe, from nvdisasm or cuobjdump when either is at hand:
    they show whether ptxas kept the access predicated. {} when neither is found."""
    for tool, args in (("nvdisasm", ["-c"]), ("cuobjdump", ["-sass"])):
        exe = shutil.which(tool) or (f"/usr/local/cuda/bin/{tool}" if Path(f"/usr/local/cuda/bin/{tool}").exists() else None)
        if not exe:
            continue
        try:
            text = subprocess.run([exe, *args, str(cubin)], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        sass: dict[str, list[str]] = {}
        current = None
        for line in text.splitlines():
            if m := re.search(r"(?:Function : |^\s*\.text\.)(probe_\w+)", line):
                current = m.group(1)
                sass.setdefault(current, [])
            elif current and re.search(r"\b(LDG|STG|LDS|STS)\b", line):
                sass[current].append(re.sub(r"/\*[^*]*\*/", "", line).strip().rstrip(";").strip())
        if sass:
            return sass
    return {}


def _explain_failure(proc: subprocess.CompletedProcess, log_text: str) -> None:
    tail = "\n".join((log_text + "\n" + proc.stdout + "\n" + proc.stderr).strip().splitlines()[-30:])
    hint = ""
    if "ERR_NVGPUCTRPERM" in tail:
        hint = ("\nncu may not read the GPU's counters: run as root, or allow it "
                "(NVreg_RestrictProfilingToAdminUsers=0).")
    raise SystemExit(f"ncu failed (exit {proc.returncode}):\n{tail}{hint}")


# -- the child: launch each pattern's probe once, in order ----------------------------------------


def launch_patterns(cubin: Path, order: Path, only: str | None) -> None:
    import cupy as cp
    import numpy as np

    module = cp.RawModule(path=str(cubin))
    table = cp.ndarray((LANES,), dtype=cp.int64, memptr=module.get_global("lane_offset"))
    buf = cp.zeros(GLOBAL_BYTES, dtype=cp.uint8)
    if buf.data.ptr % 512:
        raise SystemExit(f"the global buffer is not 512-byte aligned ({buf.data.ptr:#x}): offsets would lie")
    names = []
    for p in PATTERNS:
        if only is not None and not re.search(only, p.name):
            continue
        # A copy, not a kernel: only the probes show up under ncu's kernel filter anyway.
        table.set(np.array([-1 if o is None else o for o in p.offsets], dtype=np.int64))
        module.get_function(p.probe)((1,), (LANES,), (buf,))
        cp.cuda.Device().synchronize()
        names.append(p.name)
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"]
    order.write_text(json.dumps({"device": name.decode() if isinstance(name, bytes) else name, "names": names}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 scripts/pattern_fixtures.py", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="where to write the JSON fixture")
    parser.add_argument("--arch", default="sm_90", help="compile the probes for this arch (default sm_90)")
    parser.add_argument("--ncu", default=None, help="path to ncu (default: $GPULAB_NCU, PATH, the CUDA toolkit's)")
    parser.add_argument("--only", default=None, help="measure only the patterns whose name matches this regex")
    parser.add_argument("--timeout", type=int, default=110, help="seconds to allow the ncu run (default 110)")
    parser.add_argument("--launch", type=Path, help=argparse.SUPPRESS)  # child mode, under ncu
    parser.add_argument("--order", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.launch:
        launch_patterns(args.launch, args.order, args.only)
        return 0
    if args.out is None:
        parser.error("--out is required")
    try:
        ncu = args.ncu or ncu_mod.find_ncu()
    except ncu_mod.NcuNotFound as exc:
        raise SystemExit(str(exc)) from None
    fixture = measure(args.out, args.arch, ncu, args.only, args.timeout)
    print(f"wrote {len(fixture['patterns'])} patterns measured on {fixture['device']} to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
