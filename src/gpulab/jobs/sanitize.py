"""`gpulab sanitize`: every variant under compute-sanitizer's four tools, one row per (run, tool).

The value checker sees outputs; it cannot see a load past the end of a buffer whose value was
then discarded, a race the scheduler happened to order well, a barrier some threads skip, or a
read of memory nothing wrote. compute-sanitizer can: memcheck (out-of-bounds and misaligned
accesses), racecheck (shared-memory hazards), synccheck (barrier misuse) and initcheck
(uninitialised global reads). Each run is checked once, at a small ragged shape (edges in every
dimension), in a child program (gpulab.run.sanitize_child) under each tool, with only the run's own
kernel instrumented (--kernel-name) and at most two of its launches (--launch-count): CuPy's and
cuBLAS's kernels, which build inputs and references, are not sanitized, except under initcheck,
which must see their writes to know the memory initialised.

Rows go to results/<gpu>/sanitize.csv: the run, the tool, the error count (racecheck: errors and
warnings), the first report line, and a verdict. A correct variant must be clean under all four;
a demonstration (expected_wrong, the stencil's nosync) must have its hazard reported by racecheck.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Shape
from gpulab.run.lab import RunSpec, compile_spec, constraint_reason
from gpulab.quantities import SANITIZE_FILE

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
FILE_NAME = SANITIZE_FILE
CHILD_TIMEOUT_S = 300.0
# Small and ragged: more than one block tile in every dimension, a multiple of no tile size.
SHAPES = {"sgemm": (257, 131, 77), "coalesce": (333, 517), "grayscale": (1001, 333), "stencil": (100_003,)}
LOOKED_AT = "GPULAB_SANITIZER, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin"


def find_sanitizer() -> Path:
    """compute-sanitizer: GPULAB_SANITIZER, else PATH, else $CUDA_HOME/bin, else /usr/local/cuda/bin."""
    if override := os.environ.get("GPULAB_SANITIZER"):
        path = Path(override)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise GpulabError(f"GPULAB_SANITIZER={override} is not an executable file; point it at compute-sanitizer")
    candidates = [shutil.which("compute-sanitizer")]
    if cuda_home := os.environ.get("CUDA_HOME"):
        candidates.append(str(Path(cuda_home) / "bin" / "compute-sanitizer"))
    candidates.append("/usr/local/cuda/bin/compute-sanitizer")
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    raise GpulabError(f"compute-sanitizer not found (looked at {LOOKED_AT}); install the CUDA toolkit "
                      "or set GPULAB_SANITIZER=/path/to/compute-sanitizer")


# -- what to sanitize ---------------------------------------------------------------------------
def sanitize_shape(experiment: Experiment, accepts=lambda shape: True) -> Shape:
    """The experiment's sanitize shape, else its smallest test shape the run accepts."""
    if experiment.name in SHAPES:
        shape = experiment.shape(*SHAPES[experiment.name])
        if accepts(shape):
            return shape
    by_size = sorted(experiment.test_shapes or experiment.default_shapes, key=lambda s: (sum(s), s))
    ragged = [experiment.shape(*s) for s in by_size if min(s) > 1]
    return next((s for s in ragged if accepts(s)), ragged[0] if ragged else experiment.shape(*by_size[0]))


def plan(experiments: list[Experiment], tuned: dict, arch: str) -> tuple[list[RunSpec], list[tuple[RunSpec, str]]]:
    """Every variant at its default params and at every config a tune recorded (tuned.json's best
    and best per shape), at the sanitize shape; the runs this card cannot take, with the reason."""
    specs, skipped = [], []
    for exp in experiments:
        for v in exp.variants:
            entry = tuned.get(exp.name, {}).get(v.name, {})
            configs = [v.default_params(), entry.get("params")] + [e.get("params") for e in entry.get("by_shape", {}).values()]
            seen = set()
            for params in configs:
                if params is None:  # no tuned entry
                    continue
                params = {p.name: int(params.get(p.name, p.default)) for p in v.params}
                if v.params_label(params) in seen:
                    continue
                seen.add(v.params_label(params))
                shape = sanitize_shape(exp, lambda s: not v.constraints(params, s))
                spec = RunSpec(exp, v, params, shape)
                if reason := constraint_reason(spec, arch):
                    skipped.append((spec, reason))
                else:
                    specs.append(spec)
    return specs, skipped


# -- one (run, tool) ----------------------------------------------------------------------------
def command(sanitizer: Path, tool: str, entry: str, spec_file: Path, log_file: Path) -> list[str]:
    # initcheck knows memory as written only through the kernels it instruments: with CuPy's fill and
    # reduction kernels filtered out, every copy back of their results read as uninitialised (seen on
    # the H200, 2026-12-01). So initcheck watches every kernel; the other tools only the run's own.
    only_ours = [] if tool == "initcheck" else [
        "--kernel-name", f"kernel_name={entry}",  # the run's kernel only, by its exact (extern "C": unmangled) name
        "--launch-count", "2",  # the check's launches: one, or two for integer outputs
    ]
    return [str(sanitizer), "--tool", tool, *only_ours,
            # Host API errors are the harness's own and it checks them itself; left on, every TMA rung
            # counted 34 from cuda-bindings' start-up, which asks cuGetProcAddress for entry points this
            # driver lacks (H200, 2026-12-02), and buried what the tools exist for: the kernel's.
            "--report-api-errors", "no",
            "--print-limit", "20", "--show-backtrace", "no",
            "--log-file", str(log_file),  # the reports apart from the child's own JSON line
            sys.executable, "-m", "gpulab.run.sanitize_child", str(spec_file)]


def sanitize_one(sanitizer: Path, spec: RunSpec, tool: str, folder: Path, timeout_s: float = CHILD_TIMEOUT_S) -> dict:
    """Run the check of `spec` under `tool`, its files in `folder` (one folder per pair); the row."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = tool
    spec_file, log_file = folder / f"{stem}.pkl", folder / f"{stem}.log"
    spec_file.write_bytes(pickle.dumps(spec))
    env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the spec's modules, as here
    start = time.monotonic()
    try:
        done = subprocess.run(command(sanitizer, tool, spec.experiment.entry, spec_file, log_file),
                              capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        report = Report(None, 0, "", f"timed out after {timeout_s:g} s")
        child = {}
    else:
        log = log_file.read_text(errors="replace") if log_file.exists() else ""
        report = parse_log(log)
        child = _child_verdict(done.stdout)
        if report.errors is None:
            tail = (done.stderr.strip() or log.strip() or done.stdout.strip() or "no output").splitlines()[-1]
            report = dataclasses.replace(report, problem=f"no summary from compute-sanitizer (exit {done.returncode}): {tail}")
    row = spec.base_record() | {
        "tool": tool, "errors": report.errors, "warnings": report.warnings,
        "first_report": report.first, "checked_values": _values_text(child),
        "seconds": round(time.monotonic() - start, 1),
    }
    return row | {"verdict": verdict(row, report)}


def _child_verdict(stdout: str) -> dict:
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    return {}


def _values_text(child: dict) -> str:
    if "faulted" in child:
        return f"faulted: {child['faulted']}"
    if "correct" in child:
        return "correct" if child["correct"] else f"wrong: {child.get('detail', '')}"
    return ""


def verdict(row: dict, report: "Report") -> str:
    """clean; errors; for a demonstration, whether racecheck reported its hazard; or the problem."""
    if report.problem:
        return report.problem
    found = (report.errors or 0) + report.warnings
    if row.get("expected_wrong") and row["tool"] == "racecheck":
        return "hazard reported (a demonstration)" if found else "MISSED: the demonstration's hazard was not reported"
    if row.get("expected_wrong") and found:
        # A wrong demonstration takes the checker's wrong-answer path (counting and locating wrong
        # elements), whose CuPy kernels initcheck reported on the H200; only its race is judged.
        return "reported in a demonstration (not judged)"
    return "clean" if not found else "ERRORS"


def failed(row: dict) -> bool:
    """A row that makes `gpulab sanitize` exit non-zero: anything but clean or an expected hazard."""
    return not (row["verdict"] == "clean" or row["verdict"].startswith(("hazard reported", "reported in a demonstration")))


# -- compute-sanitizer's log ------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Report:
    errors: int | None  # None: no summary line (the sanitizer did not finish)
    warnings: int  # racecheck's warnings (hazards it rates less sure); 0 for the other tools
    first: str  # the first report: its headline and where ("at ..."), or ""
    problem: str = ""


_PREFIX = re.compile(r"^=+ ?")
# Anchored: a second line, "ERROR SUMMARY: 1,073 errors were not printed. Use --print-limit ...",
# follows the count when the print limit was reached.
_ERROR_SUMMARY = re.compile(r"^ERROR SUMMARY: ([\d,]+) errors?$")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: ([\d,]+) hazards? displayed \(([\d,]+) errors?, ([\d,]+) warnings?\)")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def parse_log(text: str) -> Report:
    """Read compute-sanitizer's log: the error count from its summary line(s), and its first report.

    Every line of the log starts with '========= '. A report is a line that is not indented after
    that prefix (its headline), followed by indented detail lines ('    at sgemm+0x1b0 in
    file.cu:42', '    by thread (3,0,0) in block (1,0,0)', ...). The summary ends the log:
    'ERROR SUMMARY: N errors'; racecheck also writes 'RACECHECK SUMMARY: H hazards displayed
    (E errors, W warnings)'.
    """
    errors: int | None = None
    race: tuple[int, int] | None = None
    headline, where = "", ""
    for raw in text.splitlines():
        if not _PREFIX.match(raw):
            continue  # not the sanitizer's (a stray line of the program's own)
        line = _PREFIX.sub("", raw, count=1).rstrip()
        body = line.strip()
        if m := _ERROR_SUMMARY.search(body):
            errors = _number(m.group(1))
        elif m := _RACE_SUMMARY.search(body):
            race = (_number(m.group(2)), _number(m.group(3)))
        elif not body or body == "COMPUTE-SANITIZER":
            continue
        elif not line.startswith(" ") and not headline:
            headline = body
        elif headline and not where and body.startswith(("at ", "and ")):
            where = body
    warnings = 0
    if race is not None:
        if errors is None:
            errors = race[0]
        warnings = race[1]
    first = f"{headline}; {where}" if headline and where else headline
    return Report(errors, warnings, first)


# -- the whole command -------------------------------------------------------------------------
def run_all(sanitizer: Path, specs: list[RunSpec], tools: tuple[str, ...], arch: str, jobs: int,
            on_done=lambda row: None) -> list[dict]:
    """Every (spec, tool), `jobs` child processes at a time; rows in plan order."""
    for spec in specs:  # compile here, once: the children then load every cubin from the cache
        compile_spec(spec, arch)
    pairs = [(s, t) for s in specs for t in tools]
    with tempfile.TemporaryDirectory(prefix="gpulab-sanitize-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(sanitize_one, sanitizer, s, t, Path(tmp) / str(i // len(tools)))
                   for i, (s, t) in enumerate(pairs)]
        for f in concurrent.futures.as_completed(futures):
            on_done(f.result())
        return [f.result() for f in futures]


def merge(old: list[dict], new: list[dict]) -> list[dict]:
    """The recorded rows with those of the same (run, tool) replaced by the new ones."""
    key = lambda r: (r.get("experiment"), r.get("variant"), r.get("params") or "", r.get("shape"), r.get("tool"))
    fresh = {key(r) for r in new}
    return [r for r in old if key(r) not in fresh] + new


def summary_line(rows: list[dict], path: Path) -> str:
    bad = [r for r in rows if failed(r)]
    runs = len({(r["experiment"], r["variant"], r.get("params") or "", r["shape"]) for r in rows})
    if not bad:
        return f"{runs} runs x {len({r['tool'] for r in rows})} tools: every correct variant clean, " \
               f"every demonstration's hazard reported; wrote {path}"
    names = "; ".join(f"{r['experiment']} {r['variant']} {r.get('params') or ''} {r['tool']}: {r['verdict']}"
                      .replace("  ", " ") for r in bad[:3])
    return f"{len(bad)} of {len(rows)} (run, tool) rows failed: {names}{'; ...' if len(bad) > 3 else ''}; wrote {path}"
