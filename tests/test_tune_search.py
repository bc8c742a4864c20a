"""A tune's search strategies with no GPU: the budget's two forms, which strategy runs, random's
sample, bayes (optuna's TPE through ask/tell) asking only feasible configs it has not tried, a
resumed tune telling the search what it timed before, a time budget, the cluster's batches, and
the replay of a search against a recorded tune."""

import contextlib
import math
import os
import re
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.jobs import replay, search, tune
from gpulab.records import read_csv, write_csv

optuna = pytest.importorskip("optuna")  # the `tune` extra; the test extra installs it

SGEMM = get_experiment("sgemm")
V14 = SGEMM.variant("v14")  # 8 params, 1280 configs, 192 of them over the shared memory
SHAPE = SGEMM.shape(256, 256, 256)
RESULTS = Path(__file__).resolve().parents[1] / "results" / "h200"


def rate(params: dict) -> float:
    """A stand-in card's rate for a v14 config: a smooth bowl around one best config (not the default)."""
    best = {"BN": 128, "STAGES": 6, "GROUP_M": 8, "CLUSTER": 1, "STORE": 1, "SCHEDULE": 0, "FLUSH": 8}
    far = sum(abs(V14.param(n).choices.index(params[n]) - V14.param(n).choices.index(v)) for n, v in best.items())
    return 1000.0 - 50.0 * far


class StandInLab:
    """Times nothing: a config's rate is rate(params); every config it is asked for is kept."""

    arch = "sm_90"
    env = {"gpu": "Stand-in GPU", "driver": "0", "date": "2026-12-04"}
    device = types.SimpleNamespace(slug="stand-in")

    def __init__(self, on_execute=None):
        self.asked = []
        self.on_execute = on_execute

    def execute(self, spec):
        self.asked.append(spec.params)
        if self.on_execute:
            self.on_execute()
        return spec.base_record() | {"correct": True, "time_ms": 1.0, "gflops": rate(spec.params)}

    def preflight(self, specs):
        pass


@pytest.fixture
def no_compile(monkeypatch):
    """The tune compiles each config to look for spills: here no kernel spills, none is compiled
    (not ahead on spare cores either)."""
    resources = types.SimpleNamespace(spill_stores_bytes=0, as_record=lambda: {})
    monkeypatch.setattr(tune, "compile_spec", lambda spec, arch: types.SimpleNamespace(resources=resources))
    monkeypatch.setattr(tune, "precompiled", lambda specs, arch: contextlib.nullcontext())


def plan(lab, folder, budget, strategy="bayes", seed=0):
    p = tune.plan_on(lab, SGEMM, V14, {}, [SHAPE], budget, folder, strategy=strategy, seed=seed)
    p.resume()
    return p


# -- the budget and the strategy -------------------------------------------------------------------
@pytest.mark.parametrize("text, configs, seconds", [
    (40, 40, None), ("40", 40, None), ("90s", None, 90.0), ("10m", None, 600.0), ("1.5h", None, 5400.0)])
def test_a_budget_is_configs_or_time(text, configs, seconds):
    b = search.Budget.parse(text)
    assert (b.configs, b.seconds) == (configs, seconds)


@pytest.mark.parametrize("text", ["ten", "0", 0, "-3", "5x", "0s", "", True])
def test_a_bad_budget_is_one_line(text):
    with pytest.raises(GpulabError, match="^budget"):
        search.Budget.parse(text)


def test_the_strategy_is_grid_when_the_space_fits_else_random_and_grid_never_samples():
    assert search.resolve(None, 90, search.Budget(120)) == "grid"
    assert search.resolve(None, 1088, search.Budget(120)) == "random"
    assert search.resolve(None, 10, search.Budget(None, 60.0)) == "random"
    assert search.resolve("bayes", 10, search.Budget(120)) == "bayes"
    with pytest.raises(GpulabError, match="1088 feasible configs are over the budget of 120"):
        search.resolve("grid", 1088, search.Budget(120))
    with pytest.raises(GpulabError, match="grid, random, bayes"):
        search.resolve("anneal", 10, search.Budget(120))


def test_random_is_seeded_keeps_the_current_config_first_and_grid_keeps_the_order():
    configs = [{"A": i} for i in range(50)]
    a = search.listed("random", configs, search.Budget(10), {"A": 42}, seed=0)
    assert a[0] == {"A": 42} and len(a) == 10 and len({c["A"] for c in a}) == 10
    assert a == search.listed("random", configs, search.Budget(10), {"A": 42}, seed=0)
    assert a != search.listed("random", configs, search.Budget(10), {"A": 42}, seed=1)
    timed = search.listed("random", configs, search.Budget(None, 60.0), {"A": 42}, seed=0)
    assert timed[0] == {"A": 42} and sorted(c["A"] for c in timed) == list(range(50)) and timed[1:] != configs[1:]
    assert search.listed("grid", configs, search.Budget(120), {"A": 42}, 0) == [{"A": 42}] + configs[:42] + configs[43:]
    assert search.listed("grid", configs, search.Budget(120), {"A": 99}, 0) == configs  # not feasible: not first


def test_bayes_without_optuna_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)  # import optuna raises ImportError
    with pytest.raises(GpulabError, match=r"pip install 'gpulab\[tune\]'"):
        search.BayesSearch({"A": (1, 2)}, [{"A": 1}])


# -- bayes -------------------------------------------------------------------------------------------
def test_bayes_asks_feasible_configs_once_each_the_current_first_until_none_is_left():
    axes = {"A": (1, 2, 4, 8), "B": (0, 1, 2), "C": (7,)}
    feasible = [{"A": a, "B": b, "C": 7} for a in axes["A"] for b in axes["B"] if a * (b + 1) <= 8]
    s = search.BayesSearch(axes, feasible, seed=3, first={"A": 2, "B": 1, "C": 7}, startup=3)
    asked = []
    while batch := s.ask(s.batch(2)):
        asked += batch
        for p in batch:
            s.tell(p, float(p["A"] - p["B"]))
    assert asked[0] == {"A": 2, "B": 1, "C": 7}
    assert sorted(map(str, asked)) == sorted(map(str, feasible))  # every feasible config, none twice, no other
    told = [t for t in s.study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(told) == len(feasible)  # the study holds each config that ran, as it ran


def test_a_failed_config_is_told_pruned_and_a_config_told_unasked_is_never_asked():
    axes = {"A": (1, 2, 3, 4, 5, 6)}
    s = search.BayesSearch(axes, [{"A": a} for a in axes["A"]], seed=0, startup=3)
    s.tell({"A": 4}, 10.0)  # resumed from a CSV: never asked
    s.tell({"A": 9}, 10.0)  # outside the space: ignored
    first = s.ask(1)
    s.tell(first[0], None)
    states = [(t.params, t.state) for t in s.study.trials if t.state != optuna.trial.TrialState.FAIL]
    assert states == [({"A": 3}, optuna.trial.TrialState.COMPLETE),
                      ({"A": s.axes["A"].index(first[0]["A"])}, optuna.trial.TrialState.PRUNED)]
    rest = s.ask(10)
    assert {"A": 4} not in first + rest and len(first + rest) == 5


def test_a_bayes_tune_times_only_feasible_configs_within_its_budget_and_records_the_best(tmp_path, no_compile):
    lab = StandInLab()
    p = plan(lab, tmp_path, 12)
    assert p.strategy == "bayes" and len(p.candidates) == 1088 and len(p.rejected) == 192
    result = tune.run_tune(p)
    assert len(lab.asked) == 12 and len({V14.params_label(c) for c in lab.asked}) == 12
    assert all(V14.constraints(c, None) is None for c in lab.asked)  # nothing the constraints reject
    assert lab.asked[0] == V14.default_params()  # what the card runs today, first
    assert result.best == max(lab.asked, key=rate) != lab.asked[0]  # the search found better than the default
    assert len(tune.resume_rows(p.path)) == 12


def test_a_resumed_bayes_tune_tells_the_search_what_was_timed_and_counts_it_in_the_budget(tmp_path, no_compile):
    first = StandInLab()
    tune.run_tune(plan(first, tmp_path, 8))
    again = StandInLab()
    p = plan(again, tmp_path, 14)
    assert len(p.configs) == 8 and p.search.told == 8 and p.runs == 6  # told before the first ask
    result = tune.run_tune(p)
    assert len(again.asked) == 6  # the budget counts the 8 resumed
    assert not {V14.params_label(c) for c in again.asked} & {V14.params_label(c) for c in first.asked}
    assert result.best == max(first.asked + again.asked, key=rate)
    assert len(tune.resume_rows(p.path)) == 14
    done = StandInLab()
    tune.run_tune(plan(done, tmp_path, 14))
    assert done.asked == []  # the same command again: nothing left to time


def test_no_config_starts_past_a_time_budget(tmp_path, no_compile, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    lab = StandInLab(on_execute=lambda: now.__setitem__(0, now[0] + 1.0))  # each run takes a second

    tune.run_tune(plan(lab, tmp_path, "3s"))
    assert len(lab.asked) == 3
    listed = StandInLab(on_execute=lambda: now.__setitem__(0, now[0] + 1.0))
    tune.run_tune(plan(listed, tmp_path / "random", "2s", strategy="random", seed=5))
    assert len(listed.asked) == 2


def test_on_a_cluster_a_search_asks_as_many_configs_as_there_are_gpus(tmp_path, no_compile):
    class Cluster:
        """Times each batch as gpulab.run.sweep.Cluster.time does: (spec, record) as each comes."""

        def __init__(self):
            self.batches = []
            self.lab = StandInLab()

        def time(self, specs, group, skip_spills=False):
            self.batches.append(len(specs))
            for spec in specs:
                yield spec, self.lab.execute(spec)

    group = StandInLab()
    group.cards = [object(), object()]  # two GPUs of one model
    cluster = Cluster()
    p = plan(group, tmp_path, 11)
    result = tune.run_tune_on(cluster, p)
    startup = search.startup_trials(search.Budget(11))
    assert startup == 3 and cluster.batches == [3, 2, 2, 2, 2]  # the random start at once, then a config a GPU
    assert result.best == max(cluster.lab.asked, key=rate) and len(tune.resume_rows(p.path)) == 11


# -- the replay ------------------------------------------------------------------------------------
def _recorded_csv(path):
    """A tune CSV of sgemm v9 at two shapes: 12 configs, one spilled, one timed twice (the later row
    counts), one recorded at one shape only."""
    v = SGEMM.variant("v9")
    ok, _ = tune.feasible(v, tune.search_space(v))
    configs = ok[:12]
    rows = []
    for i, p in enumerate(configs):
        for shape in ("512x512x512", "1024x1024x1024"):
            if i == 11 and shape == "1024x1024x1024":
                continue
            row = {"experiment": "sgemm", "variant": "v9", "params": v.params_label(p), "shape": shape,
                   "correct": True, "time_ms": 1.0, "gflops": 100.0 + i, "date": "2026-12-01T00:00:00+00:00"}
            if i == 3:
                row = {k: row[k] for k in ("experiment", "variant", "params", "shape")} | {
                    "skip_reason": "spills registers to local memory"}
            rows.append(row)
    rows.append(rows[0] | {"gflops": 500.0, "date": "2026-12-02T00:00:00+00:00"})  # config 0, timed again
    write_csv(path, rows)
    return v, configs


def test_a_recorded_tune_reads_each_config_at_every_shape_the_latest_row_winning(tmp_path):
    v, configs = _recorded_csv(tmp_path / "tune.csv")
    rec = replay.recorded(tmp_path / "tune.csv", ["512x512x512", "1024x1024x1024"])
    assert rec.variant is v and len(rec.configs) == 11  # the one timed at one shape only is out
    assert rec.scores[v.params_label(configs[3])] is None  # it spilled: an evaluation that scores nothing
    assert rec.scores[v.params_label(configs[0])] == pytest.approx(math.sqrt(500.0 * 100.0))
    assert rec.best == pytest.approx(math.sqrt(500.0 * 100.0)) and rec.dates == ("2026-12-01", "2026-12-02")
    with pytest.raises(GpulabError, match="no config of v9 timed at every one of 64x64x64"):
        replay.recorded(tmp_path / "tune.csv", ["64x64x64"])


@pytest.mark.parametrize("strategy", replay.REPLAYED)
def test_a_replay_asks_distinct_recorded_configs_within_its_evaluations(tmp_path, strategy):
    _recorded_csv(tmp_path / "tune.csv")
    rec = replay.recorded(tmp_path / "tune.csv", ["512x512x512", "1024x1024x1024"])
    r = replay.replay(rec, strategy, 4, seed=1)
    labels = [rec.variant.params_label(p) for p in r.asked]
    assert r.evaluations == 4 and len(set(labels)) == 4 and set(labels) <= set(rec.scores)
    assert r.found == max(rec.scores[label] or 0.0 for label in labels) and r.ratio <= 1.0
    assert replay.replay(rec, strategy, len(rec.configs), seed=1).ratio == 1.0  # all of them: the best
    assert replay.replay(rec, strategy, 4, seed=1).asked == r.asked  # a seed replays the same search
    with pytest.raises(GpulabError, match="evaluations must be 1 to the 11 configs"):
        replay.replay(rec, strategy, 12, seed=1)


@pytest.mark.parametrize("damage, words", [
    (lambda r: r | {"params": "BM=big"}, "a row's params 'BM=big' cannot be read"),
    (lambda r: {k: v for k, v in r.items() if k != "gflops"}, "a timed row has no gflops or gbps"),
    (lambda r: r | {"correct": False}, "no config ran correctly at every one of"),
])
def test_a_recorded_tune_that_cannot_be_replayed_is_one_gpulab_error(tmp_path, damage, words):
    """Each of these ended `gpulab tune-replay` in a traceback (ValueError, TypeError, an empty max)."""
    _recorded_csv(tmp_path / "tune.csv")
    rows = read_csv(tmp_path / "tune.csv")
    write_csv(tmp_path / "damaged.csv", [damage(r) for r in rows])
    with pytest.raises(GpulabError, match=re.escape(words)):
        replay.recorded(tmp_path / "damaged.csv", ["512x512x512", "1024x1024x1024"])


@pytest.mark.parametrize("path, shape, words", [
    # a bench's file: it read the first row's variant and scored it by every row's rate, cuBLAS's too
    (RESULTS / "sgemm.csv", "4096x4096x4096", "a replay reads one variant's tune"),
    (RESULTS / "tune-sgemm-v14.csv", "4096", "needs 3 numbers (MxNxK)"),  # was: no config timed at 4096
    (Path(__file__), "4096x4096x4096", "the header lacks the columns experiment, variant, params, shape"),
])
def test_a_file_that_is_no_tune_or_a_shape_that_is_no_shape_is_said_so(path, shape, words):
    with pytest.raises(GpulabError, match=re.escape(words)):
        replay.recorded(path, [shape])


def test_the_replay_of_the_recorded_h200_tunes_runs_on_the_committed_csvs():
    rec = replay.recorded(RESULTS / "tune-gemm_bf16-t4.csv", ["4096x4096x4096"])
    assert len(rec.configs) >= 36 and rec.best > 0
    runs = replay.replay_seeds(rec, replay.REPLAYED, replay.quarter(rec), seeds=2)
    assert [(r.strategy, r.seed, r.evaluations) for r in runs] == [
        (s, seed, math.ceil(len(rec.configs) / 4)) for s in replay.REPLAYED for seed in range(2)]


# -- the command line ----------------------------------------------------------------------------------
def gpulab(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "GPULAB_NO_GPU": "1"}, cwd=cwd, timeout=300)


@pytest.mark.parametrize("args, words", [
    (["--budget", "ten"], "error: budget takes a number of configs (40) or a time"),
    (["--strategy", "anneal"], "error: strategy must be one of grid, random, bayes"),
])
def test_a_bad_budget_or_strategy_is_one_line_before_any_gpu(tmp_path, args, words):
    r = gpulab("tune", "sgemm", "v14", *args, cwd=tmp_path)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr + r.stdout


def test_bayes_without_optuna_is_one_line_before_any_gpu(tmp_path):
    (tmp_path / "optuna.py").write_text("raise ImportError('not installed here')\n")  # shadows the real one
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "tune", "sgemm", "v14", "--strategy", "bayes"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "GPULAB_NO_GPU": "1", "PYTHONPATH": str(tmp_path)})
    assert r.returncode == 2 and "pip install 'gpulab[tune]'" in r.stderr and "Traceback" not in r.stderr + r.stdout


def test_tune_replay_with_a_budget_of_0_is_one_line(tmp_path):
    """--budget 0 was read as no budget given (a quarter of the configs) and the replay went on."""
    r = gpulab("tune-replay", str(RESULTS / "tune-sgemm-v14.csv"), "--shape", "4096x4096x4096", "--budget", "0",
               cwd=tmp_path)
    assert r.returncode == 2 and "evaluations must be 1 to the 90 configs recorded; got 0" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_tune_replay_prints_each_strategy_against_the_recorded_best(tmp_path):
    r = gpulab("tune-replay", str(RESULTS / "tune-sgemm-v14.csv"), "--shape", "4096x4096x4096", "--seeds", "2",
               cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "90 configs recorded at every shape" in r.stdout
    assert all(word in r.stdout for word in ("random", "bayes", "within 2%"))
    assert not list(tmp_path.iterdir())  # nothing written


def test_tune_replay_takes_shapes_as_every_function_does(tmp_path):
    """Shapes only as text, a shape's text read character by character, strategies too ('r')."""
    import gpulab

    path = RESULTS / "tune-sgemm-v14.csv"
    for shapes in (4096, "4096", [(4096, 4096, 4096)], "4096x4096x4096", [SGEMM.shape(4096, 4096, 4096)]):
        rec, runs = gpulab.tune_replay(path, shapes, seeds=1, strategies="random")
        assert [s.label for s in rec.shapes] == ["4096x4096x4096"] and [r.strategy for r in runs] == ["random"]
    for args, words in (({"evaluations": "5"}, "evaluations must be a whole number"),
                        ({"seeds": 0}, "seeds must be a whole number, at least 1")):
        with pytest.raises(GpulabError, match=words):
            gpulab.tune_replay(path, 4096, **args)
    with pytest.raises(GpulabError, match="csv is the path of a tune's CSV"):
        gpulab.tune_replay(None, 4096)
