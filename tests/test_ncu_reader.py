"""gpulab.gpu.ncu_reader without Nsight Compute: which report interface is taken (the install's,
then an importable one) and what is said when there is none or it cannot read a report; and how a
report's launches are read (typed values, units, text, metrics without a value), through a
stand-in interface (tests/ncu_report_stub) and stand-in reports."""

import math
import shutil
import stat
import sys
from pathlib import Path

import pytest

from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu import ncu_reader
from ncu_reports import STUB, metric, stub_interface, stub_report


@pytest.fixture
def fresh(monkeypatch):
    """No interface imported or remembered yet, and none importable from site-packages: each test
    finds its own, and what it imports is gone after it."""
    saved = {k: sys.modules.pop(k) for k in ("ncu_report", "_ncu_report") if k in sys.modules}
    ncu_reader._find.cache_clear()
    monkeypatch.setattr(ncu_mod, "INSTALL_GLOBS", ())  # this machine's own installs stay out of it
    real_find_spec = ncu_reader.importlib.util.find_spec
    monkeypatch.setattr(ncu_reader.importlib.util, "find_spec",
                        lambda name, *a: None if name == ncu_reader.MODULE else real_find_spec(name, *a))
    yield
    for k in ("ncu_report", "_ncu_report"):
        sys.modules.pop(k, None)
    sys.modules.update(saved)
    ncu_reader._find.cache_clear()


def fake_ncu(folder: Path, version: str = "2025.3.1.0") -> Path:
    """An ncu executable that answers --version as ncu does."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "ncu"
    exe.write_text(f"#!/bin/sh\necho 'NVIDIA (R) Nsight Compute Command Line Profiler'\necho 'Version {version} "
                   "(build 36398880) (public-release)'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def install_stub(folder: Path) -> Path:
    """extras/python of an install, holding the stand-in interface."""
    target = folder / "extras" / "python"
    target.mkdir(parents=True)
    shutil.copyfile(STUB / "ncu_report.py", target / "ncu_report.py")
    return target


LAUNCH = {
    "name": "sgemm",
    "metrics": {
        "dram__bytes_read.sum": metric(2103808, "byte"),  # an integer, as the interface gives counters
        "lts__t_sector_hit_rate.pct": metric(96.84, "%"),
        "launch__cluster_scheduling_policy": metric("PolicySpread"),
        "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio": metric(unit="inst"),  # no value
        **{f"launch__grid_dim_{a}": metric(float(v)) for a, v in zip("xyz", (32, 16, 1))},
        **{f"launch__block_dim_{a}": metric(float(v)) for a, v in zip("xyz", (16, 16, 1))},
    },
}


# -- reading ----------------------------------------------------------------------------------------
def test_a_launch_is_read_with_typed_values_units_and_text(tmp_path):
    (k,) = ncu_reader.read_launches(stub_report(tmp_path / "r.ncu-rep", [LAUNCH]), stub_interface())
    assert k.kernel == "sgemm" and k.info == {}
    assert k.metrics["dram__bytes_read.sum"] == 2103808.0 and isinstance(k.metrics["dram__bytes_read.sum"], float)
    assert k.metrics["lts__t_sector_hit_rate.pct"] == pytest.approx(96.84)
    assert k.units["dram__bytes_read.sum"] == "byte" and k.units["lts__t_sector_hit_rate.pct"] == "%"
    assert k.text == {"launch__cluster_scheduling_policy": "PolicySpread"}
    assert math.isnan(k.metrics["smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio"])
    assert ncu_mod.missing_metrics(k, ["dram__bytes_read.sum", "smsp__average_warps_issue_stalled_gmma_per_issue_active"
                                       ".ratio", "no__such.sum"]) == [
        "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio", "no__such.sum"]
    assert (k.dims("grid"), k.dims("block")) == ([32, 16, 1], [16, 16, 1])


def test_every_launch_in_the_reports_order(tmp_path):
    other = {"name": "split_k_kernel", "metrics": {"gpu__time_duration.sum": metric(900, "ns")}}
    first = {"name": "gemm", "metrics": {"gpu__time_duration.sum": metric(5000, "ns")}}
    got = ncu_reader.read_launches(stub_report(tmp_path / "r.ncu-rep", [other, first]), stub_interface())
    assert [k.kernel for k in got] == ["split_k_kernel", "gemm"]
    assert [k.kernel for k in ncu_mod.range_launches(got)] == ["gemm", "split_k_kernel"]  # longest first
    assert got[1].dims("grid") == []  # a capture without the launch's attributes


def test_the_writers_version_is_read_from_the_report(tmp_path):
    assert ncu_reader.report_writer(stub_report(tmp_path / "r.ncu-rep", [LAUNCH], "2025.3.1.0")) == "2025.3.1.0"
    (tmp_path / "junk.ncu-rep").write_bytes(b"\x00 not a report")
    assert ncu_reader.report_writer(tmp_path / "junk.ncu-rep") == ""
    assert ncu_reader.report_writer(tmp_path / "absent.ncu-rep") == ""


def test_a_report_newer_than_the_interface_is_refused_with_both_versions_and_what_to_install(tmp_path):
    report = stub_report(tmp_path / "r.ncu-rep", [LAUNCH], writer="2026.1.0.0")
    with pytest.raises(ncu_reader.ReportUnreadable) as info:
        ncu_reader.read_launches(report, stub_interface("2025.3.1"))
    msg = str(info.value)
    assert "\n" not in msg and isinstance(info.value, ncu_mod.GpulabError)
    for words in ("r.ncu-rep was written by Nsight Compute 2026.1.0.0", "ncu_report 2025.3.1",
                  'pip install "ncu-report==2026.1.*"'):
        assert words in msg, msg
    # an older report, or one of the same release, is read
    assert ncu_reader.read_launches(stub_report(tmp_path / "old.ncu-rep", [LAUNCH], "2024.1.1.0"),
                                    stub_interface("2025.3.1"))[0].kernel == "sgemm"


def test_a_report_that_opens_empty_is_refused(tmp_path):
    """The real interface loads a file it cannot read as a report with nothing in it, without an error."""
    (tmp_path / "junk.ncu-rep").write_text("not a report")
    with pytest.raises(ncu_reader.ReportUnreadable, match="finds no profiled launch in .*junk.ncu-rep.*pip install ncu-report"):
        ncu_reader.read_launches(tmp_path / "junk.ncu-rep", stub_interface())
    with pytest.raises(ncu_reader.ReportUnreadable, match="no report at"):
        ncu_reader.read_launches(tmp_path / "absent.ncu-rep", stub_interface())


@pytest.mark.parametrize("version, hint", [("2025.3.1.0", 'pip install "ncu-report==2025.3.*"'),
                                           ("2026.1.0", 'pip install "ncu-report==2026.1.*"'),
                                           ("", "pip install ncu-report")])
def test_pip_hint(version, hint):
    assert ncu_reader.pip_hint(version) == hint


def test_release_orders_versions():
    assert ncu_reader.release("2025.3.1.0") == (2025, 3) < ncu_reader.release("2025.10.0") < ncu_reader.release("2026.1")


# -- which interface ---------------------------------------------------------------------------------
def test_the_install_beside_ncu_comes_first(tmp_path, fresh):
    ncu = fake_ncu(tmp_path / "nsight-compute" / "2025.3.1")
    folder = install_stub(tmp_path / "nsight-compute" / "2025.3.1")
    found = ncu_reader.find_interface(str(ncu))
    assert Path(found.where) == folder.resolve() and found.version == "2025.3.1"
    assert found.module.load_report is not None and "2025.3.1" in found.describe()


def test_a_toolkits_ncu_finds_the_install_its_version_names(tmp_path, fresh):
    """CUDA's bin/ncu is a script that runs the toolkit's own Nsight Compute, installed beside bin/."""
    ncu = fake_ncu(tmp_path / "cuda" / "bin", version="2025.3.1.0")
    folder = install_stub(tmp_path / "cuda" / "nsight-compute-2025.3.1")
    found = ncu_reader.find_interface(str(ncu))
    assert Path(found.where) == folder.resolve()


def test_an_importable_interface_is_taken_where_the_install_has_none(tmp_path, fresh, monkeypatch):
    ncu = fake_ncu(tmp_path / "bin")
    wheel = tmp_path / "site-packages"
    wheel.mkdir()
    shutil.copyfile(STUB / "ncu_report.py", wheel / "ncu_report.py")
    monkeypatch.syspath_prepend(str(wheel))
    monkeypatch.setattr(ncu_reader.importlib.util, "find_spec", lambda name, *a: object())
    found = ncu_reader.find_interface(str(ncu))
    assert Path(found.where) == wheel.resolve()


def test_no_interface_is_one_line_saying_where_it_looked_and_what_to_install(tmp_path, fresh):
    ncu = fake_ncu(tmp_path / "bin", version="2025.3.1.0")
    with pytest.raises(ncu_reader.ReportUnreadable) as info:
        ncu_reader.find_interface(str(ncu))
    msg = str(info.value)
    assert "\n" not in msg
    for words in ("Python report interface (ncu_report)", str(tmp_path / "bin" / "extras" / "python"),
                  'pip install "ncu-report==2025.3.*"'):
        assert words in msg, msg


def test_an_install_whose_interface_fails_to_import_says_why(tmp_path, fresh):
    ncu = fake_ncu(tmp_path / "nsight-compute" / "2025.3.1")
    folder = install_stub(tmp_path / "nsight-compute" / "2025.3.1")
    (folder / "ncu_report.py").write_text("raise ImportError('libnvperf_host.so: cannot open shared object file')\n")
    with pytest.raises(ncu_reader.ReportUnreadable, match="libnvperf_host.so: cannot open shared object file"):
        ncu_reader.find_interface(str(ncu))


def test_without_ncu_the_importable_interface_is_the_only_place(tmp_path, fresh, monkeypatch):
    monkeypatch.setattr(ncu_mod, "find_ncu", lambda env=None: (_ for _ in ()).throw(ncu_mod.NcuNotFound("none")))
    with pytest.raises(ncu_reader.ReportUnreadable, match="no ncu found to take it from.*pip install ncu-report"):
        ncu_reader.find_interface()
