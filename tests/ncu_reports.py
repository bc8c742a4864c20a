"""What the tests of Nsight Compute's reports share: the reports recorded on the card
(tests/fixtures/ncu_reports, written by scripts/ncu_capture_fixtures.py) and the report interface
that reads them (a test skips, saying what to run or install, where either is missing); and a
stand-in interface (tests/ncu_report_stub) with reports of its own, for the reading logic on any
machine."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from gpulab.gpu import ncu_reader

FIXTURES = Path(__file__).parent / "fixtures" / "ncu_reports"
STUB = Path(__file__).parent / "ncu_report_stub"
CAPTURE = "python3 scripts/ncu_capture_fixtures.py"


def recorded(name: str) -> Path:
    """tests/fixtures/ncu_reports/NAME.ncu-rep, or a skip naming the command that records it."""
    path = FIXTURES / f"{name}.ncu-rep"
    if not path.exists():
        pytest.skip(f"tests/fixtures/ncu_reports/{path.name} not recorded yet: run `{CAPTURE}` on a GPU with ncu "
                    "and commit tests/fixtures/ncu_reports")
    return path


def recorded_info(name: str) -> dict:
    """What the profiled program reported for the recorded NAME (device, launch, resources, ...)."""
    recorded(name)
    return json.loads((FIXTURES / f"{name}.json").read_text())


def interface() -> ncu_reader.Interface:
    """The report interface this machine has (the ncu install's, or the ncu-report wheel), or a skip."""
    try:
        return ncu_reader.find_interface()
    except ncu_reader.ReportUnreadable as exc:
        pytest.skip(f"no report interface to read the recorded reports ({exc})")


def launches(name: str):
    """The recorded report NAME's launches, read by this machine's report interface."""
    path = recorded(name)
    return ncu_reader.read_launches(path, interface())


# -- the stand-in ----------------------------------------------------------------------------------
def stub_module():
    """tests/ncu_report_stub/ncu_report.py, imported under a name of its own (never `ncu_report`)."""
    name = "gpulab_tests_ncu_report_stub"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, STUB / "ncu_report.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def stub_interface(version: str = "2025.3.1") -> ncu_reader.Interface:
    return ncu_reader.Interface(stub_module(), version, str(STUB))


def metric(value=None, unit: str = "", instances=None, pcs=None) -> dict:
    """One metric of a stand-in report: no `value` is a metric without a value (ncu's n/a)."""
    out: dict = {"unit": unit}
    if value is not None:
        out["value"] = value
    if instances is not None:
        out["instances"], out["pcs"] = list(instances), list(pcs)
    return out


def stub_report(path: Path, launches: list[dict], writer: str = "2025.3.1.0") -> Path:
    """A stand-in report: one range of `launches` ({'name', 'metrics', 'sass'}), written by `writer`
    (in the words a real report's session information carries it)."""
    path.write_text(json.dumps({"session": f"Nsight Compute {writer} (build 36398880) (public-release)",
                                "ranges": [launches]}))
    return path
