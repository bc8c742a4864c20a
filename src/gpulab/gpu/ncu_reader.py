"""Nsight Compute reports (.ncu-rep) read through NVIDIA's Python report interface, `ncu_report`
(the Python Report Interface of Nsight Compute's documentation: docs.nvidia.com/nsight-compute/
CustomizationGuide, "Python Report Interface"): every metric of every profiled launch with its
typed value and unit, and the launch's attributes (grid, block, registers, shared memory) as
launch__* metrics of the same launch.

Which interface, in this order:
  1. an importable `ncu_report` at least as new as the ncu found by gpulab.gpu.ncu.find_ncu (the
     `ncu-report` wheel on PyPI, which `pip install "gpulab[gpu]"` brings and carries its own reader
     library): a newer reader reads older reports. It comes first because on the H200
     (2026-12-04, Python 3.12) the install's own copy of 2025.3.1 imported and then crashed the
     interpreter (a segmentation fault) on every report it opened, which the 2026.3.1 wheel read.
  2. the one of the Nsight Compute install that ncu belongs to: `extras/python` beside the
     executable (links resolved), else in the install its version names
     (/opt/nvidia/nsight-compute/<version>/, <cuda>/nsight-compute-<version>/), for a toolkit's
     bin/ncu that is a script calling one of those. It is the version of the ncu that writes
     gpulab's reports, so it reads them.
  3. an importable `ncu_report` older than that ncu (each report's writer is checked below).
A report written by a newer Nsight Compute than the interface is refused before it is opened (an
interface reads a newer report as empty, without an error), and so is one that opens empty; the
one-line error names both versions and what to install (`pip install "ncu-report==2025.3.*"`).
The writer's version is read from the report itself (its session information carries ncu's
version string).

The interface is imported once per process: the first one found stays (two copies of its native
library in one process would be two readers of one format).
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import math
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Mapping

from gpulab.gpu import ncu as ncu_mod

MODULE = "ncu_report"
EXTRAS = Path("extras") / "python"
WHEEL = "ncu-report"
# Where a toolkit keeps its own Nsight Compute, relative to the folder holding bin/ncu's bin/.
TOOLKIT_INSTALL = "nsight-compute-{release}"
# The writer's version in a report's session information: '2025.3.1.0 (build 36398880)'.
_WRITER = re.compile(rb"(\d{4}\.\d+\.\d+(?:\.\d+)?) \(build \d+\)")
_WRITER_SCAN_BYTES = 8 << 20  # the session information comes before the results


class ReportUnreadable(ncu_mod.NcuError):
    """The report interface is missing, or cannot read this report."""


@dataclasses.dataclass(frozen=True)
class Interface:
    module: ModuleType
    version: str  # '2025.3.1', '' where it cannot be told
    where: str  # the folder it was imported from

    def describe(self) -> str:
        return f"ncu_report {self.version or '(version unknown)'} from {self.where}"


# -- versions ------------------------------------------------------------------------------------
def release(version: str) -> tuple[int, ...]:
    """'2025.3.1.0' -> (2025, 3): the part of a version that decides what a reader reads."""
    return tuple(int(x) for x in re.findall(r"\d+", version)[:2])


def pip_hint(version: str) -> str:
    """What to install to read reports of Nsight Compute `version` ('' where unknown)."""
    r = release(version)
    return f'pip install "{WHEEL}=={r[0]}.{r[1]}.*"' if len(r) == 2 else f"pip install {WHEEL}"


def report_writer(report: Path) -> str:
    """The version of the Nsight Compute that wrote `report` ('2025.3.1.0'), '' where it cannot be told."""
    try:
        with open(report, "rb") as f:
            head = f.read(_WRITER_SCAN_BYTES)
    except OSError:
        return ""
    m = _WRITER.search(head)
    return m.group(1).decode() if m else ""


def _module_version(module: ModuleType) -> str:
    """An install's version from its path (/opt/nvidia/nsight-compute/2025.3.1/extras/python), or the
    wheel's from its metadata where the module is the wheel's; '' otherwise."""
    here = Path(getattr(module, "__file__", "") or "").resolve()
    m = re.search(r"(\d{4}\.\d+\.\d+)", str(here))
    if m:
        return m.group(1)
    try:
        dist = importlib.metadata.distribution(WHEEL)
    except importlib.metadata.PackageNotFoundError:
        return ""
    return dist.version if Path(str(dist.locate_file(MODULE))).resolve() == here.parent else ""


# -- finding the interface -----------------------------------------------------------------------
def install_folders(ncu: str) -> list[Path]:
    """The extras/python folders of the install `ncu` belongs to, that hold the interface."""
    exe = Path(ncu).resolve()
    candidates = [exe.parent / EXTRAS]
    if not _holds_interface(candidates[0]):
        version = ncu_mod.ncu_version(ncu)
        if version:
            rel = ".".join(version.split(".")[:3])
            for pattern in ncu_mod.INSTALL_GLOBS:  # '/opt/nvidia/nsight-compute/*/ncu'
                candidates += [Path(p) / EXTRAS for p in sorted(glob.glob(str(Path(pattern.replace("*", rel)).parent)))]
            candidates.append(exe.parent.parent / TOOLKIT_INSTALL.format(release=rel) / EXTRAS)
    return list(dict.fromkeys(c for c in candidates if _holds_interface(c)))


def _holds_interface(folder: Path) -> bool:
    """Whether `folder` holds the module, in any form Python imports (a .py file, a package, a
    compiled module)."""
    return folder.is_dir() and importlib.machinery.PathFinder.find_spec(MODULE, [str(folder)]) is not None


def _import_from(folder: Path | None) -> ModuleType:
    """`ncu_report` from `folder` (None: wherever Python finds it); the one already imported, if any."""
    if MODULE in sys.modules:
        return sys.modules[MODULE]
    if folder is None:
        return importlib.import_module(MODULE)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(MODULE)
    finally:
        sys.path.remove(str(folder))


@functools.lru_cache(maxsize=None)
def _find(ncu: str | None) -> Interface:
    tried: list[str] = []
    wheel = None
    if MODULE in sys.modules or importlib.util.find_spec(MODULE) is not None:
        try:
            module = _import_from(None)
            wheel = Interface(module, _module_version(module), str(Path(module.__file__).resolve().parent))
        except Exception as exc:  # a native module's failures to load carry no common type
            tried.append(f"the installed {MODULE}: {' '.join(str(exc).split())}")
    version = ncu_mod.ncu_version(ncu) if ncu else ""
    if wheel is not None and (not version or not wheel.version or release(wheel.version) >= release(version)):
        return wheel
    for folder in install_folders(ncu) if ncu else []:
        try:
            module = _import_from(folder)
        except Exception as exc:  # as above
            tried.append(f"{folder}: {' '.join(str(exc).split())}")
            continue
        return Interface(module, _module_version(module), str(Path(module.__file__).resolve().parent))
    if wheel is not None:
        return wheel
    where = (f"none in the install of {ncu} ({Path(ncu).resolve().parent / EXTRAS})" if ncu
             else "no ncu found to take it from")
    raise ReportUnreadable(
        f"reading Nsight Compute reports needs its Python report interface ({MODULE}): {where}, and no "
        f"{MODULE} module to import" + (f" ({'; '.join(tried)})" if tried else "") + f"; {pip_hint(version)}")


def find_interface(ncu: str | None = None, env: Mapping[str, str] | None = None) -> Interface:
    """The report interface to read with (the order is the module docstring's). `ncu`: the ncu
    executable whose install to look in (default: gpulab.gpu.ncu.find_ncu's, none if there is none)."""
    if ncu is None:
        try:
            ncu = ncu_mod.find_ncu(env)
        except ncu_mod.NcuNotFound:
            ncu = None
    return _find(ncu)


# -- reading -------------------------------------------------------------------------------------
class Actions(list):
    """A report's IAction objects, in the report's order, with the loaded report (the IContext that
    owns them: the interface frees a report's launches with it) kept alive beside them."""

    def __init__(self, found: list, context) -> None:
        super().__init__(found)
        self.context = context


def actions(report: Path, interface: Interface | None = None) -> Actions:
    """Every profiled launch in `report`, as the interface's IAction objects, in the report's order."""
    interface = interface or find_interface()
    report = Path(report)
    if not report.is_file():
        raise ReportUnreadable(f"no report at {report}")
    writer = report_writer(report)
    if writer and interface.version and release(writer) > release(interface.version):
        raise ReportUnreadable(
            f"{report.name} was written by Nsight Compute {writer}, newer than the report interface that "
            f"would read it ({interface.describe()}); {pip_hint(writer)}")
    try:
        context = interface.module.load_report(str(report))
        found = [context.range_by_idx(r).action_by_idx(a)
                 for r in range(context.num_ranges()) for a in range(context.range_by_idx(r).num_actions())]
    except Exception as exc:  # the native library's errors carry no common type
        raise ReportUnreadable(f"{interface.describe()} could not read {report}: {' '.join(str(exc).split())}; "
                               f"{pip_hint(writer)}") from None
    if not found:
        raise ReportUnreadable(
            f"{interface.describe()} finds no profiled launch in {report}: a damaged file, or one written by "
            f"an Nsight Compute its version cannot read (this one was written by {writer or 'an unknown version'}); "
            f"{pip_hint(writer)}")
    return Actions(found, context)


def launch_of(action) -> ncu_mod.KernelResult:
    """One IAction as a KernelResult: numbers as floats (nan where the metric has no value), text
    apart, units beside."""
    metrics: dict[str, float] = {}
    units: dict[str, str] = {}
    text: dict[str, str] = {}
    for name in action.metric_names():
        metric = action.metric_by_name(name)
        if metric is None:
            continue
        units[name] = metric.unit()
        value = metric.value() if metric.has_value() else None
        if isinstance(value, str):
            text[name] = value
        else:
            metrics[name] = math.nan if value is None else float(value)
    return ncu_mod.KernelResult(action.name(), {}, metrics, units, text)


def read_launches(report: Path, interface: Interface | None = None) -> list[ncu_mod.KernelResult]:
    """Every profiled launch in `report`, in the report's order."""
    return [launch_of(a) for a in actions(report, interface)]
