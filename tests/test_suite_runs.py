"""A suite's runs without a GPU: bench and the main job at a suite's shapes on a stand-in lab (each
run answered with a time the test sets), their rows in the suite's own CSV with its columns and the
best row's chosen_by; the figure of how often the pick was right (report.picks) on a synthetic CSV;
the suite's markdown blocks and its picture; the suite's tune, what it tunes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulab import api
from gpulab.experiments import get_experiment, suites
from gpulab.jobs import bench as bench_job
from gpulab.jobs import main as main_job
from gpulab.records import ceilings as table
from gpulab.records import read_csv, write_csv
from gpulab.report import markdown, plots
from gpulab.report.picks import pick_accuracy

REPO = Path(__file__).resolve().parent.parent
H200 = REPO / "results" / "h200"
CEILINGS = table.load(H200 / "ceilings.csv")
SGEMM = get_experiment("sgemm")
GEMM_BF16 = get_experiment("gemm_bf16")

MINE = """[suite]
name = "mine"
title = "two layers of a small model"
experiments = ["sgemm"]

[defaults]
M = [1, 300]

[[shape]]
layer = "proj"
N = 1024
K = 1000
"""


class TimedLab:
    """Answers every run as correct, in a time that depends on the variant alone (v0 slowest): what
    a bench needs of a lab, no GPU."""

    arch = "sm_90"
    env = {"gpu": "NVIDIA H200", "date": "2026-12-04T00:00:00+00:00"}

    def __init__(self, options=None):
        self.device = type("Device", (), {"slug": "h200", "name": "NVIDIA H200"})()
        self.ran = []

    def preflight(self, specs):
        pass

    def execute(self, spec):
        self.ran.append(spec)
        name = spec.variant.name if spec.variant is not None else spec.library
        ms = {"v0": 5.0, "cublas": 0.2}.get(name, 0.5)
        return spec.base_record() | {"correct": True, "time_ms": ms,
                                     "gflops": spec.experiment.flops(spec.shape) / (ms * 1e6)} | self.env


@pytest.fixture
def lab(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / "h200").mkdir(parents=True)
    for name in ("ceilings.csv", "sgemm.csv", "tuned.json"):
        (tmp_path / "results" / "h200" / name).write_bytes((H200 / name).read_bytes())
    one = TimedLab()
    for module in (bench_job, main_job):
        monkeypatch.setattr(module, "open_lab", lambda options=None: one)
        monkeypatch.setattr(module, "ensure_ceilings", lambda device, folder, progress=None: CEILINGS)
    (tmp_path / "mine.toml").write_text(MINE)
    return one


def test_bench_on_a_suite_writes_its_own_csv_with_its_columns(lab, tmp_path):
    rows = api.bench("sgemm", ["v0", "v9", "best"], suite="mine.toml")
    path = tmp_path / "results" / "h200" / "sgemm-mine.csv"
    assert rows.path.resolve() == path and path.exists() and not (tmp_path / "results" / "h200" / "sgemm-llm.csv").exists()
    saved = read_csv(path)
    assert {r["shape"] for r in saved} == {"1x1024x1000", "300x1024x1000"}
    assert all(r["suite"] == "mine" and r["layer"] == "proj" for r in saved)
    best = [r for r in saved if r["variant"] == "best"]
    assert len(best) == 2 and all(r["picked"] in {v.name for v in SGEMM.variants} for r in best)
    assert all(r["chosen_by"].startswith(("model: ", "tuned")) for r in best)
    assert all(not r.get("chosen_by") for r in saved if r["variant"] != "best")
    before = (tmp_path / "results" / "h200" / "sgemm.csv").read_bytes()
    assert before == (H200 / "sgemm.csv").read_bytes()  # the experiment's own CSV is left alone


def test_bench_contenders_times_only_the_variants_near_the_pick(lab):
    api.bench("sgemm", suite="mine.toml", options=api.BenchOptions(contenders=1.3))
    for shape in ("1x1024x1000", "300x1024x1000"):
        ran = {s.variant.name for s in lab.ran if s.shape.label == shape and s.variant is not None and not s.picked}
        assert ran and "v0" not in ran and len(ran) < len(SGEMM.variants) // 2


def test_the_main_job_runs_a_suite_for_the_experiments_it_is_for(lab, tmp_path):
    done = api.run(suite="mine.toml")
    assert list(done.by_experiment) == ["sgemm"]
    summary = read_csv(tmp_path / "results" / "h200" / "run-summary.csv")
    assert [(r["experiment"], r["mode"]) for r in summary] == [("sgemm", "suite mine")]
    assert read_csv(tmp_path / "results" / "h200" / "sgemm-mine.csv")[0]["suite"] == "mine"
    with pytest.raises(Exception, match="is for sgemm, not coalesce"):
        api.run(["coalesce"], suite="mine.toml")


# -- how often the pick was right ------------------------------------------------------------------
def _row(shape, variant, ms, **extra):
    return {"experiment": "sgemm", "variant": variant, "params": extra.pop("params", ""), "shape": shape,
            "correct": extra.pop("correct", True), "time_ms": ms, "date": "2026-12-04T00:00:00+00:00", **extra}


SYNTHETIC = [
    _row("a", "best", 1.00, picked="v9"), _row("a", "v9", 1.01), _row("a", "sx", 0.97), _row("a", "cublas", 0.5),
    _row("b", "best", 1.20, picked="v9"), _row("b", "v9", 1.19), _row("b", "sx", 1.00),  # 20% slower: a miss
    _row("c", "best", 2.00, picked="gv"), _row("c", "cublas", 1.0),  # nothing else timed: not judged
    _row("d", "best", None, picked="sk", correct=False, skip_reason="wrong output"), _row("d", "v9", 3.0),
    _row("e", "best", 0.90, picked="v14"), _row("e", "v14", 0.95), _row("e", "v9", 0.92),
]


def test_the_pick_is_judged_against_the_fastest_of_gpulab_s_own_rows(tmp_path):
    path = tmp_path / "sgemm-mine.csv"
    write_csv(path, SYNTHETIC)
    found = pick_accuracy(read_csv(path))
    assert (found.shapes, found.judged, found.within) == (5, 4, 2)  # a and e within 5%; b slower; d failed
    assert [m.shape for m in found.misses] == ["b", "d"]
    assert found.misses[0].slower == pytest.approx(0.2) and found.misses[1].picked_ms is None
    assert found.line().startswith("the pick was within 5% of the fastest gpulab row at 2 of 4 shapes (50%)")
    assert pick_accuracy(read_csv(path), tolerance=0.25).within == 3
    assert "no shape to judge" in pick_accuracy([_row("c", "best", 2.0)]).line()


def test_where_the_best_row_was_not_the_fastest_the_tune_that_fixes_it_is_named():
    """One `gpulab tune` command per variant that ran faster than the best row, at its shapes; none
    where the best row failed, or where it ran its own tune's pick and only another config of the
    same variant was faster (that tune would find the same)."""
    rows = SYNTHETIC + [
        _row("f", "best", 1.2, picked="v9", chosen_by="tuned here"), _row("f", "v9", 1.0, params="BM=64"),
        _row("g", "best", 1.2, picked="v9", chosen_by="tuned here"), _row("g", "sx", 1.0),
    ]
    found = pick_accuracy(rows)
    assert [m.shape for m in found.misses] == ["b", "d", "f", "g"]
    assert found.retune("sgemm") == ["gpulab tune sgemm sx --shape b,g"]
    assert found.slowest().shape == "b" and pick_accuracy(SYNTHETIC[:4]).slowest() is None


def test_bench_says_where_its_best_row_was_not_the_fastest(capsys):
    """On an H100 that borrowed the H200's runs (call 48, 2026-12-06, tests/fixtures/h100/): at
    16x10240x8192 the best row ran d0, 1.25x ks's time beside it; at 1024x8192x8192 t4, within 1%
    of the fastest. Under the bench's tables: the figure, the slowest shape, and the tune to run."""
    from gpulab import cli

    rows = read_csv(REPO / "tests" / "fixtures" / "h100" / "gemm_bf16-llm-call48.csv")
    cli.show_bench(GEMM_BF16, rows)
    out = " ".join(capsys.readouterr().out.split())
    assert "best row: the pick was within 5% of the fastest gpulab row at 1 of 2 shapes (50%)" in out
    assert "at 16x10240x8192 it ran 1.26x the fastest (ks TN=16 STAGES=8 BPS=1)" in out
    assert "to have it run what was fastest there: gpulab tune gemm_bf16 ks --shape 16x10240x8192" in out
    cli.show_bench(GEMM_BF16, [r for r in rows if r["shape"] == "1024x8192x8192"])
    assert "best row:" not in capsys.readouterr().out  # within 5% everywhere: nothing to say


def test_a_re_run_replaces_what_it_ran_again():
    again = SYNTHETIC + [_row("b", "best", 1.0, picked="sx", date="2026-12-05T00:00:00+00:00")]
    again[-1]["date"] = "2026-12-05T00:00:00+00:00"
    assert pick_accuracy(again).within == 3


# -- the suite's blocks and picture --------------------------------------------------------------------
def _suite_rows(experiment) -> list[dict]:
    """A stand-in run of the llm suite at its first two layers: the best row and cuBLAS per shape."""
    out = []
    for s in suites.load("llm").shapes(experiment)[:10]:
        label = s.shape.label
        base = {"experiment": experiment.name, "shape": label, "correct": True, "gpu": "NVIDIA H200",
                "date": "2026-12-04T00:00:00+00:00", **s.columns}
        out.append(base | {"variant": "best", "picked": "t4", "params": "BM=128", "chosen_by": "model: 1.9 waves",
                           "time_ms": 1.0, "gflops": 100.0, "pct_of_cublas": 50.0 + s.shape["M"] / 1000,
                           "pct_of_ceiling": 10.0, "ceiling": "tensor_bf16"})
        out.append(base | {"variant": "t3", "params": "BM=128", "time_ms": 0.99, "gflops": 101.0})
        out.append(base | {"variant": "cublas", "params": "", "time_ms": 0.5, "gflops": 200.0})
    return out


def test_the_suite_block_says_not_run_yet_until_the_card_has_run_it(tmp_path):
    suite = suites.load("llm")
    block = markdown.suite_block(tmp_path / "gemm_bf16-llm.csv", GEMM_BF16, suite)
    assert block.startswith("Not run yet on this card: `gpulab bench gemm_bf16 --suite llm`")
    summary = markdown.suite_summary_block(tmp_path, suite)
    assert "| gemm_bf16 | not run yet on this card" in summary and "| sgemm | not run yet" in summary


def test_the_suite_block_and_the_readme_line_read_the_suites_csv(tmp_path):
    write_csv(tmp_path / "gemm_bf16-llm.csv", _suite_rows(GEMM_BF16))
    suite = suites.load("llm")
    block = markdown.suite_block(tmp_path / "gemm_bf16-llm.csv", GEMM_BF16, suite)
    assert "| layer | shape | best ran | chosen by | GFLOP/s | % of vendor | % of ceiling |" in block
    assert "| Llama-3-8B qkv | 1x6144x4096 | t4 BM=128 | model: 1.9 waves | 100 | 50.0% | 10.0% (tensor_bf16) |" in block
    assert "| Llama-3-8B gate+up | 1x28672x4096 | not run yet |" in block  # the shapes it has not run yet
    assert "at 10 of 10 shapes (100%)" in block
    summary = markdown.suite_summary_block(tmp_path, suite)
    assert "| gemm_bf16 | 10 of 40 | 52% (50-58%) | 10 of 10 (100%) |" in summary


def test_the_readme_blocks_include_every_built_in_suite(tmp_path):
    (tmp_path / "h200").mkdir()
    write_csv(tmp_path / "h200" / "gemm_bf16-llm.csv", _suite_rows(GEMM_BF16))
    blocks = markdown.readme_blocks(tmp_path)
    assert blocks["h200-gemm_bf16-suite-llm"].startswith("| layer | shape |")
    assert blocks["h200-sgemm-suite-llm"].startswith("Not run yet on this card")
    assert "| gemm_bf16 | 10 of 40 |" in blocks["h200-suite-llm-headline"]


def test_a_damaged_suite_csv_is_refused_before_any_block_is_written(tmp_path):
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "gemm_bf16-llm.csv").write_text("experiment,variant\ngemm_bf16,t4\n")
    with pytest.raises(Exception, match="gemm_bf16-llm.csv"):
        markdown.card_folders(tmp_path)


def test_the_suite_picture_has_one_line_per_layer_against_m():
    varied, points = suites.load("llm").points(GEMM_BF16)
    fig = plots.suite_figure(_suite_rows(GEMM_BF16), points, varied, "cublas", "gemm_bf16 on llm")
    styles = plots.styles_of(fig)
    assert [label for label, _, _ in styles] == ["Llama-3-8B qkv", "Llama-3-8B o", "cublas (100%)"]
    line = fig.axes[0].get_lines()[0]
    assert list(line.get_xdata()) == [1, 16, 128, 1024, 8192]
    assert list(line.get_ydata()) == pytest.approx([50.001, 50.016, 50.128, 51.024, 58.192])
    assert fig.axes[0].get_xlabel() == "M" and fig.axes[0].get_xscale() == "log"
    assert len({colour for _, colour, _ in styles[:2]}) == 2


def test_gpulab_report_draws_the_suite(tmp_path):
    from gpulab.report import card_page

    gpu_dir = tmp_path / "h200"
    gpu_dir.mkdir()
    write_csv(gpu_dir / "gemm_bf16-llm.csv", _suite_rows(GEMM_BF16))
    sections = card_page.suite_sections(gpu_dir)
    assert [s["title"] for s in sections] == ["gemm_bf16 on the llm suite: " + suites.load("llm").title]
    assert (gpu_dir / "gemm_bf16-llm.png").stat().st_size > 1000
    assert sections[0]["notes"][0].startswith("the pick was within 5%")


# -- the suite's tune ------------------------------------------------------------------------------------
def test_a_suite_tune_with_no_variant_tunes_the_models_top_two_where_they_rank(monkeypatch, tmp_path):
    calls = []

    def fake_tune(experiment_name, variant, params=None, shapes=None, **kw):
        calls.append((variant, [s.label for s in shapes]))
        from gpulab.records import Records

        return Records([{"variant": variant}])

    monkeypatch.setattr(api, "tune", fake_tune)
    monkeypatch.setattr(api, "card", lambda: None)
    monkeypatch.chdir(REPO)  # results/ holds one card: the tune's model reads its results
    shapes = [s.shape for s in suites.load("llm").shapes(SGEMM)][:5]
    rows = api._tune_suite(SGEMM, shapes, None, 10, None, 0, (), 2, None, api.QUIET, 2)  # on 2 workers' GPUs
    assert len(rows.tunes) == len(calls) and sum(len(s) for _, s in calls) == 2 * len(shapes)
    chooser = api.choosing.selector(SGEMM, H200)
    for shape in shapes:
        top = [e.variant.name for e in chooser.ranking(shape)[:2]]
        assert all(shape.label in dict(calls)[name] for name in top)


def test_the_device_scripts_summary_names_each_miss(tmp_path):
    from gpulab.report.picks import summary

    write_csv(tmp_path / "sgemm-mine.csv", SYNTHETIC)
    write_csv(tmp_path / "gemm_bf16-mine.csv", [r | {"experiment": "gemm_bf16"} for r in SYNTHETIC[:4]])
    text = summary([tmp_path / "sgemm-mine.csv", tmp_path / "gemm_bf16-mine.csv"]).splitlines()
    assert text[0].startswith("sgemm-mine.csv: the pick was within 5% of the fastest gpulab row at 2 of 4")
    assert "  b: picked v9 1.2000 ms (+20%); fastest sx 1.0000 ms" in text
    assert "  d: picked sk did not run correctly; fastest v9 3.0000 ms" in text
    assert text[-1] == "all: within 5% at 3 of 5 shapes (60%)"
