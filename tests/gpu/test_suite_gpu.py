"""A user's shape suite benched on the card: every row carries the suite's columns, every shape
gets a best row (the model's pick where nothing is tuned there), checked and timed like the others,
with its reason in chosen_by; the figure of how often the pick was right reads the rows back."""

from __future__ import annotations

from gpulab import api
from gpulab.records import read_csv
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
