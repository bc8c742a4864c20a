"""gpulab's best row on a machine with no GPU: the picker's rule (gpulab.jobs.best) on tuned.json tables,
the bench plan that carries the row, and the % of the copy ceiling beside it (gpulab.records.ceilings)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gpulab import api
from gpulab.jobs import bench as bench_job
from gpulab.jobs import best
from gpulab.experiments import get_experiment
from gpulab.experiments.base import Experiment, Param, Variant
from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.splitk import SK_DEFAULTS
from gpulab.records.ceilings import attach_copy
from gpulab.jobs.tune import accepted_params, shape_distance

ROOT = Path(__file__).resolve().parents[1]

V9 = SGEMM.variant("v9").default_params()
SK_GEMV = dict(SK_DEFAULTS["one row"])
SK_TALL = SK_DEFAULTS["few columns"] | {"BK": 16}


def _entry(by_shape: dict) -> dict:
    return {"params": next(iter(by_shape.values()))[0], "by_shape": {
        label: {"params": params, "rate": rate} for label, (params, rate) in by_shape.items()}}


TABLE = {
    "v9": _entry({"4096x4096x4096": (V9, 50000.0), "1024x1024x1024": (V9 | {"STAGES": 4}, 30000.0)}),
    "sk": _entry({"4096x64x4096": (SK_TALL, 20000.0), "1x8192x8192": (SK_GEMV, 2000.0),
                  "512x512x512": (SK_DEFAULTS["few rows"], 9000.0)}),
}


def test_distance_counts_each_dimension_in_log2():
    """The distance the best row and the tuned defaults share."""
    assert shape_distance(SGEMM.shape(4096, 64, 4096), (4096, 32, 4096)) == pytest.approx(1.0)
    assert shape_distance(SGEMM.shape(4096, 64, 4096), (4096, 4096, 4096)) == pytest.approx(6.0)


@pytest.mark.parametrize("shape, variant, why", [
    ((4096, 4096, 4096), "v9", "tuned at 4096x4096x4096"),
    ((4000, 4000, 4000), "v9", "tuned at 4096x4096x4096"),
    ((1024, 1024, 1024), "v9", "tuned at 1024x1024x1024"),
    ((4096, 48, 4096), "sk", "tuned at 4096x64x4096"),  # the class, not the volume: 4096^3 is 6.4 away
    ((1, 8192, 8192), "sk", "tuned at 1x8192x8192"),
    ((1, 4096, 8192), "sk", "tuned at 1x8192x8192"),
])
def test_the_nearest_tuned_shape_picks(shape, variant, why):
    chosen = best.pick(SGEMM, TABLE, SGEMM.shape(*shape))
    assert chosen.variant.name == variant and chosen.why == why
    tuned = TABLE[variant]["by_shape"][why.split()[-1]]["params"]
    assert chosen.params == tuned


def test_a_tie_at_one_shape_goes_to_the_higher_rate():
    table = {"v9": _entry({"512x512x512": (V9, 8000.0)}), "sk": TABLE["sk"]}  # sk ran 9000 there
    assert best.pick(SGEMM, table, SGEMM.shape(512, 512, 512)).variant.name == "sk"
    table["v9"]["by_shape"]["512x512x512"]["rate"] = 12000.0
    assert best.pick(SGEMM, table, SGEMM.shape(512, 512, 512)).variant.name == "v9"


@pytest.mark.parametrize("shape, variant, kind", [
    ((64, 4096, 4096), "sx", "few rows"), ((4096, 64, 4096), "sx", "few columns"),
    ((512, 512, 512), "sx", "few tiles"), ((1, 8192, 8192), "gv", "one row"), ((8192, 2, 8192), "gt", "one column"),
    ((4096, 4096, 4096), "v9", None),
])
def test_nothing_tuned_falls_back_to_the_experiments_default(shape, variant, kind):
    chosen = best.pick(SGEMM, {}, SGEMM.shape(*shape))
    assert chosen.variant.name == variant and chosen.why.startswith("nothing tuned near")
    assert kind is None or chosen.why.endswith(kind)
    if kind is None:
        assert chosen.params == V9
    assert chosen.variant.constraints(chosen.params, SGEMM.shape(*shape)) is None


def test_a_far_tuned_shape_does_not_speak_for_a_skinny_one():
    only_squares = {"v9": TABLE["v9"]}
    chosen = best.pick(SGEMM, only_squares, SGEMM.shape(4096, 64, 4096))  # 6 from 4096^3: too far
    assert chosen.variant.name == "sx" and "nothing tuned near" in chosen.why


def test_entries_the_experiment_cannot_run_are_left_out():
    table = {
        "v99": _entry({"4096x4096x4096": ({"BM": 64}, 99999.0)}),  # a variant this build does not have
        "v11": _entry({"4096x4096x4096": ({"BM": 64, "XX": 1}, 99999.0)}),  # a param it does not have
        "sk": _entry({"4096x4096x4096": (SK_TALL | {"BM": 3}, 99999.0)}),  # a choice it no longer accepts
        "v9": _entry({"4096x4096x4096": (V9, 50000.0)}),
    }
    chosen = best.pick(SGEMM, table, SGEMM.shape(4096, 4096, 4096))
    assert chosen.variant.name == "v9"


def test_a_param_added_after_the_tune_takes_its_default():
    """gemm_bf16's t4 was tuned before it had SCHEDULE: its tuned config still counts, with
    SCHEDULE at its declared default (the schedule the tune timed)."""
    bf16 = get_experiment("gemm_bf16")
    t4 = bf16.variant("t4")
    old = {p.name: p.default for p in t4.params if p.name != "SCHEDULE"} | {"STAGES": 4}
    assert accepted_params(t4, old) == t4.default_params() | {"STAGES": 4}
    assert accepted_params(t4, old | {"SCHEDULE": 7}) is None  # a value it does not offer
    chosen = best.pick(bf16, {"t4": _entry({"4096x4096x4096": (old, 700000.0)})}, bf16.shape(4096, 4096, 4096))
    assert chosen.variant.name == "t4" and chosen.params["SCHEDULE"] == 0 and "tuned at" in chosen.why


def test_any_tuned_variant_counts_not_only_v9():
    """A rung added later (v10 by another branch) wins where it was tuned fastest, by name from the data."""
    v10 = dataclasses.replace(SGEMM.variant("v9"), name="v10")
    exp = type("WithV10", (type(SGEMM),), {"variants": SGEMM.variants + (v10,)})()
    table = {"v9": _entry({"4096x4096x4096": (V9, 50000.0)}), "v10": _entry({"4096x4096x4096": (V9, 52000.0)})}
    assert best.pick(exp, table, exp.shape(4096, 4096, 4096)).variant.name == "v10"


def test_an_experiment_without_a_default_gets_a_best_row_only_where_tuned(tmp_path):
    class Two(Experiment):
        name, dims = "two", ("N",)
        variants = (Variant("a", "a.cu", "", lambda p, s: None),
                    Variant("b", "b.cu", "", lambda p, s: None, params=(Param("X", (1, 2), 2),)),
                    Variant("demo", "d.cu", "", lambda p, s: None, expected_wrong=True))

        def vendor_baselines(self):
            return {}

    two = Two()
    assert best.pick(two, {}, two.shape(100)) is None
    table = {"b": _entry({"128": ({"X": 1}, 5.0)}), "demo": _entry({"100": ({}, 9.0)})}  # a demo never wins
    chosen = best.pick(two, table, two.shape(100))
    assert chosen.variant.name == "b" and chosen.params == {"X": 1}
    assert [s.name for s in bench_job.bench_plan(two, [], {}, [two.shape(4096)], tmp_path, with_best=True)] == []


def test_picker_reads_the_cards_tuned_json(tmp_path):
    (tmp_path / "tuned.json").write_text(json.dumps({"sgemm": TABLE}))
    choose = best.picker(SGEMM, tmp_path)
    assert choose(SGEMM.shape(1, 8192, 8192)).label == "sk (tuned at 1x8192x8192)"
    assert best.picker(SGEMM, None)(SGEMM.shape(1, 8192, 8192)).why.startswith("nothing tuned")


def test_bench_plan_puts_the_best_row_before_the_vendor_rows(tmp_path):
    (tmp_path / "tuned.json").write_text(json.dumps({"sgemm": TABLE}))
    shapes = [SGEMM.shape(4096, 64, 4096), SGEMM.shape(1, 8192, 8192)]
    specs = bench_job.bench_plan(SGEMM, ["v0"], {}, shapes, tmp_path, with_best=True)
    assert [(s.name, s.shape.label) for s in specs] == [
        ("v0", "4096x64x4096"), ("best", "4096x64x4096"), ("cublas", "4096x64x4096"),
        ("v0", "1x8192x8192"), ("best", "1x8192x8192"), ("cublas", "1x8192x8192")]
    row = specs[1].base_record()
    assert row["variant"] == "best" and row["picked"] == "sk (tuned at 4096x64x4096)"
    assert row["params"] == SGEMM.variant("sk").params_label(SK_TALL)
    assert "best" not in [s.name for s in bench_job.bench_plan(SGEMM, ["v0"], {}, shapes, tmp_path, with_best=False)]


def test_the_best_spec_survives_the_trip_to_the_worker(tmp_path):
    import pickle

    spec = bench_job.bench_plan(SGEMM, [], {}, [SGEMM.shape(1, 8192, 8192)], tmp_path, with_best=True)[0]
    back = pickle.loads(pickle.dumps(spec))
    assert back.name == "best" and back.picked == spec.picked and back.params == spec.params


def test_api_best_names_each_shapes_pick(tmp_path):
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "tuned.json").write_text(json.dumps({"sgemm": TABLE}))
    rows = api.best("sgemm", shapes=["4096x4096x4096", "1x8192x8192"], results=tmp_path, gpu="h200")
    assert [(r["variant"], r["picked"]) for r in rows] == [
        ("v9", "v9 (tuned at 4096x4096x4096)"), ("sk", "sk (tuned at 1x8192x8192)")]


def test_pct_of_copy_only_on_memory_bound_shapes():
    from gpulab.records.ceilings import attach
    from gpulab.records.ceilings import load as load_ceilings

    ceilings = load_ceilings(ROOT / "results" / "h200" / "ceilings.csv")  # measured: ridge ~15 flop/byte
    gemv = {"time_ms": 0.1, "gflops": 1300.0, "gbps": 2600.0}  # 0.5 flop/byte
    square = {"time_ms": 3.0, "gflops": 48000.0, "gbps": 70.0}
    rows = attach_copy(attach([gemv, square], SGEMM, ceilings), SGEMM, ceilings)
    assert rows[0]["pct_of_copy"] == pytest.approx(100 * 2600 / ceilings.copy_gbps)
    assert "pct_of_copy" not in rows[1]
    fresh = {"time_ms": 0.1, "gflops": 1300.0, "gbps": 2600.0}
    assert "pct_of_copy" not in attach_copy([fresh], SGEMM, None)[0]
    assert "pct_of_copy" not in attach_copy([dict(fresh)], SGEMM, ceilings)[0]  # no compute ceiling attached


def test_the_readme_block_has_one_line_per_shape_with_the_best_row(tmp_path):
    from gpulab.records import write_csv
    from gpulab.report.markdown import best_block, readme_blocks

    base = {"experiment": "sgemm", "correct": True, "gpu": "NVIDIA H200", "date": "2026-12-01T06:00:00+00:00"}
    rows = [base | {"variant": "best", "picked": "sk (tuned at 1x8192x8192)", "params": "BM=1 BN=32",
                    "shape": "1x8192x8192", "time_ms": 0.07, "gflops": 1917.0, "gbps": 3835.0,
                    "pct_of_cublas": 88.0, "pct_of_copy": 89.2},
            base | {"variant": "cublas", "params": "", "shape": "1x8192x8192", "time_ms": 0.06, "gflops": 2200.0,
                    "gbps": 4400.0},
            base | {"variant": "best", "picked": "v9 (tuned at 4096x4096x4096)", "params": "BM=64",
                    "shape": "4096x4096x4096", "time_ms": 2.9, "gflops": 47000.0, "gbps": 70.0, "pct_of_cublas": 93.0}]
    (tmp_path / "h200").mkdir()
    write_csv(tmp_path / "h200" / "sgemm.csv", rows)
    block = best_block(tmp_path / "h200" / "sgemm.csv")
    assert "| 1x8192x8192 | sk (tuned at 1x8192x8192) BM=1 BN=32 | 1,917 | 88.0% | 89.2% |" in block
    assert "| 4096x4096x4096 | v9 (tuned at 4096x4096x4096) BM=64 | 47,000 | 93.0% |  |" in block
    assert readme_blocks(tmp_path)["h200-sgemm-best"] == block
    write_csv(tmp_path / "h200" / "sgemm.csv", rows[1:2])
    assert "h200-sgemm-best" not in readme_blocks(tmp_path)
