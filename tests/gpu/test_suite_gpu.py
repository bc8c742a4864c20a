"""A user's shape suite benched on the card: every row carries the suite's columns, every shape
gets a best row (the model's pick where nothing is tuned there), checked and timed like the others,
with its reason in chosen_by; the figure of how often the pick was right reads the rows back."""

from __future__ import annotations

from gpulab import api
from gpulab.experiments import get_experiment
from gpulab.jobs.model_errors import Unseen, picks_alone
from gpulab.records import card_folder, read_csv
from gpulab.report.picks import pick_accuracy

SUITE = """[suite]
name = "tiny"
experiments = ["gemm_bf16", "sgemm"]

[defaults]
M = [1, 7, 300]

[[shape]]
layer = "narrow"
N = 31
K = 1000

[[shape]]
layer = "wide"
N = 2048
K = 1000
"""


def test_a_suite_benched_on_the_card(tmp_path, results_root):
    (tmp_path / "tiny.toml").write_text(SUITE)
    for name in ("gemm_bf16", "sgemm"):
        out = tmp_path / f"{name}-tiny.csv"
        rows = api.bench(name, ["best"], suite=tmp_path / "tiny.toml", options=api.BenchOptions(out=out))
        saved = read_csv(out)
        assert len(saved) == len(rows) and all(r["suite"] == "tiny" and r["layer"] in ("narrow", "wide") for r in saved)
        best = [r for r in saved if r["variant"] == "best"]
        assert len(best) == 6, best
        for r in best:
            assert r["correct"] is True and r["time_ms"] > 0, r
            assert r["chosen_by"].startswith(("model: ", "tuned")), r
        assert pick_accuracy(saved).shapes == 6


def test_bench_alone_times_the_model_alone_pick_and_best_alone_judges_it(tmp_path, results_root):
    """`gpulab bench --suite S --alone`: at each shape a row of the config the model picks with nothing
    tuned or timed near it (or the best row, where that runs the same config), checked and timed
    like the others; picks_alone then judges every pick on its own time (none left untimed)."""
    (tmp_path / "tiny.toml").write_text(SUITE)
    out = tmp_path / "sgemm-tiny.csv"
    rows = api.bench("sgemm", ["best"], suite=tmp_path / "tiny.toml",
                     options=api.BenchOptions(out=out, alone=True, sanitize=False))
    exp = get_experiment("sgemm")
    folder = card_folder(rows.lab.device.slug)
    unseen = Unseen(exp, folder)
    saved = read_csv(out)
    for values in {tuple(int(v) for v in r["shape"].split("x")) for r in saved}:
        shape = exp.shape(*values)
        pick = unseen.pick(shape)
        mine = [r for r in saved if r["shape"] == shape.label and pick.variant.name in (r["variant"], r.get("picked"))
                and r["params"] == pick.variant.params_label(pick.params)]
        assert len(mine) == 1 and mine[0]["correct"] is True and mine[0]["time_ms"] > 0, (shape.label, mine)
    found = picks_alone(exp, folder, out)
    assert found["shapes"] == 6 and found["timed"] == 6 and not found["untimed"], found
