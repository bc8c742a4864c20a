"""`gpulab run`, the main job, without a GPU: the card is stood in for by the rows the H200 recorded
(results/h200/*.csv). The tour runs each experiment at one shape, the whole grid with --full; the
summary (screen and run-summary.csv) holds each experiment's best row and its wall seconds; piped
output gets one line per finished run as it finishes."""

import sys
from pathlib import Path

import pytest
from rich.console import Console

from gpulab import api, cli
from gpulab.experiments import all_experiments
from gpulab.jobs import bench as bench_job
from gpulab.jobs import clean
from gpulab.jobs import main as main_job
from gpulab.quantities import CLEAN
from gpulab.records import ceilings as table
from gpulab.records import read_csv

REPO = Path(__file__).resolve().parent.parent
RECORDED = {e.name: read_csv(REPO / "results" / "h200" / f"{e.name}.csv") for e in all_experiments()}
CEILINGS = table.load(REPO / "results" / "h200" / "ceilings.csv")


class RecordedLab:
    """Answers each run with a row the H200 recorded for that variant and shape (its params aside),
    or a skip where none was recorded; counts what it ran."""

    arch = "sm_90"
    env = {"gpu": "NVIDIA H200"}

    def __init__(self, options=None):
        self.device = type("Device", (), {"slug": "h200", "name": "NVIDIA H200"})()
        self.ran = []

    def preflight(self, specs):
        pass

    def execute(self, spec):
        self.ran.append(spec)
        rows = [r for r in RECORDED[spec.experiment.name] if r["variant"] == spec.name
                and r["shape"] == spec.shape.label and r.get("time_ms")]
        if not rows:
            return spec.base_record() | {"skip_reason": "no recorded row"}
        keep = ("correct", "time_ms", "gflops", "gbps", "expected_wrong")
        return spec.base_record() | {k: rows[0][k] for k in keep if k in rows[0]}


class CleanGate:
    """The sanitizer gate as a card where compute-sanitizer found every kernel clean."""

    def __init__(self, *args, **kwargs):
        pass

    def verdict(self, spec):
        return clean.Verdict(True, CLEAN)


@pytest.fixture
def lab(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    one = RecordedLab()
    monkeypatch.setattr(main_job, "open_lab", lambda options=None: one)
    for module in (bench_job, main_job):
        monkeypatch.setattr(module, "ensure_ceilings", lambda device, folder, progress=None: CEILINGS)
    monkeypatch.setattr(bench_job, "Gate", CleanGate)  # the sanitizer gate has its own tests (test_clean.py)
    return one


def test_the_tour_runs_each_experiment_at_its_one_shape_and_summarizes(lab, tmp_path):
    done = api.run(["sgemm", "coalesce"])
    assert {s.shape.label for s in lab.ran if s.experiment.name == "sgemm"} == {"4096x4096x4096"}
    assert {s.shape.label for s in lab.ran if s.experiment.name == "coalesce"} == {"8192x8192"}
    assert set(done.by_experiment) == {"sgemm", "coalesce"}
    by_name = {r["experiment"]: r for r in done.summary}
    sgemm = by_name["sgemm"]
    assert sgemm["mode"] == "tour" and sgemm["shape"] == "4096x4096x4096" and sgemm["wall_s"] >= 0
    assert sgemm["best_variant"] and sgemm["pct_of_vendor"] > 0 and sgemm["pct_of_ceiling"] > 0
    assert sgemm["runs"] == len([s for s in lab.ran if s.experiment.name == "sgemm"])
    assert by_name["coalesce"]["gbps"] > 0 and by_name["coalesce"].get("pct_of_vendor") is None
    saved = read_csv(tmp_path / "results" / "h200" / "run-summary.csv")
    assert {(r["experiment"], r["mode"]) for r in saved} == {("sgemm", "tour"), ("coalesce", "tour")}
    assert (tmp_path / "results" / "h200" / "sgemm.csv").exists()


def test_full_runs_every_default_shape_and_keeps_the_tours_summary_row(lab, tmp_path):
    api.run(["coalesce"])
    lab.ran.clear()
    api.run(["coalesce"], full=True)
    exp = api.experiment("coalesce")
    assert {s.shape.label for s in lab.ran} == {s.label for s in exp.default_shape_list()}
    saved = read_csv(tmp_path / "results" / "h200" / "run-summary.csv")
    assert sorted(r["mode"] for r in saved) == ["full", "tour"]  # one row per experiment and mode


def test_the_main_job_refuses_an_experiment_named_twice(lab):
    with pytest.raises(Exception, match="named twice"):
        api.run(["coalesce", "coalesce"])


def test_piped_output_gets_a_line_per_finished_run_and_the_summary(lab, monkeypatch, capsys):
    monkeypatch.setattr(cli, "console", Console(file=sys.stdout, width=160))  # captured: not a terminal
    monkeypatch.setattr(cli, "probe", lambda: (type("Info", (), {"name": "NVIDIA H200", "arch": "sm_90",
                                                                 "sm_count": 132, "cuda_runtime_version": 13000,
                                                                 "compute_capability": (9, 0)})(), ""))
    monkeypatch.setattr(cli, "environment", lambda info, arch: {"driver": "580"})
    monkeypatch.setattr(sys, "argv", ["gpulab", "run", "coalesce"])
    cli.main()
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("coalesce ") and ": " in line]
    assert len(lines) == len(lab.ran)  # one per run, as it finished
    assert any("GB/s" in line and "(correct)" in line for line in lines)
    assert "the best row of each experiment" in out and "run-summary.csv" in out


def test_the_tour_shape_is_the_headline_shape_or_the_last_default():
    for exp in all_experiments():
        assert exp.tour_shape == (exp.headline_shape or exp.default_shapes[-1])
        exp.shape(*exp.tour_shape)  # a shape the experiment accepts


def test_without_compute_sanitizer_the_tour_names_its_best_as_not_sanitized(lab, monkeypatch):
    """A machine without compute-sanitizer runs the tour as ever; its summary names the fastest row
    and says it was not sanitized."""
    monkeypatch.setattr(bench_job, "Gate", lambda folder, arch, env, progress, off="": clean.Gate(
        folder, arch, env, progress, sanitizer=None, off=off))
    done = api.run(["coalesce"])
    (row,) = done.summary
    assert row["best_variant"] and row["sanitized"] == "not sanitized: compute-sanitizer not found"
    assert row["runs_timed"] > 0