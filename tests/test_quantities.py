"""The one table of measured quantities (gpulab.quantities), the run arguments the CLI and the
child program share (gpulab.run.args), and the CSV upsert by run (gpulab.records.upsert, run_key)."""

import math
from pathlib import Path

import pytest

from gpulab import quantities as Q
from gpulab.errors import GpulabError
from gpulab.gpu import ncu
from gpulab.experiments import get_experiment
from gpulab.run.lab import RunSpec
from gpulab.model.predict import predict
from gpulab.records import read_csv, run_key, upsert
from gpulab.run.args import make_spec, run_argv, single_params, spec_for


def test_keys_are_unique_and_derived_quantities_name_rows_of_the_table():
    assert len(Q.BY_KEY) == len(Q.ALL)
    for q in Q.COUNTED:
        assert (q.metric is None) != (q.derived is None) or q.key == "theoretical_occupancy_pct", q.key
        if q.derived:
            a, op, b = q.derived
            assert a in Q.BY_KEY and b in Q.BY_KEY and op in ("+", "-", "/", "-?"), q.key


def test_every_prediction_key_is_one_the_model_emits():
    """The model emits keys only; the table names them. A v9 launch uses every kind of instruction."""
    exp = get_experiment("sgemm")
    v = exp.variant("v9")
    p = predict(v.access(v.default_params(), exp.shape(129, 67, 33)))
    for q in Q.COUNTED:
        if q.predicted_as:
            assert q.predicted_as in p, q.key


def test_judged_rows_are_held_exactly_and_hardware_rows_are_not():
    held = Q.held_exactly()
    assert "smem_load_wavefronts" in held and "smem_load_bank_conflicts" in held
    assert Q.BY_KEY["smem_load_wavefronts"].metric.startswith("sm__sass_")
    for q in Q.COUNTED:
        if q.key.startswith("hw_"):
            assert q.judged == Q.HARDWARE and q.key not in held and q.predicted_as == q.key.removeprefix("hw_")


def test_derived_quantities_from_metrics():
    m = Q.measure({"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 110.0,
                   "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 12.0,
                   "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 100.0,
                   "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 0.0,
                   "dram__bytes_read.sum": 5.0, "dram__bytes_write.sum": 7.0})
    assert m["smem_load_ideal_wavefronts"] == 98 and m["smem_load_bank_conflicts"] == 2
    assert m["gmem_load_sectors_per_request"] == 0.0  # no requests: no ratio
    assert m["dram_bytes"] == 12
    assert math.isnan(m["smem_store_bank_conflicts"])  # its metrics were not reported
    assert Q.metric_text("dram_bytes") == "dram__bytes_read.sum + dram__bytes_write.sum"


def test_ldmatrix_wavefronts_are_taken_out_of_the_load_ideal():
    """The hardware op_ld counters count LDSM too; the LDS-only ideal and bank conflicts must not
    (gemm_bf16 t0 at 1024^3 on the H200, 2026-12-01: 32,768 LDS wavefronts and 1,048,576 LDSM)."""
    m = Q.measure({"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 1_085_741.0,
                   "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 4_397.0,
                   "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 32_768.0,
                   "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum": 1_048_576.0,
                   "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum": 0.0})
    assert m["smem_load_ideal_wavefronts"] == 32_768 and m["smem_load_bank_conflicts"] == 0
    assert m["smem_load_ideal_wavefronts_with_ldsm"] == 1_081_344


def test_the_child_reads_back_exactly_the_spec_the_parent_holds():
    exp = get_experiment("sgemm")
    v = exp.variant("v9")
    spec = RunSpec(exp, v, v.default_params(), exp.shape(300, 388, 196))
    words = run_argv(spec)
    params = [words[i + 1] for i, w in enumerate(words) if w == "--param"]
    again = spec_for(words[0], words[1], single_params(params), words[words.index("--shape") + 1])
    assert (again.label, again.params) == (spec.label, spec.params)


@pytest.mark.parametrize("variant, params, words", [
    ("v1:TILE=16", {"TILE": 32}, "give it once"),
    ("v1", {"TILE": (8, 16)}, "one config at a time"),
    ("v1:TILE", {}, "NAME=VALUE"),
    (":TILE=16", {}, "names no variant"),
    (None, {}, "named by text"),
    ("v1", 16, "must be a dict"),
    ("v1", {"tile": 16}, "upper case"),
    ("v1", {"TILE": "16"}, "whole numbers"),
])
def test_run_arguments_refuse_what_names_no_single_run(variant, params, words):
    with pytest.raises(GpulabError, match=words):
        spec_for("sgemm", variant, params, "64x64x64")


def test_make_spec_takes_the_first_default_shape():
    assert make_spec("sgemm", "v1", {}, None).shape.values == get_experiment("sgemm").default_shapes[0]


def test_upsert_replaces_the_rows_of_the_same_run_and_keeps_the_others(tmp_path):
    path = tmp_path / "x.csv"
    run = {"experiment": "sgemm", "variant": "v1", "params": "TILE=16", "shape": "64x64x64"}
    upsert(path, [run | {"q": "a", "v": 1}, run | {"q": "b", "v": 2}, run | {"variant": "v0", "q": "a", "v": 3}], run_key)
    upsert(path, [run | {"q": "a", "v": 9}], run_key)
    rows = read_csv(path)
    assert [(r["variant"], r["q"], r["v"]) for r in rows] == [("v0", "a", 3), ("v1", "a", 9)]


def test_a_calls_counts_add_up_over_its_kernels_and_its_rates_do_not():
    """cuBLAS FP32 at 512^3 on the H200 (recorded capture): a split-K GEMM and its reduction. Counts,
    bytes and times are summed, a ratio of sums is recomputed from the sums, and no rate, clock or
    stall is summed."""
    gemm, reduction = ncu.range_launches(ncu.parse_csv(
        (Path(__file__).parent / "fixtures" / "ncu" / "sgemm_cublas_512_raw.csv").read_text()))
    call = Q.measure_call([gemm.metrics, reduction.metrics])
    one, two = Q.measure(gemm.metrics), Q.measure(reduction.metrics)
    for key in ("duration_ns", "warp_instructions", "gmem_store_requests", "gmem_store_sectors", "dram_bytes"):
        assert call[key] == one[key] + two[key] and two[key] > 0, key
    assert call["gmem_store_sectors_per_request"] == call["gmem_store_sectors"] / call["gmem_store_requests"]
    assert call["gmem_store_sectors_per_request"] != one["gmem_store_sectors_per_request"]  # the premise
    assert not {"sm_clock_hz", "l2_hit_rate_pct", "issue_slots_busy_pct", Q.stall_key("barrier")} & set(call)
    assert all(Q.additive(Q.BY_KEY[k]) for k in call) and not Q.additive(Q.BY_KEY["warps_active_per_sm"])
