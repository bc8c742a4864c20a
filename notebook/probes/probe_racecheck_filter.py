"""Issue 42's lead on racecheck's faults in clusters of two: does the fault follow the name filter?

Every fault so far was on a cluster launch whose operands a kernel outside `--kernel-name` had
just written (gemm_bf16's pad_k; CuPy's RNG and cast kernels for kc), and every clean cluster run
read operands uploaded with a copy. This runs gpulab sanitize's own child (gpulab.run.sanitize_child)
under racecheck four ways for each case:

    filtered   --kernel-name as gpulab sanitize runs it, inputs drawn on the device (as today)
    all        no --kernel-name: every kernel instrumented, inputs drawn on the device
    filtered-host / all-host   the same with the inputs drawn on the host and uploaded (no kernel
               writes them; the experiment's make_device_inputs is switched off in the child)

and a fifth, `count2`: filtered with "--launch-count 2" beside the name, the command gpulab sanitize
ran until 2026-12-04 (and scripts/probe_cluster_sanitizer.py --set t4 still runs). It prints one
line per (case, way): the exit code, racecheck's error count, the tool's own error if
any, and the child's check. Cases: t4 CLUSTER=2 at 17x33x65 (staged by pad_k) and 17x33x128 (not
staged), kc at gemm_bf16's sanitize shape, v14 CLUSTER=2 at sgemm's; t4 CLUSTER=1 as a control.

    python3 notebook/probes/probe_racecheck_filter.py [--case NAME]... [--way WAY]... [--jobs 8] [--timeout 120]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.jobs.sanitize import command, find_sanitizer, parse_log, sanitize_shape
from gpulab.run.lab import RunSpec

# name: (experiment, variant, params over the defaults, shape or None for the sanitize shape)
CASES = {
    "t4-c2-staged": ("gemm_bf16", "t4", {"CLUSTER": 2}, (17, 33, 65)),
    "t4-c2-plain": ("gemm_bf16", "t4", {"CLUSTER": 2}, (17, 33, 128)),
    "t4-c1-staged": ("gemm_bf16", "t4", {"CLUSTER": 1}, (17, 33, 65)),
    "kc": ("gemm_bf16", "kc", {}, None),
    "kc-plain": ("gemm_bf16", "kc", {}, (17, 33, 128)),
    "v14-c2": ("sgemm", "v14", {"CLUSTER": 2}, None),
}
WAYS = ("filtered", "all", "filtered-host", "all-host", "count2")

# The child with the device draw switched off: the experiment's make_device_inputs returns None, so
# gpulab.run.lab.Lab.device_inputs draws on the host and uploads with a copy.
HOST_CHILD = """
import sys
from gpulab.experiments import base, gemm_common
base.Experiment.make_device_inputs = lambda self, *a, **k: None
for cls in vars(gemm_common).values():
    if isinstance(cls, type) and "make_device_inputs" in vars(cls):
        cls.make_device_inputs = lambda self, *a, **k: None
from gpulab.run import sanitize_child
sys.exit(sanitize_child.main(sys.argv[1:]))
"""


def spec_of(case: str) -> RunSpec:
    exp_name, variant_name, params, dims = CASES[case]
    exp = get_experiment(exp_name)
    v = exp.variant(variant_name)
    full = v.default_params() | params
    shape = exp.shape(*dims) if dims else sanitize_shape(exp, lambda s: not v.constraints(full, s))
    return RunSpec(exp, v, full, shape)


def argv_of(sanitizer: Path, spec: RunSpec, way: str, spec_file: Path, log: Path) -> list[str]:
    argv = command(sanitizer, "racecheck", spec.experiment.entry, spec_file, log)
    if way == "count2":
        i = argv.index("--kernel-name")
        argv[i + 2:i + 2] = ["--launch-count", "2"]
    if way.startswith("all"):  # drop the name filter: every kernel of the child instrumented
        i = argv.index("--kernel-name")
        del argv[i:i + 2]
    if way.endswith("host"):  # the child program: "-m gpulab.run.sanitize_child" -> the host-draw child
        i = argv.index("-m")
        argv[i:i + 2] = ["-c", HOST_CHILD]
    return argv


def run(sanitizer: Path, case: str, way: str, timeout: float, keep: Path | None = None) -> str:
    spec = spec_of(case)
    with tempfile.TemporaryDirectory() as tmp:
        spec_file, log = Path(tmp) / "spec.pkl", Path(tmp) / "log.txt"
        spec_file.write_bytes(pickle.dumps(spec))
        argv = argv_of(sanitizer, spec, way, spec_file, log)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
            code, out = done.returncode, done.stdout
        except subprocess.TimeoutExpired:
            code, out = -1, ""
        report = parse_log(log.read_text(errors="replace")) if log.exists() else None
        if keep is not None and log.exists():
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"{case}-{way}-racecheck.log").write_bytes(log.read_bytes())
    child = next((json.loads(line) for line in reversed(out.splitlines()) if line.startswith("{")), {})
    errors = "" if report is None or report.errors is None else str(report.errors)
    said = "" if report is None else (report.tool_error or report.first or "")
    return (f"{case:<14} {spec.shape.label:<11} {way:<14} exit {code:>3}  errors {errors:>5}  "
            f"child {json.dumps(child)[:60]:<60}  {said[:110]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--way", action="append", choices=WAYS)
    parser.add_argument("--keep-logs", type=Path, help="copy each compute-sanitizer log into this folder")
    args = parser.parse_args()
    try:
        sanitizer = find_sanitizer()
    except GpulabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pairs = [(c, w) for c in (args.case or CASES) for w in (args.way or WAYS)]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for line in pool.map(lambda p: run(sanitizer, *p, args.timeout, args.keep_logs), pairs):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
