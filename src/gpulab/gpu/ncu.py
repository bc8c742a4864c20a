"""Nsight Compute (ncu) from Python: find it, build its command, and run one capture in a separate
process that writes a report (.ncu-rep). Reading the report is gpulab.gpu.ncu_reader's job (NVIDIA's
Python report interface): typed values, no text in between.

One ncu process per capture: `ncu ... --export REPORT program args`. The program's own output and
ncu's ==PROF== lines stay on stdout, where this module looks only for ncu's error texts; the numbers
come from the report, never from printed text. gpulab no longer prints the report as CSV (`ncu
--import --csv`) to parse it: the report interface ships with every Nsight Compute install (its
extras/python, the same version as the ncu that wrote the report) and as the `ncu-report` wheel, so
a second reader of the same facts would be a second way to do one thing, in a format of strings
with thousands separators and units rows that NVIDIA renames between versions. `parse_csv` below
stays only as the reader of the CSV log that scripts/pattern_fixtures.py asks ncu for (many probe
launches of one process); no profile, fidelity or per-instruction run reads CSV.

The capture runs with `--clock-control none`: ncu otherwise locks the clocks to base and every
duration stretches. Caches are flushed before each replay pass (ncu's default `--cache-control
all`), so DRAM counts describe a cold start, as the timed runs (L2 flushed) do. A capture of counters
leaves the kernel's code out of the report (`--import-sass no`: the cuBLAS modules' code would make
a library's report megabytes, and no counter needs it); a `--set full` capture (to open in ncu-ui)
and a per-instruction capture (SourceCounters, whose rows are SASS instructions) keep it.

This module knows nothing about experiments: it profiles an argv, filtered by kernel name and
launch skip. Errors are GpulabError subclasses with one line each (the CLI exits 2 on them).
"""

from __future__ import annotations

import csv
import dataclasses
import glob
import math
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from gpulab.errors import GpulabError

ENV_VAR = "GPULAB_NCU"
# Where ncu lands when it is not on PATH: the CUDA toolkit, then standalone Nsight Compute installs.
STANDARD_PATHS = ("/usr/local/cuda/bin/ncu",)
INSTALL_GLOBS = ("/opt/nvidia/nsight-compute/*/ncu",)

PERMISSION_CODE = "ERR_NVGPUCTRPERM"
NO_KERNEL_TEXT = "No kernels were profiled"
# Lines the profiled program writes to stderr when it fails (see gpulab.run.ncu_child).
TARGET_ERROR_PREFIX = "gpulab-target: error:"

CAPTURE_TIMEOUT_S = 900


# -- errors: one line each, what went wrong and what to do --------------------------------------
class NcuError(GpulabError):
    """Nsight Compute could not give us the counters."""


class NcuNotFound(NcuError):
    pass


class CountersNotPermitted(NcuError):
    pass


class NoKernelProfiled(NcuError):
    pass


class ProfiledProgramFailed(NcuError):
    pass


class NcuFailed(NcuError):
    pass


# -- finding ncu --------------------------------------------------------------------------------
def _version_key(path: str) -> tuple:
    """/opt/nvidia/nsight-compute/2025.3.1/ncu -> (2025, 3, 1): newest install first."""
    return tuple(int(x) for x in re.findall(r"\d+", Path(path).parent.name))


def _executable(path: str | Path) -> bool:
    p = Path(path)
    return p.is_file() and os.access(p, os.X_OK)


def find_ncu(
    env: Mapping[str, str] | None = None,
    standard_paths: Sequence[str] = STANDARD_PATHS,
    install_globs: Sequence[str] = INSTALL_GLOBS,
) -> str:
    """The ncu executable: $GPULAB_NCU if set (an explicit choice wins), else ncu on PATH, else the
    CUDA toolkit's, else the newest /opt/nvidia/nsight-compute/<version>/ncu."""
    env = os.environ if env is None else env
    explicit = env.get(ENV_VAR, "").strip()
    if explicit:
        if _executable(explicit):
            return explicit
        raise NcuNotFound(
            f"{ENV_VAR}={explicit} is not an executable file; point {ENV_VAR} at the ncu binary "
            "(e.g. /usr/local/cuda/bin/ncu) or unset it to search PATH"
        )
    on_path = shutil.which("ncu", path=env.get("PATH", ""))
    if on_path:
        return on_path
    for path in standard_paths:
        if _executable(path):
            return path
    for pattern in install_globs:
        found = sorted((p for p in glob.glob(pattern) if _executable(p)), key=_version_key, reverse=True)
        if found:
            return found[0]
    places = ["PATH", f"${ENV_VAR} (unset)", *standard_paths, *install_globs]
    raise NcuNotFound(
        "Nsight Compute (ncu) not found; looked in " + ", ".join(places)
        + f". Install Nsight Compute (it ships with the CUDA toolkit) or set {ENV_VAR}=/path/to/ncu"
    )


# -- building the commands ----------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class CaptureRequest:
    """What to profile: `target` (an argv) launches `kernel_name`; skip `launch_skip` launches of
    it and capture the next one. Or, with `profiler_range`, every kernel the target launches between
    its cudaProfilerStart and cudaProfilerStop, whatever their names: how a library call is captured,
    whose kernels are chosen by the library at run time (kernel_name '' and launch_skip 0 then).
    `metrics` are full metric names (base name + suffix)."""

    target: tuple[str, ...]
    kernel_name: str
    launch_skip: int
    metrics: tuple[str, ...]
    full_set: bool = False  # add `--set full` (every section) to the metrics
    source_counters: bool = False  # per-instruction counters instead (gpulab.gpu.ncu_source)
    profiler_range: bool = False

    def __post_init__(self) -> None:
        if not self.target:
            raise ValueError("nothing to profile: empty target argv")
        if self.profiler_range == bool(self.kernel_name):
            raise ValueError("name the kernel to capture, or capture the profiler range: one of the two")
        if self.launch_skip < 0:
            raise ValueError("launch_skip must be >= 0")
        if not self.metrics and not self.full_set and not self.source_counters:
            raise ValueError("no metrics asked for")
        bad = [m for m in self.metrics if not re.fullmatch(r"[A-Za-z0-9_.]+", m)]
        if bad:
            raise ValueError(f"not metric names: {bad}")


def base_command(ncu: str, request: CaptureRequest) -> list[str]:
    """What every capture of `request` starts with: profile exactly one launch of the kernel, clocks
    unlocked. Exact kernel-name match (not a regex) on the function name, so helper kernels the
    program launches (CuPy fills, the reference GEMM) never count towards the skip. A profiler-range
    capture instead starts with profiling off and takes every launch inside the target's
    cudaProfilerStart/Stop. Each mode below appends its own flags, then the target."""
    if request.profiler_range:
        return [ncu, "--clock-control", "none", "--profile-from-start", "off"]
    return [
        ncu,
        "--clock-control", "none",
        "--kernel-name-base", "function",
        "--kernel-name", request.kernel_name,
        "--launch-skip", str(request.launch_skip),
        "--launch-count", "1",
    ]


def metric_flags(request: CaptureRequest) -> list[str]:
    """What the report holds: the SourceCounters section (counters per SASS instruction), or `--set
    full` and/or `--metrics a,b,...`, as the request asks; the kernel's code only where it is read
    (the per-instruction rows are its instructions) or shown (ncu-ui's source page of a full report)."""
    if request.source_counters:
        return ["--section", "SourceCounters"]
    flags = ["--set", "full"] if request.full_set else ["--import-sass", "no"]
    return flags + (["--metrics", ",".join(request.metrics)] if request.metrics else [])


# ncu's raw page as CSV: one header row, one units row, one row per profiled launch; base units
# (bytes, not KB), numbers with thousands separators (read by parse_csv, for scripts/pattern_fixtures.py).
RAW_CSV_FLAGS = ("--csv", "--page", "raw", "--print-units", "base")


def capture_command(ncu: str, request: CaptureRequest, export: Path) -> list[str]:
    """`ncu ... --export REPORT program args`: profile the launch (or the range), save the report."""
    return [*base_command(ncu, request), *metric_flags(request), "--export", str(export), "--force-overwrite",
            *request.target]


# -- running ------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Capture:
    report: Path  # the .ncu-rep ncu wrote (gpulab.gpu.ncu_reader reads it)
    capture_output: str  # what ncu and the program printed during the capture


def run_tool(cmd: list[str], timeout: float, env: Mapping[str, str] | None, what: str):
    """Run an ncu command line; a timeout or a missing executable is a one-line NcuFailed."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=None if env is None else dict(env), errors="replace")
    except subprocess.TimeoutExpired:
        raise NcuFailed(f"{what} did not finish within {timeout:.0f} s ({' '.join(cmd[:3])} ...)") from None
    except OSError as exc:
        raise NcuFailed(f"could not run {cmd[0]}: {exc.strerror or exc}") from None


def tool_lines(text: str) -> list[str]:
    """ncu's own error and warning lines (==ERROR== / ==WARNING==), without the prefix."""
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*==(ERROR|WARNING)==\s*(.*)", line)
        if m and m.group(2).strip():
            out.append(f"{m.group(1).lower()}: {m.group(2).strip()}")
    return out


def classify_failure(returncode: int, output: str, request: CaptureRequest, report_written: bool) -> None:
    """Raise the one error that explains a capture, or return when it succeeded."""
    if PERMISSION_CODE in output:
        raise CountersNotPermitted(
            f"ncu may not read this GPU's performance counters ({PERMISSION_CODE}). Run as root "
            "(sudo -E env \"PATH=$PATH\" gpulab ...), or let every user read them: an admin sets "
            "`options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/ and reloads "
            "the driver (in a container: start it with --cap-add=SYS_ADMIN)"
        )
    target_errors = [line.split(TARGET_ERROR_PREFIX, 1)[1].strip()
                     for line in output.splitlines() if TARGET_ERROR_PREFIX in line]
    if target_errors:
        raise ProfiledProgramFailed(f"the profiled program failed: {target_errors[-1]}")
    if NO_KERNEL_TEXT in output:
        where = ("between the program's cudaProfilerStart and cudaProfilerStop" if request.profiler_range else
                 f"of a kernel named '{request.kernel_name}' after skipping {request.launch_skip} of them")
        raise NoKernelProfiled(f"no kernel was profiled: ncu saw no launch {where} (ncu: {NO_KERNEL_TEXT.lower()})")
    if returncode != 0 or not report_written:
        said = tool_lines(output) or last_lines(output)
        detail = " / ".join(said) if said else "it printed nothing"
        status = f"exit {returncode}" if returncode != 0 else "no report written"
        raise NcuFailed(f"ncu failed ({status}): {detail}")


def last_lines(text: str, n: int = 3) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-n:]


def capture(
    request: CaptureRequest,
    report: Path,
    ncu: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = CAPTURE_TIMEOUT_S,
) -> Capture:
    """Profile one launch (or a library's call) into `report` (.ncu-rep): one ncu process. A failure
    raises the one error that explains it; the report is then not there."""
    ncu = ncu or find_ncu(env)
    report = Path(report)
    if report.suffix != ".ncu-rep":
        raise ValueError(f"{report}: a report path must end in .ncu-rep")
    report.parent.mkdir(parents=True, exist_ok=True)
    if report.exists():
        report.unlink()
    result = run_tool(capture_command(ncu, request, report), timeout, env, "ncu")
    output = (result.stdout or "") + "\n" + (result.stderr or "")
    classify_failure(result.returncode, output, request, report.exists())
    return Capture(report, output)


def ncu_version(ncu: str) -> str:
    """'2025.3.1.0' from `ncu --version`, or '' when it cannot be read."""
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    m = re.search(r"Version\s+([\d.]+)", out)
    return m.group(1) if m else ""


# -- one profiled launch ------------------------------------------------------------------------
@dataclasses.dataclass
class KernelResult:
    """One profiled launch as a report holds it (gpulab.gpu.ncu_reader), or as ncu's raw CSV prints it
    (parse_csv): its kernel's name and its metrics."""

    kernel: str
    info: dict[str, str]  # the CSV's identity columns (ID, Grid Size, ...); empty from a report
    metrics: dict[str, float]  # numbers; nan where ncu has no value (n/a)
    units: dict[str, str]
    text: dict[str, str]  # metric values that are not numbers, e.g. 'PolicySpread'

    def get(self, name: str) -> float:
        return self.metrics.get(name, math.nan)

    def dims(self, what: str) -> list[int]:
        """The launch's 'grid' or 'block' as [x, y, z] from its launch__<what>_dim_* metrics; [] where
        the capture has none."""
        values = [self.get(f"launch__{what}_dim_{axis}") for axis in "xyz"]
        return [] if any(math.isnan(v) for v in values) else [int(v) for v in values]


def single_launch(results: list[KernelResult], kernel_name: str) -> KernelResult:
    """The one launch a capture asked for; none is 'no kernel was profiled'."""
    mine = [r for r in results if r.kernel == kernel_name or r.kernel.startswith(kernel_name + "(")]
    if not mine:
        seen = sorted({r.kernel for r in results})
        raise NoKernelProfiled(
            f"no kernel was profiled: the report holds no launch of '{kernel_name}'"
            + (f" (it holds {', '.join(seen)})" if seen else "")
        )
    if len(mine) > 1:
        raise NcuFailed(f"expected one profiled launch of '{kernel_name}', the report holds {len(mine)}")
    return mine[0]


def range_launches(results: list[KernelResult]) -> list[KernelResult]:
    """The launches of a profiler-range capture, longest first (the one a library call spends its
    time in leads; a library may add a small kernel, e.g. a split-K reduction); none is 'no kernel
    was profiled'."""
    if not results:
        raise NoKernelProfiled("no kernel was profiled: the report holds no launch between the program's "
                               "cudaProfilerStart and cudaProfilerStop")
    def duration(result: KernelResult) -> float:
        ns = result.get("gpu__time_duration.sum")
        return 0.0 if math.isnan(ns) else ns
    return sorted(results, key=duration, reverse=True)


def missing_metrics(result: KernelResult, metrics: Sequence[str]) -> list[str]:
    """The asked-for metrics the report has no number for."""
    return [m for m in metrics if m not in result.metrics or math.isnan(result.metrics[m])]


# -- ncu's raw CSV (scripts/pattern_fixtures.py) ---------------------------------------------------
MISSING = {"", "n/a", "N/A", "nan"}


def parse_number(text: str) -> float | None:
    """'16,777,216' -> 16777216.0; '50.73' -> 50.73; 'n/a' or '' -> nan; text -> None."""
    s = text.strip().strip('"')
    if s in MISSING:
        return math.nan
    s = s.replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


def is_metric_name(column: str) -> bool:
    """ncu's metric names have a unit__counter base ('dram__bytes_read.sum'); the identity columns
    (ID, Kernel Name, Block Size...) do not."""
    return "__" in column


def _csv_start(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if line.lstrip().startswith('"ID"'):
            return i
    return None


def parse_csv(text: str) -> list[KernelResult]:
    """ncu's CSV -> one KernelResult per profiled launch.

    Accepts the raw page (one wide row per launch after a header row and, usually, a units row)
    and the details page (one long row per metric: 'Metric Name', 'Metric Unit', 'Metric Value').
    Anything before the header (the program's stdout, ==PROF== lines) and ncu's ==...== lines
    anywhere are ignored."""
    lines = text.splitlines()
    start = _csv_start(lines)
    if start is None:
        return []
    body = [line for line in lines[start:] if line.strip() and not line.lstrip().startswith("==")]
    rows = list(csv.reader(body))
    header = rows[0]
    if "Metric Name" in header and "Metric Value" in header:
        return _parse_long(header, rows[1:])
    return _parse_wide(header, rows[1:])


def _parse_wide(header: list[str], rows: list[list[str]]) -> list[KernelResult]:
    units: dict[str, str] = {}
    if rows and rows[0] and rows[0][0] == "":  # the units row: no ID
        units = {h: u for h, u in zip(header, rows[0]) if is_metric_name(h)}
        rows = rows[1:]
    out = []
    for row in rows:
        if len(row) != len(header):
            continue  # a truncated or foreign line
        info, metrics, text = {}, {}, {}
        for name, cell in zip(header, row):
            if not is_metric_name(name):
                info[name] = cell
                continue
            value = parse_number(cell)
            if value is None:
                text[name] = cell
            else:
                metrics[name] = value
        out.append(KernelResult(info.get("Kernel Name", ""), info, metrics, dict(units), text))
    return out


def _parse_long(header: list[str], rows: list[list[str]]) -> list[KernelResult]:
    col = {name: i for i, name in enumerate(header)}
    by_id: dict[str, KernelResult] = {}
    for row in rows:
        if len(row) != len(header):
            continue
        kid = row[col["ID"]]
        if kid not in by_id:
            info = {h: row[i] for h, i in col.items() if h not in ("Section Name", "Metric Name", "Metric Unit",
                                                                   "Metric Value")}
            by_id[kid] = KernelResult(info.get("Kernel Name", ""), info, {}, {}, {})
        result = by_id[kid]
        name, unit, cell = row[col["Metric Name"]], row[col.get("Metric Unit", 0)], row[col["Metric Value"]]
        value = parse_number(cell)
        if value is None:
            result.text[name] = cell
        else:
            result.metrics[name] = value
        if "Metric Unit" in col:
            result.units[name] = unit
    return list(by_id.values())
