"""`gpulab sanitize`: every variant under compute-sanitizer's four tools, one row per (run, tool).

The value checker sees outputs; it cannot see a load past the end of a buffer whose value was
then discarded, a race the scheduler happened to order well, a barrier some threads skip, or a
read of memory nothing wrote. compute-sanitizer can: memcheck (out-of-bounds and misaligned
accesses), racecheck (shared-memory hazards), synccheck (barrier misuse) and initcheck
(uninitialised global reads). Each run is checked once, at a small ragged shape (edges in every
dimension), in a child program (gpulab.run.sanitize_child) under each tool, with only the run's own
kernel instrumented (--kernel-name; the child launches it only as often as its check needs): CuPy's and
cuBLAS's kernels, which build inputs and references, are not sanitized, except under initcheck,
which must see their writes to know the memory initialised.

Rows go to results/<gpu>/sanitize.csv: the run, the kernel's source fingerprint (source_sha, so a
verdict is known to belong to the kernel as it is today), the tool, the error count (racecheck:
errors and warnings), the first report line, and a verdict. A correct variant must be clean under
all four; a demonstration (expected_wrong, the stencil's nosync) must have its hazard reported by
racecheck.

A tool can fail inside itself: "Internal Sanitizer Error: The Sanitizer failed to handle a hardware
exception", the kernel then faulting under the tool only (racecheck on every cluster launch of t4,
v14 and kc on the H200, 2026-12-02 to 04, while this command passed "--launch-count 2" beside the
name filter; without it they are clean: docs/results/sanitize.md). That is told apart from a kernel's error by evidence, never by the
message alone: the same check run again outside the tool (its values right), and the run's other
tools (memcheck and synccheck clean). With that evidence the row's verdict is TOOL_FAULT and the
`evidence` column says what was seen; without it (the kernel wrong or faulting outside the tool
too, or memcheck reporting errors) it stays ERRORS. A tool fault is not a clean record: the tool
checked nothing (gpulab.jobs.clean keeps such a config from being the best row).
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
from gpulab.gpu.device import require_gpu
from gpulab.quantities import CLEAN, SANITIZE_FILE, SANITIZE_REQUIRED_COLUMNS, TOOL_FAULT
from gpulab.records import Records, card_folder, environment, read_csv, upsert
from gpulab.run.lab import RunSpec, compile_spec, constraint_reason
from gpulab.run.progress import QUIET, Progress

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
    # No --launch-count: the child launches the kernel only as often as its check needs (once, twice
    # for integer outputs). With "--launch-count 2" beside the name filter, the planted out-of-bounds
    # read and the planted race went unreported once GEMM inputs were drawn on the device (H200,
    # 2026-12-04: CuPy's RNG and cast kernels launch first), as if the count ran over every launch,
    # and racecheck faulted inside itself on every cluster launch (t4, v14, kc), which it does not
    # without the flag (notebook/probes/probe_racecheck_filter.py).
    only_ours = [] if tool == "initcheck" else [
        "--kernel-name", f"kernel_name={entry}",  # the run's kernel only, by its exact (extern "C": unmangled) name
    ]
    return [str(sanitizer), "--tool", tool, *only_ours,
            # Host API errors are the harness's own and it checks them itself; left on, every TMA rung
            # counted 34 from cuda-bindings' start-up, which asks cuGetProcAddress for entry points this
            # driver lacks (H200, 2026-12-02), and buried what the tools exist for: the kernel's.
            "--report-api-errors", "no",
            "--print-limit", "20", "--show-backtrace", "no",
            "--log-file", str(log_file),  # the reports apart from the child's own JSON line
            sys.executable, "-m", "gpulab.run.sanitize_child", str(spec_file)]


def sanitize_one(sanitizer: Path, spec: RunSpec, tool: str, folder: Path, timeout_s: float = CHILD_TIMEOUT_S,
                 keep_log: Path | None = None) -> dict:
    """Run the check of `spec` under `tool`, its files in `folder` (one folder per pair); the row.
    With `keep_log`, compute-sanitizer's log is copied there. Where the tool failed inside itself
    (Report.tool_error), the check is run once more outside the tool: the row's `outside_tool`
    says what it gave (judge_tool_faults weighs it)."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = tool
    spec_file, log_file = folder / f"{stem}.pkl", folder / f"{stem}.log"
    spec_file.write_bytes(pickle.dumps(spec))
    start = time.monotonic()
    try:
        done = subprocess.run(command(sanitizer, tool, spec.experiment.entry, spec_file, log_file),
                              capture_output=True, text=True, timeout=timeout_s, env=_child_env())
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
    if keep_log is not None and log_file.exists():
        keep_log.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log_file, keep_log)
    row = spec.base_record() | {
        "source_sha": spec.source_sha(), "tool": tool, "errors": report.errors, "warnings": report.warnings,
        "first_report": report.first, "checked_values": _values_text(child),
        "outside_tool": _values_text(check_outside(spec_file, timeout_s)) if report.tool_error else "",
        "seconds": round(time.monotonic() - start, 1),
    }
    return row | {"verdict": verdict(row, report), "evidence": ""}


def _child_env() -> dict:
    return os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the spec's modules, as here


def check_outside(spec_file: Path, timeout_s: float = CHILD_TIMEOUT_S) -> dict:
    """The same check as under the tool (gpulab.run.sanitize_child), run without it: its verdict."""
    try:
        done = subprocess.run([sys.executable, "-m", "gpulab.run.sanitize_child", str(spec_file)],
                              capture_output=True, text=True, timeout=timeout_s, env=_child_env())
    except subprocess.TimeoutExpired:
        return {"faulted": f"timed out after {timeout_s:g} s"}
    return _child_verdict(done.stdout) or {"faulted": f"no verdict (exit {done.returncode})"}


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


ERRORS = "ERRORS"


def verdict(row: dict, report: "Report") -> str:
    """clean; errors; for a demonstration, whether racecheck reported its hazard; a fault inside the
    tool (provisional: judge_tool_faults decides it from the evidence); or the problem."""
    if report.problem:
        return report.problem
    if report.tool_error:
        return TOOL_FAULT
    found = (report.errors or 0) + report.warnings
    if row.get("expected_wrong") and row["tool"] == "racecheck":
        return "hazard reported (a demonstration)" if found else "MISSED: the demonstration's hazard was not reported"
    if row.get("expected_wrong") and found:
        # A wrong demonstration takes the checker's wrong-answer path (counting and locating wrong
        # elements), whose CuPy kernels initcheck reported on the H200; only its race is judged.
        return "reported in a demonstration (not judged)"
    return CLEAN if not found else ERRORS


def run_key(row: dict) -> tuple:
    """(experiment, variant, params, shape) as text: one run, whatever the tool. As text because a
    row read back from the CSV has a one-dimensional shape as a number (100003) and a row just made
    has it as a label ('100003'): compared raw, the stencil's runs were kept twice (2026-12-04)."""
    return tuple(str(row.get(k) if row.get(k) is not None else "") for k in ("experiment", "variant", "params", "shape"))


def judge_tool_faults(rows: list[dict], recorded: list[dict] = ()) -> list[dict]:
    """Each provisional TOOL_FAULT row decided from the evidence: the check outside the tool and the
    same run's other tools (in `rows`, else among the `recorded` rows of the same kernel source).
    TOOL_FAULT stays where the values were right outside the tool and no other tool reported an
    error; `evidence` says what was seen (a tool not run is said so). Else the row is ERRORS: the
    kernel fails without the tool too. The other rows are returned unchanged."""
    out = []
    for row in rows:
        if row.get("verdict") != TOOL_FAULT:
            out.append(row)
            continue
        same = [r for r in (*rows, *recorded) if run_key(r) == run_key(row) and r is not row
                and r.get("source_sha") == row.get("source_sha")]
        others = {}
        for r in same:  # this batch's row of a tool first, else the latest recorded
            others.setdefault(r["tool"], r)
        said = (row.get("first_report") or "Internal Sanitizer Error").split(":")[0]  # the whole line is first_report
        parts = [f"{row['tool']} stopped inside itself ({said})",
                 f"outside the tool: {row.get('outside_tool') or 'not checked'}"]
        bad = row.get("outside_tool") != "correct"
        for tool in ("memcheck", "synccheck"):
            if tool == row["tool"]:
                continue
            other = others.get(tool)
            parts.append(f"{tool}: {other['verdict'] if other else 'not run'}")
            bad |= other is not None and other["verdict"] not in (CLEAN, TOOL_FAULT)
        out.append(row | {"verdict": ERRORS if bad else TOOL_FAULT, "evidence": "; ".join(parts)})
    return out


def failed(row: dict) -> bool:
    """A row that makes `gpulab sanitize` exit non-zero: anything but clean, an expected hazard, or a
    fault of the tool's own (said apart in the summary line)."""
    return not (row["verdict"] in (CLEAN, TOOL_FAULT)
                or row["verdict"].startswith(("hazard reported", "reported in a demonstration")))


# -- compute-sanitizer's log ------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Report:
    errors: int | None  # None: no summary line (the sanitizer did not finish)
    warnings: int  # racecheck's warnings (hazards it rates less sure); 0 for the other tools
    first: str  # the first report: its headline and where ("at ..."), or ""
    problem: str = ""
    tool_error: str = ""  # the tool's own failure ("Internal Sanitizer Error: ..."), if it reported one


_PREFIX = re.compile(r"^=+ ?")
# Anchored: a second line, "ERROR SUMMARY: 1,073 errors were not printed. Use --print-limit ...",
# follows the count when the print limit was reached.
_ERROR_SUMMARY = re.compile(r"^ERROR SUMMARY: ([\d,]+) errors?$")
_RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: ([\d,]+) hazards? displayed \(([\d,]+) errors?, ([\d,]+) warnings?\)")
# The tool failing inside itself, not a report about the program (seen under racecheck on the H200).
_TOOL_ERROR = re.compile(r"Internal Sanitizer Error")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def parse_log(text: str) -> Report:
    """Read compute-sanitizer's log: the error count from its summary line(s), its first report, and
    any failure of the tool's own.

    Every line of the log starts with '========= '. A report is a line that is not indented after
    that prefix (its headline), followed by indented detail lines ('    at sgemm+0x1b0 in
    file.cu:42', '    by thread (3,0,0) in block (1,0,0)', ...). The summary ends the log:
    'ERROR SUMMARY: N errors'; racecheck also writes 'RACECHECK SUMMARY: H hazards displayed
    (E errors, W warnings)'. A headline naming an 'Internal Sanitizer Error' is the tool's own
    failure (Report.tool_error), counted in the summary like a report.
    """
    errors: int | None = None
    race: tuple[int, int] | None = None
    headline, where, tool_error = "", "", ""
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
        if not tool_error and _TOOL_ERROR.search(body):
            tool_error = body
    warnings = 0
    if race is not None:
        if errors is None:
            errors = race[0]
        warnings = race[1]
    first = f"{headline}; {where}" if headline and where else headline
    return Report(errors, warnings, first, tool_error=tool_error)


# -- the whole command -------------------------------------------------------------------------
def log_name(spec: RunSpec, tool: str) -> str:
    """A kept log's file name: experiment, variant, params and shape, then the tool."""
    params = spec.variant.params_label(spec.params).replace(" ", "_") if spec.variant else ""
    return re.sub(r"[^A-Za-z0-9_=.x-]", "_", "-".join(filter(None, (
        spec.experiment.name, spec.variant.name if spec.variant else spec.library, params, spec.shape.label, tool)))) + ".log"


def run_all(sanitizer: Path, specs: list[RunSpec], tools: tuple[str, ...], arch: str, jobs: int,
            on_done=lambda row: None, log_dir: Path | None = None, recorded: list[dict] = (),
            timeout_s: float = CHILD_TIMEOUT_S) -> list[dict]:
    """Every (spec, tool), `jobs` child processes at a time, each cut off after `timeout_s`; rows in
    plan order, tool faults judged (judge_tool_faults, with the `recorded` rows as further evidence).
    With `log_dir`, every compute-sanitizer log is kept there (log_name)."""
    for spec in specs:  # compile here, once: the children then load every cubin from the cache
        compile_spec(spec, arch)
    pairs = [(s, t) for s in specs for t in tools]
    with tempfile.TemporaryDirectory(prefix="gpulab-sanitize-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(sanitize_one, sanitizer, s, t, Path(tmp) / str(i // len(tools)), timeout_s,
                               keep_log=log_dir / log_name(s, t) if log_dir is not None else None)
                   for i, (s, t) in enumerate(pairs)]
        for f in concurrent.futures.as_completed(futures):
            on_done(f.result())
        return judge_tool_faults([f.result() for f in futures], recorded)


def row_key(row: dict) -> tuple:
    """One (run, tool): a row of sanitize.csv replaces the recorded row of the same key."""
    return (*run_key(row), row.get("tool"))


def merge(old: list[dict], new: list[dict]) -> list[dict]:
    """The recorded rows with those of the same (run, tool) replaced by the new ones."""
    fresh = {row_key(r) for r in new}
    return [r for r in old if row_key(r) not in fresh] + new


def save(path: Path, rows: list[dict]) -> None:
    """Upsert `rows` into the sanitize CSV at `path`, under its lock (a damaged file is refused)."""
    upsert(path, rows, key=row_key, required=SANITIZE_REQUIRED_COLUMNS)


def summary_line(rows: list[dict], path: Path) -> str:
    bad = [r for r in rows if failed(r)]
    faults = [r for r in rows if r["verdict"] == TOOL_FAULT]
    runs = len({run_key(r) for r in rows})
    said = (f"; {len(faults)} tool fault(s), not the kernel's (evidence column): "
            + ", ".join(f"{r['variant']} {r.get('params') or ''} {r['tool']}".replace("  ", " ") for r in faults[:3])
            + ("; ..." if len(faults) > 3 else "")) if faults else ""
    if not bad:
        return f"{runs} runs x {len({r['tool'] for r in rows})} tools: every correct variant clean, " \
               f"every demonstration's hazard reported{said}; wrote {path}"
    names = "; ".join(f"{r['experiment']} {r['variant']} {r.get('params') or ''} {r['tool']}: {r['verdict']}"
                      .replace("  ", " ") for r in bad[:3])
    return f"{len(bad)} of {len(rows)} (run, tool) rows failed: {names}{'; ...' if len(bad) > 3 else ''}{said}; wrote {path}"


def select(specs: list[RunSpec], names: list[str] | None, params: dict | None) -> list[RunSpec]:
    """The planned runs of the named variants (None: all) whose params take every value `params`
    gives ({'CLUSTER': (2,)}: the configs in clusters of two); a name or param no planned run has
    is an error that lists what there is."""
    if names:
        known = {s.variant.name for s in specs}
        if missing := [n for n in names if n not in known]:
            raise GpulabError(f"no variant {', '.join(missing)} to sanitize; planned: {', '.join(sorted(known)) or 'none'}")
        specs = [s for s in specs if s.variant.name in names]
    for name, values in (params or {}).items():
        if not any(name in s.params for s in specs):
            raise GpulabError(f"no planned run has a param {name}: drop it")
        specs = [s for s in specs if s.params.get(name) in values]
    return specs


def sanitize(experiments: list[Experiment], tuned_of, names: list[str] | None = None, tools: tuple[str, ...] = TOOLS,
             params: dict | None = None, jobs: int = 8, out: Path | None = None, log_dir: Path | None = None,
             progress: Progress = QUIET) -> Records:
    """`gpulab sanitize` (and gpulab.sanitize): every variant of `experiments` (built-in, on
    GPULAB_PATH, or with one-file variants added) at its default params and each config
    `tuned_of(results folder)` names (gpulab.jobs.tune.load_tuned: tuned.json), at the small ragged
    shape, under `tools`; rows upserted into `out` (default results/<gpu>/sanitize.csv). Records
    with `.path` and `.skipped` ([(spec, why)]: what this card cannot run)."""
    if unknown := [t for t in tools if t not in TOOLS]:
        raise GpulabError(f"unknown tool {', '.join(unknown)}: choose from {', '.join(TOOLS)}")
    if not tools:
        raise GpulabError(f"no tool named: choose from {', '.join(TOOLS)}")
    if jobs < 1:
        raise GpulabError(f"jobs must be at least 1; got {jobs}")
    sanitizer = find_sanitizer()
    device = require_gpu()
    folder = card_folder(device.slug)
    path = Path(out) if out else folder / FILE_NAME
    recorded = read_recorded(path)  # a damaged file is refused before any work
    specs, skipped = plan(experiments, tuned_of(folder), device.arch)
    specs = select(specs, names, params)
    progress.planned(len(specs) * len(tools))
    rows = run_all(sanitizer, specs, tuple(tools), device.arch, jobs, on_done=progress.finished,
                   log_dir=Path(log_dir) if log_dir else None, recorded=recorded)
    env = environment(device, device.arch)
    rows = [r | env for r in rows]
    save(path, rows)
    records = Records(rows, path)
    records.skipped = skipped
    return records


def read_recorded(path: Path) -> list[dict]:
    """The rows of a sanitize CSV (none where it does not exist); a damaged one is refused."""
    return read_csv(path, required=SANITIZE_REQUIRED_COLUMNS) if Path(path).exists() else []
