"""Tuning logic that needs no GPU: the search space, constraint rejection with reasons,
scoring, resuming from the saved CSV, and tuned defaults that fall back when stale."""

import dataclasses
import json

import pytest

from gpulab.jobs import tune
from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.experiments.base import Launch, Param, Variant
from gpulab.records import DamagedFile, write_csv

SGEMM = get_experiment("sgemm")


def _variant():
    def constraints(p, shape):
        if p["BM"] * p["BK"] % 256:
            return "BM*BK must be a multiple of the 256 threads"
        return None

    return Variant(
        name="vt", file="x.cu", summary="test", launch=lambda p, s: Launch((1, 1, 1), (256, 1, 1)),
        params=(Param("BM", (64, 128), 128), Param("BK", (2, 8, 16), 8)), constraints=constraints,
    )


def test_space_and_constraints_reject_what_cannot_run():
    v = _variant()
    space = tune.search_space(v)
    assert len(space) == 6
    ok, rejected = tune.feasible(v, space)
    assert {"BM": 64, "BK": 2} in [p for p, _ in rejected]
    assert all("multiple of the 256 threads" in reason for _, reason in rejected)
    assert {"BM": 128, "BK": 8} in ok and len(ok) + len(rejected) == 6
    restricted = tune.search_space(v, {"BK": (16,)})
    assert restricted == [{"BM": 64, "BK": 16}, {"BM": 128, "BK": 16}]


def test_score_needs_every_shape_correct():
    shapes = [SGEMM.square(2), SGEMM.square(4)]
    rows = [{"shape": "2x2x2", "correct": True, "time_ms": 1.0, "gflops": 100.0},
            {"shape": "4x4x4", "correct": True, "time_ms": 1.0, "gflops": 400.0}]
    assert tune.score(rows, shapes) == pytest.approx(200.0)
    rows[1]["correct"] = False
    assert tune.score(rows, shapes) is None
    assert tune.score(rows[:1], shapes) is None


def test_resume_reads_what_was_saved(tmp_path):
    path = tmp_path / "tune.csv"
    write_csv(path, [{"experiment": "sgemm", "variant": "v1", "params": "TILE=8", "shape": "2x2x2"}])
    assert tune.done_keys(tune.resume_rows(path)) == {("TILE=8", "2x2x2")}


@pytest.mark.parametrize("text, says", [
    ("experiment,variant,params,shape,time_ms\nsgemm,v1,TILE=8,64x64x64,0.1\nsgemm,v1,TI", "cut off"),
    ("experiment,variant,params,time_ms\nsgemm,v1,TILE=8,0.1\n", "shape"),
    ("experiment,variant,shape,time_ms\nsgemm,v1,64x64x64,0.1\n", "params"),
], ids=["truncated", "no shape column", "no params column"])
def test_a_damaged_tune_csv_stops_the_resume_with_one_line_and_stays_as_it_was(tmp_path, text, says):
    v = SGEMM.variant("v1")
    plan = tune.TunePlan(SGEMM, v, [SGEMM.shape(64, 64, 64)], _StandInLab(), tmp_path, {"TILE": 8}, 1, [{"TILE": 8}], [])
    plan.path.write_text(text)
    with pytest.raises(DamagedFile, match=says):
        plan.resume()
    assert plan.path.read_text() == text


def test_tuned_defaults_used_when_valid_and_ignored_when_stale(tmp_path):
    v1 = SGEMM.variant("v1")
    defaults = tune.tuned_defaults(SGEMM, tmp_path)
    assert defaults(v1) == v1.default_params()
    tune.write_best(tmp_path, SGEMM, v1, {"TILE": 16}, 123.0, [SGEMM.square(64)], {"gpu": "X"})
    assert tune.tuned_defaults(SGEMM, tmp_path)(v1) == {"TILE": 16}
    assert tune.tuned_defaults(SGEMM, tmp_path)(v1, SGEMM.square(64)) == {"TILE": 16}
    data = json.loads((tmp_path / "tuned.json").read_text())
    data["sgemm"]["v1"]["params"] = {"TILE": 7}  # no longer an accepted value
    (tmp_path / "tuned.json").write_text(json.dumps(data))
    assert tune.tuned_defaults(SGEMM, tmp_path)(v1) == v1.default_params()


def test_tuned_defaults_pick_the_config_tuned_at_the_nearest_size(tmp_path):
    v1 = SGEMM.variant("v1")
    shapes = [SGEMM.square(1024), SGEMM.square(4096)]
    rows = [
        {"shape": "1024x1024x1024", "params": "TILE=16", "correct": True, "time_ms": 1.0, "gflops": 9.0},
        {"shape": "1024x1024x1024", "params": "TILE=32", "correct": True, "time_ms": 2.0, "gflops": 4.0},
        {"shape": "4096x4096x4096", "params": "TILE=16", "correct": True, "time_ms": 9.0, "gflops": 5.0},
        {"shape": "4096x4096x4096", "params": "TILE=32", "correct": True, "time_ms": 3.0, "gflops": 15.0},
        {"shape": "4096x4096x4096", "params": "TILE=8", "correct": False, "time_ms": 1.0, "gflops": 99.0},
    ]
    by_shape = tune.best_by_shape(rows, shapes)
    assert by_shape["1024x1024x1024"]["params"] == {"TILE": 16}
    assert by_shape["4096x4096x4096"]["params"] == {"TILE": 32}  # the wrong TILE=8 never wins
    tune.write_best(tmp_path, SGEMM, v1, {"TILE": 32}, 10.0, shapes, {}, by_shape)
    pick = tune.tuned_defaults(SGEMM, tmp_path)
    assert pick(v1, SGEMM.shape(1000, 1200, 900)) == {"TILE": 16}
    assert pick(v1, SGEMM.square(8192)) == {"TILE": 32}
    assert pick(v1) == {"TILE": 32}


def test_tuned_defaults_go_by_the_shapes_class_not_its_volume(tmp_path):
    """4096x64x4096 and 1024^3 are the same work; sx's config tuned at the skinny shape (S=8) must
    run there, not the 1024^3 one (S=2: 41% of cuBLAS on the H200, 2026-12-01, where S=8 ran 93%)."""
    sx = SGEMM.variant("sx")
    at = {"4096x64x4096": sx.default_params() | {"S": 8}, "1024x1024x1024": sx.default_params() | {"S": 2}}
    by_shape = {label: {"params": params, "rate": 1.0} for label, params in at.items()}
    tune.write_best(tmp_path, SGEMM, sx, at["1024x1024x1024"], 1.0, [], {}, by_shape)
    pick = tune.tuned_defaults(SGEMM, tmp_path)
    assert pick(sx, SGEMM.shape(4096, 64, 4096))["S"] == 8
    assert pick(sx, SGEMM.shape(4096, 32, 4096))["S"] == 8
    assert pick(sx, SGEMM.square(1024))["S"] == 2


def test_equally_near_tuned_shapes_go_to_the_faster_config(tmp_path):
    """2048^3 is as far from 1024^3 as from 4096^3; the config that ran faster where it was tuned (the
    larger shape's) runs there, as the best row picks, whatever the order of the shapes in tuned.json.
    (gemm_bf16 t2, H200, 2026-12-02: 1024^3's 64x64 tiles ran 54% of cuBLAS at 2048^3.)"""
    sx = SGEMM.variant("sx")
    at = {"1024x1024x1024": (sx.default_params() | {"S": 2}, 30.0), "4096x4096x4096": (sx.default_params() | {"S": 8}, 45.0)}
    for order in (list(at), list(reversed(at))):
        by_shape = {label: {"params": at[label][0], "rate": at[label][1]} for label in order}
        tune.write_best(tmp_path, SGEMM, sx, at["1024x1024x1024"][0], 1.0, [], {}, by_shape)
        assert tune.tuned_defaults(SGEMM, tmp_path)(sx, SGEMM.square(2048))["S"] == 8
        assert tune.tuned_defaults(SGEMM, tmp_path)(sx, SGEMM.square(1024))["S"] == 2  # nearer wins first


def test_a_config_tuned_far_away_does_not_speak_for_a_shape(tmp_path):
    """A tune recorded only at small squares: beyond NEAR the overall best (the tune's choice over all
    its shapes) runs, not the nearest small square's config."""
    sx = SGEMM.variant("sx")
    at = {"512x512x512": sx.default_params() | {"S": 4}}
    overall = sx.default_params() | {"S": 2}
    tune.write_best(tmp_path, SGEMM, sx, overall, 1.0, [], {}, {k: {"params": v, "rate": 1.0} for k, v in at.items()})
    pick = tune.tuned_defaults(SGEMM, tmp_path)
    assert tune.shape_distance(SGEMM.square(1024), (512, 512, 512)) <= tune.NEAR < tune.shape_distance(
        SGEMM.square(2048), (512, 512, 512))
    assert pick(sx, SGEMM.square(1024))["S"] == 4  # 3 from 512^3: near
    assert pick(sx, SGEMM.square(2048))["S"] == 2  # 6 from 512^3: the overall best
    assert pick(sx, SGEMM.shape(512, 512, 8192))["S"] == 4  # 4: still near


class _StandInLab:
    """Times nothing: a config's 'rate' is a fixed function of its params, TILE=16 fails its check,
    and the calls are recorded so the test can see what a resumed tune runs again."""

    arch = "sm_90"
    env = {"gpu": "Stand-in GPU", "driver": "0", "date": "2026-11-30"}

    def __init__(self):
        self.calls = []

    def execute(self, spec):
        self.calls.append(spec.label)
        tile = spec.params["TILE"]
        ok = tile != 16
        return spec.base_record() | {"correct": ok, "time_ms": 1.0 / tile, "gflops": 100.0 * tile}


def test_run_tune_saves_as_it_goes_resumes_and_records_the_best(tmp_path):
    v = SGEMM.variant("v1")
    shapes = [SGEMM.shape(64, 64, 64), SGEMM.shape(17, 33, 65)]
    configs = [{"TILE": t} for t in (8, 16, 32)]

    def plan(lab):
        return tune.TunePlan(SGEMM, v, shapes, lab, tmp_path, {"TILE": 8}, 3, configs, [])

    lab = _StandInLab()
    first = plan(lab)
    first.resume()
    result = tune.run_tune(first)
    assert len(lab.calls) == 6
    assert result.best == {"TILE": 32} and [p for _, p in result.scored] == [{"TILE": 32}, {"TILE": 8}]
    saved = json.loads(tune.tuned_path(tmp_path).read_text())["sgemm"]["v1"]
    assert saved["params"] == {"TILE": 32} and saved["gpu"] == "Stand-in GPU"
    assert set(saved["by_shape"]) == {s.label for s in shapes}
    assert len(tune.resume_rows(first.path)) == 6  # every result saved, no pending row left

    again = _StandInLab()
    second = plan(again)
    assert len(second.resume()) == 6
    assert tune.run_tune(second).best == {"TILE": 32} and again.calls == []  # nothing timed twice


def test_a_narrower_tune_times_the_earlier_pick_again_and_keeps_the_faster(tmp_path):
    """A tune over configs that leave out the one an earlier tune found fastest at a shape times that
    one again there (an incumbent), after its own; the shape keeps whichever ran faster in this run.
    Before, the narrower tune's fastest replaced it, however much slower."""
    v = SGEMM.variant("v1")
    a, b = SGEMM.shape(64, 64, 64), SGEMM.shape(17, 33, 65)

    def tuned(configs, shapes):
        lab = _StandInLab()
        plan = tune.TunePlan(SGEMM, v, shapes, lab, tmp_path, configs[0], len(configs), configs, [],
                             incumbents=tune.incumbents(SGEMM, v, tmp_path, shapes, configs))
        plan.resume()
        tune.run_tune(plan)
        return plan, lab.calls, json.loads(tune.tuned_path(tmp_path).read_text())["sgemm"]["v1"]["by_shape"]

    _, calls, by_shape = tuned([{"TILE": 32}], [a])
    assert calls == [f"sgemm v1 TILE=32 {a.label}"] and by_shape[a.label]["params"] == {"TILE": 32}
    # Narrower, slower: TILE=32 (3.2x the rate of 8 on the stand-in) timed again at a, not at b,
    # where no tune picked anything; a keeps it.
    plan, calls, by_shape = tuned([{"TILE": 8}], [a, b])
    assert plan.incumbents == [({"TILE": 32}, a)]
    assert calls == [f"sgemm v1 TILE=8 {a.label}", f"sgemm v1 TILE=8 {b.label}", f"sgemm v1 TILE=32 {a.label}"]
    assert by_shape[a.label]["params"] == {"TILE": 32} and by_shape[b.label]["params"] == {"TILE": 8}
    # A config the new tune asks for is no incumbent: timed once, with the others.
    assert tune.incumbents(SGEMM, v, tmp_path, [a, b], [{"TILE": 8}, {"TILE": 32}]) == []
    # Faster than the incumbent: the new config takes the shape.
    tune.write_best(tmp_path, SGEMM, v, {"TILE": 8}, 1.0, [a], {}, {a.label: {"params": {"TILE": 8}, "rate": 1.0}})
    _, calls, by_shape = tuned([{"TILE": 32}], [a])
    assert calls[-1] == f"sgemm v1 TILE=8 {a.label}" and by_shape[a.label]["params"] == {"TILE": 32}


def test_a_tune_at_fewer_shapes_keeps_the_picks_recorded_at_the_others(tmp_path):
    v = SGEMM.variant("v1")
    a, b = SGEMM.shape(64, 64, 64), SGEMM.shape(17, 33, 65)
    tune.write_best(tmp_path, SGEMM, v, {"TILE": 8}, 1.0, [a, b], {},
                    {a.label: {"params": {"TILE": 8}, "rate": 1.0}, b.label: {"params": {"TILE": 16}, "rate": 2.0}})
    tune.write_best(tmp_path, SGEMM, v, {"TILE": 32}, 3.0, [a], {}, {a.label: {"params": {"TILE": 32}, "rate": 3.0}})
    saved = json.loads(tune.tuned_path(tmp_path).read_text())["sgemm"]["v1"]
    assert saved["by_shape"] == {a.label: {"params": {"TILE": 32}, "rate": 3.0},
                                 b.label: {"params": {"TILE": 16}, "rate": 2.0}}
    # ... and the overall best scored over a and b stays: this tune did not score b.
    assert saved["params"] == {"TILE": 8} and saved["shapes"] == [a.label, b.label]
    # A tune over both shapes replaces it; a shape it timed without a correct config loses its old
    # pick: it was asked again.
    kept = tune.write_best(tmp_path, SGEMM, v, {"TILE": 32}, 3.0, [a, b], {},
                           {a.label: {"params": {"TILE": 32}, "rate": 3.0}})
    saved = json.loads(tune.tuned_path(tmp_path).read_text())["sgemm"]["v1"]
    assert kept == [] and saved["params"] == {"TILE": 32} and set(saved["by_shape"]) == {a.label}


def test_a_tune_at_one_new_shape_keeps_the_overall_best_and_says_so(tmp_path):
    """On the H200 (2026-12-04) a tune of t4 at one layer shape replaced the config chosen over seven
    shapes up to 8192^3 with that layer's winner; every untuned shape would then have run it."""
    v = SGEMM.variant("v1")
    squares, layer = [SGEMM.square(1024), SGEMM.square(4096)], SGEMM.shape(128, 6144, 4096)
    tune.write_best(tmp_path, SGEMM, v, {"TILE": 32}, 9.0, squares, {"gpu": "X"},
                    {s.label: {"params": {"TILE": 32}, "rate": 9.0} for s in squares})
    kept = tune.write_best(tmp_path, SGEMM, v, {"TILE": 8}, 2.0, [layer], {"gpu": "X"},
                           {layer.label: {"params": {"TILE": 8}, "rate": 2.0}})
    saved = json.loads(tune.tuned_path(tmp_path).read_text())["sgemm"]["v1"]
    assert kept == [s.label for s in squares]
    assert saved["params"] == {"TILE": 32} and saved["score"] == 9.0 and saved["shapes"] == kept
    assert saved["by_shape"][layer.label]["params"] == {"TILE": 8}
    assert tune.tuned_defaults(SGEMM, tmp_path)(v, layer) == {"TILE": 8}  # the layer still runs its own pick
    assert tune.tuned_defaults(SGEMM, tmp_path)(v, SGEMM.square(8192)) == {"TILE": 32}


def test_a_resumed_tune_times_again_what_an_earlier_source_timed(tmp_path):
    """Every row records the kernel's source fingerprint; once the .cu changes, a resumed tune sets
    the old rows aside and times those configs again, while a row saved before the column existed
    (no source_sha) is resumed as it is."""
    kernel = tmp_path / "v1.cu"
    kernel.write_text(SGEMM.source(SGEMM.variant("v1")).read_text())
    v = dataclasses.replace(SGEMM.variant("v1"), file=str(kernel))
    shapes = [SGEMM.shape(64, 64, 64)]
    configs = [{"TILE": t} for t in (8, 32)]

    def plan(lab):
        return tune.TunePlan(SGEMM, v, shapes, lab, tmp_path, {"TILE": 8}, 2, configs, [])

    first = plan(_StandInLab())
    first.resume()
    tune.run_tune(first)
    old_sha = first.source_sha
    assert {r["source_sha"] for r in tune.resume_rows(first.path)} == {old_sha}

    kernel.write_text(kernel.read_text() + "__device__ int edited;\n")  # a change of code, not of a comment
    lab = _StandInLab()
    second = plan(lab)
    assert second.source_sha != old_sha
    assert second.resume() == set() and [r["params"] for r in second.stale] == ["TILE=8", "TILE=32"]
    tune.run_tune(second)
    assert len(lab.calls) == 2
    assert [(r["params"], r["source_sha"]) for r in tune.resume_rows(second.path)] == [
        ("TILE=8", second.source_sha), ("TILE=32", second.source_sha)]

    rows = tune.resume_rows(second.path)
    rows[0]["source_sha"] = ""  # as saved before tunes recorded the source
    write_csv(second.path, rows)
    third = plan(_StandInLab())
    assert len(third.resume()) == 2 and third.stale == []

    # Edited again and tuned at another shape: the first shape's rows, not timed by this tune, stay
    # in the CSV with the source they timed; a tune that asks for them again times them again.
    second_sha = second.source_sha
    kernel.write_text(kernel.read_text() + "__device__ int edited_again;\n")
    other = SGEMM.shape(17, 33, 65)
    fourth = tune.TunePlan(SGEMM, v, [other], _StandInLab(), tmp_path, {"TILE": 8}, 2, configs, [])
    assert fourth.resume() == set() and fourth.stale == []  # nothing of its own to resume
    tune.run_tune(fourth)
    saved = {(r["params"], r["shape"]): r.get("source_sha") for r in tune.resume_rows(fourth.path)}
    assert saved == {("TILE=8", shapes[0].label): None, ("TILE=32", shapes[0].label): second_sha,
                     ("TILE=8", other.label): fourth.source_sha, ("TILE=32", other.label): fourth.source_sha}
    fifth = plan(_StandInLab())
    assert fifth.resume() == {("TILE=8", shapes[0].label)}  # the row from before the column
    assert [r["params"] for r in fifth.stale] == ["TILE=32"]


def test_a_tune_stopped_by_the_user_leaves_no_pending_row_and_resumes_the_config(tmp_path):
    """Ctrl-C (or SIGTERM, which the CLI turns into the same KeyboardInterrupt) in the middle of a
    config: the CSV holds the results before it and no row calling it unfinished, so the resumed tune
    times it instead of skipping it as one that stopped the process (as a fault would)."""
    v = SGEMM.variant("v1")
    shapes = [SGEMM.shape(64, 64, 64)]
    configs = [{"TILE": t} for t in (8, 32)]

    class StoppedAtTile32(_StandInLab):
        def execute(self, spec):
            if spec.params["TILE"] == 32:
                raise KeyboardInterrupt
            return super().execute(spec)

    first = tune.TunePlan(SGEMM, v, shapes, StoppedAtTile32(), tmp_path, {"TILE": 8}, 2, configs, [])
    first.resume()
    with pytest.raises(KeyboardInterrupt):
        tune.run_tune(first)
    saved = tune.resume_rows(first.path)
    assert [(r["params"], r.get("skip_reason")) for r in saved] == [("TILE=8", None)]
    lab = _StandInLab()
    second = tune.TunePlan(SGEMM, v, shapes, lab, tmp_path, {"TILE": 8}, 2, configs, [])
    second.resume()
    assert tune.run_tune(second).best == {"TILE": 32} and lab.calls == [f"sgemm v1 TILE=32 {shapes[0].label}"]


def test_a_tune_stopped_by_the_user_puts_back_the_row_it_was_timing_again(tmp_path):
    """The config Ctrl-C stopped had a row from an earlier source: that row is back, as it was."""
    v = SGEMM.variant("v1")
    shape = SGEMM.shape(64, 64, 64)
    old = {"experiment": "sgemm", "variant": "v1", "params": "TILE=32", "shape": shape.label, "time_ms": 0.5,
           "source_sha": "0123456789ab"}

    class Stopped(_StandInLab):
        def execute(self, spec):
            raise KeyboardInterrupt

    plan = tune.TunePlan(SGEMM, v, [shape], Stopped(), tmp_path, {"TILE": 32}, 1, [{"TILE": 32}], [])
    write_csv(plan.path, [old])
    assert plan.resume() == set() and plan.stale == [old]
    with pytest.raises(KeyboardInterrupt):
        tune.run_tune(plan)
    assert tune.resume_rows(plan.path) == [old]


def test_ctrl_c_while_an_incumbent_is_timed_again_loses_nothing_recorded(tmp_path):
    """Stopped while timing the earlier pick again: its earlier row is back in the CSV as it was, the
    new config's row stays, and tuned.json still holds the earlier pick (nothing was written)."""
    v = SGEMM.variant("v1")
    a = SGEMM.shape(64, 64, 64)
    tune.write_best(tmp_path, SGEMM, v, {"TILE": 32}, 3.0, [a], {}, {a.label: {"params": {"TILE": 32}, "rate": 3.0}})
    earlier = {"experiment": "sgemm", "variant": "v1", "params": "TILE=32", "shape": a.label, "correct": True,
               "time_ms": 0.03, "gflops": 3.0}
    before = tune.tuned_path(tmp_path).read_text()

    class StoppedAtTheIncumbent(_StandInLab):
        def execute(self, spec):
            if spec.params["TILE"] == 32:
                raise KeyboardInterrupt
            return super().execute(spec)

    plan = tune.TunePlan(SGEMM, v, [a], StoppedAtTheIncumbent(), tmp_path, {"TILE": 8}, 1, [{"TILE": 8}], [],
                         incumbents=tune.incumbents(SGEMM, v, tmp_path, [a], [{"TILE": 8}]))
    write_csv(plan.path, [earlier])
    plan.resume()
    with pytest.raises(KeyboardInterrupt):
        tune.run_tune(plan)
    saved = {r["params"]: r for r in tune.resume_rows(plan.path)}
    assert set(saved) == {"TILE=8", "TILE=32"} and saved["TILE=32"]["time_ms"] == 0.03
    assert tune.tuned_path(tmp_path).read_text() == before


def test_a_damaged_tuned_json_stops_the_incumbents_before_anything_is_timed(tmp_path):
    tune.tuned_path(tmp_path).write_text('{"sgemm": {"v1": {"params": {"TILE": 32}, "by_sha')
    with pytest.raises(GpulabError, match="not valid JSON"):
        tune.incumbents(SGEMM, SGEMM.variant("v1"), tmp_path, [SGEMM.shape(64, 64, 64)], [{"TILE": 8}])
    assert tune.tuned_path(tmp_path).read_text().endswith('"by_sha')  # left as it was


def test_run_tune_with_no_correct_config_says_where_to_look(tmp_path):
    v = SGEMM.variant("v1")

    class AllWrong(_StandInLab):
        def execute(self, spec):
            return super().execute(spec) | {"correct": False}

    p = tune.TunePlan(SGEMM, v, [SGEMM.shape(64, 64, 64)], AllWrong(), tmp_path, {"TILE": 8}, 1, [{"TILE": 8}], [])
    with pytest.raises(GpulabError, match="no config of v1 ran correctly"):
        tune.run_tune(p)


@pytest.mark.parametrize("text", [
    "[1, 2]",
    '{"sgemm": ["v9"]}',
    '{"sgemm": {"v9": {"params": {"BM": "big"}}}}',
    '{"sgemm": {"v9": {"params": {"BM": 128}, "by_shape": {"huge": {"params": {}}}}}}',
    '{"sgemm": {"v9": {"params": {"BM": 128}, "by_shape": {"64x64x64": {"params": [128]}}}}}',
    # the model reads a tuned config's time from its rate: a word there ended `gpulab best` in a traceback
    '{"sgemm": {"v9": {"params": {}, "by_shape": {"64x64x64": {"params": {}, "rate": "fast"}}}}}',
    '{"sgemm": {"v9": {"params": {}, "by_shape": {"64x64x64": {"params": {}, "rate": -3}}}}}',
])
def test_a_tuned_json_of_the_wrong_structure_is_one_line(tmp_path, text):
    (tmp_path / "tuned.json").write_text(text)
    with pytest.raises(GpulabError, match="not a tuned.json gpulab wrote.*re-run gpulab tune"):
        tune.tuned_defaults(get_experiment("sgemm"), tmp_path)


def test_the_committed_tuned_json_reads_clean():
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / "results" / "h200"
    assert tune.load_tuned(folder)["sgemm"]["v9"]["params"]
