"""`gpulab bench` refuses a bad --out before the first run and saves finished rows as the sweep goes,
so a crash late in a sweep keeps them. The card is stood in for by rows recorded on the H200."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpulab import cli
from gpulab.jobs import bench as bench_job
from gpulab.records import ceilings as table
from gpulab.records import read_csv

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "GPULAB_NO_GPU": "1"}


@pytest.mark.parametrize("out, words", [(".", "is a folder"), ("a-file/rows.csv", "a-file is a file, not a folder")])
def test_a_bad_out_is_refused_before_the_gpu_is_touched(tmp_path, out, words):
    (tmp_path / "a-file").write_text("")
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "bench", "sgemm", "--size", "64", "--out", out],
                       capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=300)
    assert r.returncode == 2 and words in r.stderr and "no NVIDIA GPU" not in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


class RecordedLab:
    """Answers each run with the row the H200 recorded for it; dies at run number `crash_at`."""

    crash_at = 5
    arch = "sm_90"
    env = {"gpu": "NVIDIA H200"}

    def __init__(self, options=None):
        self.device = type("Device", (), {"slug": "h200", "name": "NVIDIA H200"})()
        self.rows = {(r["variant"], r.get("params") or "", r["shape"]): r
                     for r in read_csv(REPO / "results" / "h200" / "sgemm.csv")}
        self.done = 0

    def preflight(self, specs):
        pass

    def execute(self, spec):
        self.done += 1
        if self.done == self.crash_at:
            raise RuntimeError("the process died here (a fault, a lost node)")
        key = (spec.name, spec.variant.params_label(spec.params) if spec.variant else "", spec.shape.label)
        return {k: v for k, v in self.rows[key].items() if k not in ("pct_of_cublas", "speedup_vs_baseline")}


def test_rows_reach_the_csv_as_the_sweep_goes(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_job, "open_lab", RecordedLab)
    monkeypatch.setattr(bench_job, "ensure_ceilings", lambda device, folder, progress=None: table.load(
        REPO / "results" / "h200" / "ceilings.csv"))
    monkeypatch.setattr(sys, "argv", ["gpulab", "bench", "sgemm", "--size", "4096", "--variant", "v1,v9",
                                      "--out", str(tmp_path / "sgemm.csv")])
    with pytest.raises(RuntimeError, match="died here"):
        cli.main()
    rows = read_csv(tmp_path / "sgemm.csv")
    assert len(rows) == RecordedLab.crash_at - 1  # every run that finished
    assert all(r["shape"] == "4096x4096x4096" and r["gflops"] for r in rows)
    assert all(r.get("pct_of_ceiling") for r in rows)  # complete rows: the ceilings were attached


def test_a_bench_keeps_the_rows_of_other_runs_in_the_file(tmp_path, monkeypatch):
    # Two benches into one file (as device scripts run them): the second replaces only its own runs.
    class NoCrash(RecordedLab):
        crash_at = 10**6

    monkeypatch.setattr(bench_job, "open_lab", NoCrash)
    monkeypatch.setattr(bench_job, "ensure_ceilings", lambda device, folder, progress=None: table.load(
        REPO / "results" / "h200" / "ceilings.csv"))
    out = tmp_path / "sgemm.csv"
    for variant in ("v1", "v9"):
        monkeypatch.setattr(sys, "argv", ["gpulab", "bench", "sgemm", "--size", "4096", "--variant", variant,
                                          "--out", str(out)])
        cli.main()
    rows = read_csv(out)
    assert {r["variant"] for r in rows} == {"v1", "v9", "cublas"}
    assert len({(r["variant"], r.get("params"), r["shape"]) for r in rows}) == len(rows)  # cublas once


def _refused(monkeypatch, capsys, *args: str) -> str:
    """`gpulab bench ARGS...` through the command line, which must stop in one line with exit 2 and
    no traceback: that line (stderr)."""
    monkeypatch.setattr(sys, "argv", ["gpulab", "bench", *args])
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err, err
    return err


def test_a_damaged_out_file_is_refused_before_the_first_run_and_left_as_it_was(tmp_path, monkeypatch, capsys):
    lab = RecordedLab()
    monkeypatch.setattr(bench_job, "open_lab", lambda options=None: lab)
    monkeypatch.setattr(bench_job, "ensure_ceilings", lambda device, folder, progress=None: table.load(
        REPO / "results" / "h200" / "ceilings.csv"))
    out = tmp_path / "sgemm.csv"
    damaged = (REPO / "results" / "h200" / "sgemm.csv").read_bytes()[:300]  # cut mid-row
    out.write_bytes(damaged)
    _refused(monkeypatch, capsys, "sgemm", "--size", "4096", "--variant", "v1", "--out", str(out))
    assert lab.done == 0 and out.read_bytes() == damaged


def _cut_card_file(tmp_path: Path, name: str, size: int) -> bytes:
    """The H200's results/h200/<name> cut mid-row after `size` bytes, put in tmp_path's card folder."""
    damaged = (REPO / "results" / "h200" / name).read_bytes()[:size]
    (tmp_path / "results" / "h200").mkdir(parents=True, exist_ok=True)
    (tmp_path / "results" / "h200" / name).write_bytes(damaged)
    return damaged


def test_a_damaged_sanitize_record_is_refused_before_the_first_run(tmp_path, monkeypatch, capsys):
    """The sanitizer gate (gpulab.jobs.clean) reads results/<gpu>/sanitize.csv to crown the best row:
    a damaged one stops the bench before anything runs, in one line, and is left as it was."""
    monkeypatch.chdir(tmp_path)
    lab = RecordedLab()
    monkeypatch.setattr(bench_job, "open_lab", lambda options=None: lab)
    monkeypatch.setattr(bench_job, "ensure_ceilings", lambda device, folder, progress=None: table.load(
        REPO / "results" / "h200" / "ceilings.csv"))
    damaged = _cut_card_file(tmp_path, "sanitize.csv", 300)
    err = _refused(monkeypatch, capsys, "sgemm", "--size", "4096", "--variant", "v1",
                   "--out", str(tmp_path / "sgemm.csv"))
    assert lab.done == 0 and "sanitize.csv" in err
    assert (tmp_path / "results" / "h200" / "sanitize.csv").read_bytes() == damaged


def test_the_best_rows_are_planned_with_the_ceilings_measured_first(tmp_path, monkeypatch):
    """On a card with no ceilings yet, the model (the best row, --alone's picks) must plan with the
    ceilings the rows are then held to and `gpulab best` reads: they are measured before it plans."""
    class CrashAtOnce(RecordedLab):
        crash_at = 1

    events = []

    def measure(device, folder, progress=None):
        events.append("ceilings")
        return table.load(REPO / "results" / "h200" / "ceilings.csv")

    planned = bench_job.with_alone_picks
    monkeypatch.setattr(bench_job, "open_lab", CrashAtOnce)
    monkeypatch.setattr(bench_job, "ensure_ceilings", measure)
    monkeypatch.setattr(bench_job, "with_alone_picks", lambda *a, **k: events.append("alone") or planned(*a, **k))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["gpulab", "bench", "sgemm", "--shape", "16x4096x4096", "--variant", "best",
                                      "--alone", "--no-sanitize", "--out", str(tmp_path / "sgemm.csv")])
    with pytest.raises(RuntimeError, match="died here"):
        cli.main()
    assert events[:2] == ["ceilings", "alone"], events


def test_a_damaged_ceilings_file_stops_the_bench_before_its_model_plans(tmp_path, monkeypatch, capsys):
    """bench reads the card's ceilings before its model plans the best row: a ceilings.csv cut off
    mid-row stops it there, in one line, exit 2, nothing run, the file left as it was."""
    monkeypatch.chdir(tmp_path)
    lab = RecordedLab()
    monkeypatch.setattr(bench_job, "open_lab", lambda options=None: lab)
    planned = []
    monkeypatch.setattr(bench_job, "best_picks", lambda *a, **k: planned.append(1))
    damaged = _cut_card_file(tmp_path, "ceilings.csv", 400)
    err = _refused(monkeypatch, capsys, "sgemm", "--size", "4096", "--variant", "best",
                   "--out", str(tmp_path / "sgemm.csv"))
    assert "ceilings.csv" in err, err
    assert lab.done == 0 and not planned and not (tmp_path / "sgemm.csv").exists()
    assert (tmp_path / "results" / "h200" / "ceilings.csv").read_bytes() == damaged


class Planned(Exception):
    """Stops a bench where it plans its best row."""


class Ran(Exception):
    """Stops a bench where its runs begin."""


@pytest.mark.parametrize("args, best_row", [
    (["--variant", "v9,best", "--param", "BM=64,128"], True),  # named: the best row runs beside the sweep
    (["--variant", "v9", "--param", "BM=64,128"], False),
    (["--param", "KT=4"], False),  # -p sweeps the variants; nothing named asks for the best row
    (["--variant", "v9"], False),
    ([], True),
])
def test_the_best_row_runs_where_it_is_named_whatever_p_sweeps(tmp_path, monkeypatch, args, best_row):
    """`-v t4,best -p STAGES=4,6` benched t4 in both configs and dropped the best row without a word
    (an H100, 2026-12-06): params overridden had turned the best row off even where it was named."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bench_job, "open_lab", RecordedLab)
    monkeypatch.setattr(bench_job, "ensure_ceilings", lambda device, folder, progress=None: table.load(
        REPO / "results" / "h200" / "ceilings.csv"))

    def stop(reason):
        def raiser(*a, **k):
            raise reason
        return raiser

    monkeypatch.setattr(bench_job, "best_picks", stop(Planned))
    monkeypatch.setattr(bench_job, "run_one_by_one", stop(Ran))
    monkeypatch.setattr(sys, "argv", ["gpulab", "bench", "sgemm", "--size", "4096", "--no-sanitize",
                                      "--out", str(tmp_path / "sgemm.csv"), *args])
    with pytest.raises(Planned if best_row else Ran):
        cli.main()
