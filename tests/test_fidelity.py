"""gpulab.jobs.fidelity on a CPU: the plan, the comparison rules (exact counts, hardware counters shown
beside, the DRAM +-15% verdict where the inputs exceed L2), the CSV upsert and the replay,
with a stand-in for gpulab.jobs.profile.profile that answers with chosen counters."""

import dataclasses
import math
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpulab import api
from gpulab.jobs import fidelity
from gpulab.errors import GpulabError
from gpulab.experiments import all_experiments, get_experiment
from gpulab import quantities as Q
from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu import ncu_reader
from gpulab.run.lab import RunSpec
from gpulab.params import parse_params_label
from gpulab.records import read_csv, write_csv
from ncu_reports import metric, stub_interface, stub_report

REPO = Path(__file__).resolve().parents[1]
L2 = 62_914_560
INFO = {"device": {"name": "NVIDIA H200", "slug": "h200", "l2_bytes": L2},
        "env": {"gpu": "NVIDIA H200", "arch": "sm_90", "driver": "580", "nvrtc": "13.0", "date": "2026-11-29"}}


def spec(experiment, variant, dims, **params):
    exp = get_experiment(experiment)
    v = exp.variant(variant)
    return RunSpec(exp, v, v.default_params() | params, exp.shape(*dims))


def fake_profile(change=None, dram_read_scale=1.0):
    """A profile whose counters are the model's own predictions, then `change`d."""

    def profile(s, seed=0, **where):
        p = fidelity.predicted_quantities(s)
        # what the model cannot predict, the stand-in card measures as 123
        measured = {q: float(p.get(q, 123)) for q in fidelity.QUANTITIES if not q.endswith("ideal_wavefronts")}
        measured["dram_read_bytes"] *= dram_read_scale
        for k, dv in (change or {}).items():
            measured[k] += dv
        return SimpleNamespace(measured=measured, info=INFO, ncu_version="2025.3.1.0",
                               report_ref=f"reports/{s.experiment.name}-{s.name}-{where.get('job')}.ncu-rep")

    return profile


def by_quantity(result):
    return {r["quantity"]: r for r in result.rows}


def test_the_plan_covers_every_variant_at_its_default_and_ragged_shapes():
    specs = fidelity.plan()
    for exp in all_experiments():
        for v in exp.variants:
            mine = [s for s in specs if s.experiment is exp and s.variant.name == v.name]
            shapes = {s.shape.values for s in mine}
            assert exp.default_shapes[0] in shapes, (exp.name, v.name)
            assert fidelity.ragged_shapes(exp)[0] in shapes, (exp.name, v.name)
            assert all(s.params == v.default_params() for s in mine)
    # The second SGEMM ragged shape (odd sizes: scalar paths) only where it changes the instructions.
    # A variant with no access model cannot say, so it would be measured at every ragged shape.
    odd = [s.variant.name for s in specs if s.shape.values == fidelity.RAGGED_SHAPES["sgemm"][1]]
    # float4 paths that odd sizes turn scalar (sk has none: it loads and stores scalars at any size);
    # v14 (t4's epilogue) copies C out by rows where N % 4 != 0 instead of TMA-storing it
    changes = {"v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v13", "v14", "gt", "gv", "sx"}
    assert odd == [v.name for v in get_experiment("sgemm").variants if v.name in changes or v.access is None]
    assert len(fidelity.plan(["stencil"], ["regs"], "ragged")) == 1
    with pytest.raises(GpulabError, match="no variant named v42"):
        fidelity.plan(["sgemm"], ["v42"])
    with pytest.raises(GpulabError, match="both, default or ragged"):
        fidelity.plan(None, None, "all")


def test_ragged_shapes_cut_every_edge():
    """Each ragged shape is valid and, for every modelled variant, cheap to predict."""
    for exp in all_experiments():
        for dims in fidelity.ragged_shapes(exp):
            exp.shape(*dims)
    sgemm_dims = fidelity.RAGGED_SHAPES["sgemm"]
    assert any(k % 4 == 0 and n % 4 == 0 and m % 128 and n % 128 and k % 8 for m, n, k in sgemm_dims)  # float4 paths
    assert any(k % 4 and n % 4 for m, n, k in sgemm_dims)  # scalar paths


def test_an_exact_run():
    res = fidelity.measure_one(spec("sgemm", "v1", (300, 388, 196)), profile=fake_profile())
    rows = by_quantity(res)
    assert res.exact[0] == res.exact[1] == len(fidelity.COUNTED)
    for q in fidelity.COUNTED:
        assert rows[q]["exact"] is True and rows[q]["verdict"] == "exact" and rows[q]["ratio"] == 1.0
    assert rows["smem_load_requests"]["ncu_metric"] == "smsp__sass_inst_executed_op_shared_ld.sum"
    assert rows["dram_read_bytes"]["verdict"] == "not judged"  # 0.8 MB of inputs fit in L2
    assert rows["dram_read_bytes"]["predicted"] == 4 * (300 * 196 + 196 * 388)
    assert rows["dram_write_bytes"]["predicted"] == 4 * 300 * 388
    first = res.rows[0]
    assert (first["experiment"], first["variant"], first["params"], first["shape"]) == ("sgemm", "v1", "TILE=32", "300x388x196")
    assert first["gpu"] == "NVIDIA H200" and len(first["source_sha"]) == 12


def test_arbitration_in_the_hardware_counters_costs_nothing_and_a_missed_conflict_differs():
    """Arbitration between warps adds wavefronts to the hardware counters and counts them as bank
    conflicts; the judged wavefronts are instrumented, so it reaches only the unjudged hw_ rows."""
    s = spec("sgemm", "v1", (300, 388, 196))
    res = fidelity.measure_one(s, profile=fake_profile({
        "hw_smem_load_wavefronts": 37, "hw_smem_load_bank_conflicts": 37, "gmem_load_sectors": 1}))
    rows = by_quantity(res)
    for q in ("smem_load_wavefronts", "smem_load_bank_conflicts", "smem_load_ideal_wavefronts"):
        assert rows[q]["exact"] is True, q
    for q in ("hw_smem_load_wavefronts", "hw_smem_load_bank_conflicts"):
        assert rows[q]["exact"] is None and rows[q]["verdict"] == "hardware counter"
    assert rows["gmem_load_sectors"]["verdict"] == "differs"
    assert res.exact == (len(fidelity.COUNTED) - 1, len(fidelity.COUNTED))
    assert rows["smem_load_bank_conflicts"]["ncu_metric"] == (
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum - "
        "((l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum - l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum)"
        " - (sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"
        " - sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum))")
    # A conflict the model missed: the instrumented wavefronts are over, so are the conflicts
    # measured from them; the conflict-free (ideal) count still agrees.
    res = fidelity.measure_one(s, profile=fake_profile({"smem_load_wavefronts": 37}))
    rows = by_quantity(res)
    assert rows["smem_load_wavefronts"]["verdict"] == rows["smem_load_bank_conflicts"]["verdict"] == "differs"
    assert rows["smem_load_bank_conflicts"]["measured"] == rows["smem_load_bank_conflicts"]["predicted"] + 37
    assert rows["smem_load_ideal_wavefronts"]["verdict"] == "exact"


def test_an_ideal_above_the_instrumented_wavefronts_is_unmeasurable_never_a_negative_count():
    """t4 at 1536x2560x1000 on the H200 (issue 42): 123,000 instrumented store wavefronts (the
    model's), but the hardware's wavefronts less its conflicts 123,930. The ideal is the one that is
    wrong (it holds wavefronts no instruction issued); the conflicts would read -930. Neither row gets
    a number or a verdict against the model; both say why with the counts; the wavefronts are judged."""
    s = spec("gemm_bf16", "t4", (1536, 2560, 1000))
    # 124,000 hardware wavefronts, 70 of them counted as conflicts: an ideal of 123,930
    res = fidelity.measure_one(s, profile=fake_profile({"hw_smem_store_wavefronts": 1000, "hw_smem_store_bank_conflicts": 70}))
    rows = by_quantity(res)
    assert rows["smem_store_wavefronts"]["predicted"] == 123_000 and rows["smem_store_wavefronts"]["verdict"] == "exact"
    for q in ("smem_store_bank_conflicts", "smem_store_ideal_wavefronts"):
        assert rows[q]["measured"] is None and rows[q]["exact"] is None and rows[q]["verdict"] == "unmeasurable", q
        assert rows[q]["note"].startswith("unmeasurable: the ideal wavefronts (hardware wavefronts - conflicts), "
                                          "123,930, exceed the shared store wavefronts, 123,000, by 930; "), q
    assert not any(isinstance(r["measured"], (int, float)) and r["measured"] < 0 for r in res.rows)
    assert res.exact == (len(fidelity.COUNTED) - 2, len(fidelity.COUNTED) - 2)  # the two are not judged
    # The ideal at or below the wavefronts is a measurement as before.
    ok = by_quantity(fidelity.measure_one(s, profile=fake_profile({"hw_smem_store_bank_conflicts": 0})))
    assert ok["smem_store_bank_conflicts"]["verdict"] == ok["smem_store_ideal_wavefronts"]["verdict"] == "exact"


def test_rejudging_a_recorded_negative_count_makes_it_unmeasurable(tmp_path):
    """results/h200/fidelity.csv held t4 rows recorded with bank conflicts below zero (-1,426 at
    1024^3, 2026-12-02); rejudged, they keep their recorded inputs and lose the number."""
    rows = [r for r in read_csv(REPO / "results" / "h200" / "fidelity.csv")
            if r["variant"] == "t4" and r["shape"] == "1024x1024x1024"
            and r["params"].startswith("BM=128 BN=256 STAGES=4 GROUP_M=8 CLUSTER=2 STORE=1 PINGPONG=0 SCHEDULE=0")]
    assert rows and all((r["measured"] or 0) >= 0 for r in rows)  # none is below zero as recorded today
    for r in rows:  # as they were recorded before
        if r["quantity"] in ("smem_store_bank_conflicts", "smem_store_ideal_wavefronts"):
            r |= {"measured": {"smem_store_bank_conflicts": -1426.0}.get(r["quantity"], 34_226.0), "verdict": "differs",
                  "exact": False, "note": ""}
    again, kept = fidelity.rejudge(rows)
    by = {r["quantity"]: r for r in again}
    assert by["smem_store_bank_conflicts"]["verdict"] == "unmeasurable" and by["smem_store_bank_conflicts"]["measured"] is None
    assert "34,226, exceed the shared store wavefronts, 32,800, by 1,426" in by["smem_store_bank_conflicts"]["note"]
    assert by["hw_smem_store_wavefronts"]["measured"] == 34_664 and by["hw_smem_store_bank_conflicts"]["measured"] == 438


@pytest.mark.parametrize("scale, verdict", [(1.0, "within 15%"), (1.14, "within 15%"), (0.9, "within 15%"),
                                            (1.3, "outside 15%"), (0.5, "outside 15%")])
def test_dram_reads_are_judged_where_the_inputs_exceed_l2(scale, verdict):
    s = spec("coalesce", "cols", (4096, 4096))  # 64 MiB of input, over the 60 MiB L2
    row = by_quantity(fidelity.measure_one(s, profile=fake_profile(dram_read_scale=scale)))["dram_read_bytes"]
    assert row["predicted"] == 4 * 4096 * 4096
    assert row["verdict"] == verdict and "exceed" in row["note"]
    assert row["ratio"] == pytest.approx(scale)


def test_a_variant_without_a_model_is_measured_and_says_so(monkeypatch):
    exp = get_experiment("stencil")
    monkeypatch.setattr(type(exp), "variants", tuple(dataclasses.replace(v, access=None) for v in exp.variants))
    s = spec("stencil", "regs", (100_003,))
    measured = {q: 1.0 for q in fidelity.QUANTITIES}

    res = fidelity.measure_one(s, profile=lambda s, seed=0, **where: SimpleNamespace(measured=measured, info=INFO, ncu_version="", report_ref=""))
    rows = by_quantity(res)
    assert res.exact == (0, 0)
    assert rows["gmem_load_requests"]["verdict"] == "no model" and "no access model" in rows["gmem_load_requests"]["note"]
    assert rows["gmem_load_requests"]["measured"] == 1.0 and rows["gmem_load_requests"]["exact"] is None


def test_a_config_the_model_declines_is_measured_with_its_reason():
    """t4 with SCHEDULE=1 (stream-K flags polled: counts depend on timing): the counters are kept,
    unjudged, and each row says why there is no prediction (not that the model failed)."""
    s = spec("gemm_bf16", "t4", (4096, 4096, 4096), SCHEDULE=1)
    measured = {q: 1.0 for q in fidelity.QUANTITIES}
    res = fidelity.measure_one(s, profile=lambda s, seed=0, **where: SimpleNamespace(measured=measured, info=INFO, ncu_version="", report_ref=""))
    row = by_quantity(res)["tma_load_requests"]
    assert row["verdict"] == "no model" and row["measured"] == 1.0 and row["exact"] is None
    assert row["note"].startswith("t4 SCHEDULE=1 is not modelled") and "failed" not in row["note"]


def test_a_failed_run_is_a_row_and_a_missing_ncu_stops_everything():
    s = spec("stencil", "global", (100_003,))

    def wrong(s, seed=0, **where):
        raise GpulabError("stencil global R=3 100003 computes a wrong answer (3 wrong)")

    res = fidelity.measure_one(s, profile=wrong)
    assert res.error and res.rows[0]["verdict"] == "error" and "wrong answer" in res.rows[0]["note"]

    def no_ncu(s, seed=0, **where):
        raise ncu_mod.NcuNotFound("Nsight Compute (ncu) not found")

    with pytest.raises(ncu_mod.NcuNotFound):
        fidelity.measure_one(s, profile=no_ncu)


def test_nan_counters_are_not_measured():
    s = spec("grayscale", "row", (1001, 333))
    res = fidelity.measure_one(s, profile=fake_profile({"gmem_store_sectors": math.nan}))
    row = by_quantity(res)["gmem_store_sectors"]
    assert row["verdict"] == "not measured" and row["measured"] is None and row["exact"] is None


def test_save_replaces_the_rows_of_the_same_run_and_replay_checks_them(tmp_path):
    path = tmp_path / "fidelity.csv"
    a = fidelity.measure_one(spec("grayscale", "vec4", (1001, 333)), profile=fake_profile())
    b = fidelity.measure_one(spec("coalesce", "rows", (999, 1001)), profile=fake_profile())
    fidelity.save(path, [a, b])
    fidelity.save(path, [fidelity.measure_one(spec("grayscale", "vec4", (1001, 333)),
                                              profile=fake_profile({"gmem_load_sectors": 5}))])
    rows = read_csv(path)
    assert len(rows) == 2 * len(fidelity.QUANTITIES)
    vec4 = {r["quantity"]: r for r in rows if r["variant"] == "vec4"}
    assert vec4["gmem_load_sectors"]["exact"] is False  # the second measurement replaced the first

    failures, checked, skipped = fidelity.replay(rows)
    assert not failures and not skipped
    assert checked == 2 * len(fidelity.COUNTED) - 1  # the quantity that differed is not held to anything

    # A model (or kernel) change that breaks an exact agreement fails the replay, naming it.
    tampered = [dict(r, measured=r["measured"] + 1) if (r["variant"], r["quantity"]) == ("rows", "gmem_load_requests")
                else r for r in rows]
    failures, _, _ = fidelity.replay(tampered)
    assert len(failures) == 1 and "gmem_load_requests" in failures[0] and "coalesce rows VEC=1 999x1001" in failures[0]
    assert "the access model changed" in failures[0]
    moved = [dict(r, source_sha="0123456789ab") for r in tampered]
    assert "kernel source changed" in fidelity.replay(moved)[0][0]

    # A run whose variant is gone is skipped with the reason, not failed.
    gone = [dict(r, variant="v99") for r in rows if r["variant"] == "rows"]
    failures, checked, skipped = fidelity.replay(gone)
    assert not failures and checked == 0 and "no variant 'v99'" in skipped[0]


def test_save_replaces_rows_recorded_before_the_variant_gained_a_param(tmp_path):
    """A row labelled before a param existed is the same run as one labelled with that param at its
    default (lab.config_run_key): measured again, it is replaced, not kept beside the new rows."""
    path = tmp_path / "fidelity.csv"
    res = fidelity.measure_one(spec("coalesce", "rows", (999, 1001)), profile=fake_profile())
    assert res.rows[0]["params"] == "VEC=1"  # the default
    write_csv(path, [dict(r, params="") for r in res.rows])  # the label before VEC existed
    fidelity.save(path, [res])
    rows = read_csv(path)
    assert len(rows) == len(fidelity.QUANTITIES) and {r["params"] for r in rows} == {"VEC=1"}
    # another value of the param is another run: kept
    write_csv(path, [dict(r, params="VEC=4") for r in res.rows])
    fidelity.save(path, [res])
    assert len(read_csv(path)) == 2 * len(fidelity.QUANTITIES)
    # a file that lost its params column is refused, left as it was: its rows are not read as defaults
    write_csv(path, [{k: v for k, v in r.items() if k != "params"} for r in res.rows])
    before = path.read_bytes()
    with pytest.raises(GpulabError, match="params"):
        fidelity.save(path, [res])
    assert path.read_bytes() == before


def test_output_bytes_allocate_nothing():
    exp = get_experiment("coalesce")
    assert fidelity.output_bytes(exp, exp.shape(8192, 8192)) == 4 * 8192 * 8192
    exp = get_experiment("grayscale")
    assert fidelity.output_bytes(exp, exp.shape(7680, 4320)) == 7680 * 4320


def test_parse_params_label_round_trips_the_record_label():
    v = get_experiment("sgemm").variant("v9")
    params = v.default_params()
    assert parse_params_label(v.params_label(params)) == params
    assert parse_params_label("") == {} and parse_params_label(None) == {}


def test_the_command_without_ncu_is_one_line_exit_2(tmp_path):
    env = {**os.environ, "GPULAB_NO_GPU": "1", "GPULAB_NCU": str(tmp_path / "no-ncu")}
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "fidelity", "stencil"], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and "GPULAB_NCU" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()


def test_the_command_end_to_end_with_a_stand_in_profiler(monkeypatch, tmp_path, capsys):
    """`gpulab fidelity stencil --shapes ragged`: every run measured, a table of what differs, the CSV."""
    from gpulab import cli
    from gpulab.jobs import profile as profiling

    calls = []

    def profile(s, seed=0, **where):
        calls.append(s.label)
        change = {"gmem_load_sectors": 3} if s.variant.name == "regs" else {}
        assert where == {"reports_dir": None, "job": "fidelity"}  # results/<gpu>/reports/, decided by the profile
        return fake_profile(change)(s, seed, **where)

    monkeypatch.setattr(profiling, "profile", profile)
    monkeypatch.setattr(api, "find_ncu", lambda env=None: "/fake/ncu")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["gpulab", "fidelity", "stencil", "--shapes", "ragged"])
    cli.main()
    out = capsys.readouterr().out
    runs = len(get_experiment("stencil").variants)
    assert len(calls) == runs
    n = len(fidelity.COUNTED)
    assert f"stencil global R=3 100003: {n}/{n} counted quantities exact" in out
    assert "differs" in out and "gmem_load_sectors" in out
    assert f"{runs - 1} of {runs} modelled runs exact on every counted quantity" in out
    rows = read_csv(tmp_path / "results" / "h200" / "fidelity.csv")
    assert len(rows) == runs * len(fidelity.QUANTITIES)
    assert {r["ncu_report"] for r in rows if r["variant"] == "regs"} == {"reports/stencil-regs-fidelity.ncu-rep"}


def test_every_row_of_a_run_names_the_report_kept_beside_its_csv(tmp_path):
    """The capture's report goes to the reports folder beside the CSV (api.fidelity: --out's), and
    every row of the run names it, relative to the CSV's folder."""
    seen = {}

    def profile(s, seed=0, **where):
        seen.update(where)
        return fake_profile()(s, seed, **where)

    res = fidelity.measure_one(spec("coalesce", "rows", (999, 1001)), profile=profile, reports_dir=tmp_path / "reports")
    assert seen == {"reports_dir": tmp_path / "reports", "job": "fidelity"}
    assert {r["ncu_report"] for r in res.rows} == {"reports/coalesce-rows-fidelity.ncu-rep"}


def test_a_kernel_edited_since_its_measurement_is_named(tmp_path):
    res = fidelity.measure_one(spec("coalesce", "rows", (999, 1001)), profile=fake_profile())
    assert fidelity.changed_kernels(res.rows) == []
    stale = [dict(r, source_sha="0123456789ab") for r in res.rows]
    (line,) = fidelity.changed_kernels(stale)
    assert line.startswith("coalesce rows VEC=1 999x1001 (measured 0123456789ab")


def test_cp_async_wavefronts_are_recorded_but_not_judged():
    """v9's cp.async shared wavefronts have no prediction (the model does not know the rule); a
    kernel without cp.async is predicted to have none, and that is judged."""
    res = fidelity.measure_one(spec("sgemm", "v9", (129, 67, 33)), profile=fake_profile())
    rows = by_quantity(res)
    assert rows["smem_ldgsts_requests"]["verdict"] == "exact" and rows["smem_ldgsts_requests"]["predicted"] > 0
    for q in ("smem_ldgsts_wavefronts", "smem_ldgsts_bank_conflicts"):
        assert rows[q]["predicted"] is None and rows[q]["verdict"] == "not modelled"
    for q in ("smem_gmma_wavefronts", "smem_gmma_bank_conflicts"):  # no wgmma in v9: predicted none
        assert rows[q]["predicted"] == 0
    rows = by_quantity(fidelity.measure_one(spec("sgemm", "v1", (129, 67, 33)), profile=fake_profile()))
    for q in fidelity.MEASURED_ONLY:
        assert rows[q]["predicted"] == 0 and rows[q]["verdict"] == "exact"


def test_rejudge_refreshes_verdicts_and_never_touches_measurements():
    s = spec("stencil", "global", (100_003,))
    rows = fidelity.measure_one(s, profile=fake_profile({"gmem_load_sectors": 5})).rows
    stale = [dict(r) for r in rows]
    for r in stale:
        if r["quantity"] == "gmem_load_requests":  # as if an older model had predicted something else
            r["predicted"], r["exact"], r["verdict"] = 1, False, "differs"
    again, kept = fidelity.rejudge(stale)
    assert kept == []
    assert [(r["quantity"], r["measured"], r["verdict"]) for r in again] == \
        [(r["quantity"], r["measured"], r["verdict"]) for r in rows]
    assert by_quantity(SimpleNamespace(rows=again))["gmem_load_sectors"]["verdict"] == "differs"
    # A run whose kernel changed since it was measured needs the card: left exactly as recorded.
    edited = [dict(r, source_sha="0123456789ab") for r in stale]
    again, kept = fidelity.rejudge(edited)
    assert again == edited and len(kept) == 1 and "measure it again" in kept[0]



def test_hardware_counters_are_shown_beside_the_instrumented_count_never_judged():
    """Store sectors and shared requests are judged by ncu's instrumented counters; the hardware
    counters of the same things (hw_*) carry the prediction and ratio but no verdict of exactness,
    and a hardware count off the prediction does not cost the run its agreement."""
    res = fidelity.measure_one(spec("sgemm", "v9", (129, 67, 33)), profile=fake_profile(
        {"hw_smem_load_requests": 16, "hw_gmem_store_sectors": -7}))
    rows = by_quantity(res)
    assert res.exact[0] == res.exact[1]
    hw = rows["hw_smem_load_requests"]
    assert hw["predicted"] == rows["smem_load_requests"]["predicted"] and hw["measured"] == hw["predicted"] + 16
    assert hw["exact"] is None and hw["verdict"] == "hardware counter" and "not a fixed count" in hw["note"]
    assert rows["hw_gmem_store_sectors"]["ratio"] < 1 and rows["hw_gmem_store_sectors"]["exact"] is None
    assert rows["hw_smem_store_requests"]["note"] == ""  # equal to the prediction: nothing to explain
    assert rows["hw_gmem_store_sectors"]["ncu_metric"] == "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
    assert rows["gmem_store_sectors"]["ncu_metric"] == "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_st.sum"


def test_rejudge_leaves_a_count_recorded_from_another_metric_as_it_was():
    """A quantity gpulab now reads from another ncu metric was not measured the new way: its
    recorded row stays, untouched, and the run is named to be measured again."""
    rows = fidelity.measure_one(spec("sgemm", "v9", (129, 67, 33)), profile=fake_profile(
        {"smem_load_requests": 16})).rows
    old = [dict(r, ncu_metric="smsp__inst_executed_op_shared_ld_pred_on_any.sum")
           if r["quantity"] == "smem_load_requests" else dict(r) for r in rows]
    again, kept = fidelity.rejudge(old)
    (row,) = [r for r in again if r["quantity"] == "smem_load_requests"]
    assert row == next(r for r in old if r["quantity"] == "smem_load_requests")
    assert len(kept) == 1 and "smem_load_requests recorded from another ncu metric" in kept[0]
    assert [r["quantity"] for r in again] == [r["quantity"] for r in old]


def test_rejudge_computes_a_derived_quantity_again_from_the_runs_recorded_inputs():
    """A derived row recorded under an older formula (the load ideal before LDSM was taken out of
    it) is computed again from the run's own recorded rows and judged; none is left as recorded."""
    s = spec("gemm_bf16", "t1", (131, 67, 37))
    ldsm = fidelity.predicted_quantities(s)["smem_ldsm_wavefronts"]
    assert ldsm > 0
    # As the H200 counts: the hardware op_ld count holds the LDSM's wavefronts too.
    rows = fidelity.measure_one(s, profile=fake_profile({"hw_smem_load_wavefronts": ldsm})).rows
    # As it was recorded under the old formula: the ideal with the LDSM's in it.
    old = []
    for r in rows:
        if r["quantity"] == "smem_load_ideal_wavefronts":
            r = dict(r, measured=r["measured"] + ldsm, exact=False, verdict="differs",
                     ncu_metric="l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum - "
                                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
        old.append(dict(r))
    again, kept = fidelity.rejudge(old)
    (row,) = [r for r in again if r["quantity"] == "smem_load_ideal_wavefronts"]
    assert kept == [] and row["verdict"] == "exact" and row["measured"] == row["predicted"]


def test_rejudge_leaves_a_derived_row_whose_inputs_were_not_recorded_as_it_was():
    """A derived row whose inputs are missing from the run (a file edited by hand, a capture that lost
    rows) cannot be computed again: it stays as recorded, and the run is named with that reason."""
    rows = fidelity.measure_one(spec("gemm_bf16", "t1", (131, 67, 37)), profile=fake_profile()).rows
    old = [dict(r) for r in rows if r["quantity"] not in ("hw_smem_load_wavefronts", "hw_smem_load_bank_conflicts")]
    again, kept = fidelity.rejudge(old)
    (row,) = [r for r in again if r["quantity"] == "smem_load_ideal_wavefronts"]
    assert row == next(r for r in old if r["quantity"] == "smem_load_ideal_wavefronts")
    assert len(kept) == 1 and "computed from counts this run did not record" in kept[0]
    assert "smem_load_ideal_wavefronts" in kept[0] and "another ncu metric" not in kept[0]


def _report_of_the_card(tmp_path, s, ref, monkeypatch, change=None):
    """A stand-in of the run's kept report at tmp_path/ref: every metric gpulab asks for, holding the
    model's prediction of its quantity (what the card counted, in these stories) plus `change`, read
    by the stand-in interface."""
    predicted = fidelity.predicted_quantities(s)
    metrics = {Q.BY_KEY[q].metric: metric(v + (change or {}).get(q, 0))
               for q, v in predicted.items() if q in Q.BY_KEY and Q.BY_KEY[q].metric}
    (tmp_path / ref).parent.mkdir(parents=True, exist_ok=True)
    stub_report(tmp_path / ref, [{"name": s.experiment.entry, "metrics": metrics}])
    monkeypatch.setattr(ncu_reader, "find_interface", lambda *a, **kw: stub_interface())
    return predicted


def test_rejudge_reads_a_count_recorded_from_another_metric_again_from_the_runs_report(tmp_path, monkeypatch):
    """The run's kept report holds every metric its capture asked for, the one read now among them:
    the count is read from it and judged, and its row names the metric read now. Without the report
    the row stays as recorded, and the reason says the report is not there."""
    s = spec("sgemm", "v9", (129, 67, 33))
    rows = fidelity.measure_one(s, profile=fake_profile({"smem_load_requests": 16})).rows
    old = [dict(r, ncu_metric="smsp__inst_executed_op_shared_ld_pred_on_any.sum")
           if r["quantity"] == "smem_load_requests" else dict(r) for r in rows]
    predicted = _report_of_the_card(tmp_path, s, old[0]["ncu_report"], monkeypatch)
    again, kept = fidelity.rejudge(old, tmp_path)
    (row,) = [r for r in again if r["quantity"] == "smem_load_requests"]
    assert kept == [] and row["verdict"] == "exact" and row["measured"] == predicted["smem_load_requests"]
    assert row["ncu_metric"] == Q.metric_text("smem_load_requests") and row["ncu_report"] == old[0]["ncu_report"]
    assert [r["quantity"] for r in again] == [r["quantity"] for r in old]

    again, kept = fidelity.rejudge(old, tmp_path / "elsewhere")
    assert next(r for r in again if r["quantity"] == "smem_load_requests") == next(
        r for r in old if r["quantity"] == "smem_load_requests")
    assert len(kept) == 1 and f"its report {old[0]['ncu_report']} is not there" in kept[0]


def test_rejudge_takes_the_inputs_of_a_derived_quantity_the_rows_lack_from_the_report(tmp_path, monkeypatch):
    s = spec("gemm_bf16", "t1", (131, 67, 37))
    rows = fidelity.measure_one(s, profile=fake_profile()).rows
    old = [dict(r) for r in rows if r["quantity"] not in ("hw_smem_load_wavefronts", "hw_smem_load_bank_conflicts")]
    ldsm = next(r["measured"] for r in rows if r["quantity"] == "smem_ldsm_wavefronts")
    # the hardware's op_ld count holds the LDSM's wavefronts (as the H200 counts them)
    _report_of_the_card(tmp_path, s, old[0]["ncu_report"], monkeypatch, {"hw_smem_load_wavefronts": ldsm})
    again, kept = fidelity.rejudge(old, tmp_path)
    (row,) = [r for r in again if r["quantity"] == "smem_load_ideal_wavefronts"]
    assert kept == [] and row["verdict"] == "exact" and row["measured"] == row["predicted"]
    assert {r["quantity"] for r in again} == {r["quantity"] for r in old}  # none added that the run did not record


def test_rejudge_says_when_the_report_cannot_be_read(tmp_path, monkeypatch):
    s = spec("sgemm", "v9", (129, 67, 33))
    rows = fidelity.measure_one(s, profile=fake_profile()).rows
    old = [dict(r, ncu_metric="an.old_metric.sum") if r["quantity"] == "smem_load_requests" else dict(r) for r in rows]
    (tmp_path / "reports").mkdir()
    (tmp_path / old[0]["ncu_report"]).write_text("not a report")
    monkeypatch.setattr(ncu_reader, "find_interface", lambda *a, **kw: stub_interface())
    again, kept = fidelity.rejudge(old, tmp_path)
    assert len(kept) == 1 and "could not be read" in kept[0] and "finds no profiled launch" in kept[0]


# -- a failing ncu, damaged input to --rejudge (nothing lost, nothing silent) ---------------------
def stand_in_ncu(tmp_path, code=3):
    ncu = tmp_path / "ncu"
    ncu.write_text(f"#!/bin/sh\nexit {code}\n")
    ncu.chmod(0o755)
    return ncu


def test_a_failing_ncu_keeps_the_rows_recorded_and_exits_non_zero(tmp_path):
    """GPULAB_NCU pointing at a program that exits 3: both runs fail, the rows already recorded for
    them stay as they were, and the command says so with a non-zero exit."""
    out = tmp_path / "fidelity.csv"
    recorded = [r for shape in ((16_777_216,), (100_003,))
                for r in fidelity.measure_one(spec("stencil", "global", shape), profile=fake_profile()).rows]
    other = fidelity.measure_one(spec("coalesce", "rows", (999, 1001)), profile=fake_profile()).rows
    from gpulab.records import write_csv

    write_csv(out, recorded + other)
    before = out.read_text()
    env = {**os.environ, "GPULAB_NO_GPU": "1", "GPULAB_NCU": str(stand_in_ncu(tmp_path))}
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "fidelity", "stencil", "--variant", "global",
                        "--out", str(out)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 of 2 runs failed" in r.stderr and "were kept" in r.stderr and "Traceback" not in r.stderr
    assert out.read_text() == before


def test_a_failed_run_without_earlier_rows_records_its_error(tmp_path):
    out = tmp_path / "fidelity.csv"
    ok = fidelity.measure_one(spec("coalesce", "rows", (999, 1001)), profile=fake_profile())

    def broken(s, seed=0, **where):
        raise GpulabError("ncu failed (exit 3)")

    failed = fidelity.measure_one(spec("stencil", "global", (100_003,)), profile=broken)
    fidelity.save(out, [ok, failed])
    rows = read_csv(out)
    assert [r["verdict"] for r in rows if r["variant"] == "global"] == ["error"]
    fidelity.save(out, [fidelity.measure_one(spec("stencil", "global", (100_003,)), profile=fake_profile())])
    fidelity.save(out, [failed])  # a later failure does not replace the measurement
    assert "error" not in {r["verdict"] for r in read_csv(out) if r["variant"] == "global"}


@pytest.mark.parametrize("damage, words", [
    (lambda rows: [{k: v for k, v in r.items() if k != "measured"} for r in rows], "column measured"),
    (lambda rows: rows[:0], "no rows"),
])
def test_rejudge_refuses_damaged_input_and_leaves_it(tmp_path, damage, words):
    from gpulab.records import columns_for, to_csv_text

    path = tmp_path / "fidelity.csv"
    rows = fidelity.measure_one(spec("stencil", "global", (100_003,)), profile=fake_profile()).rows
    damaged = damage(rows)
    text = to_csv_text(damaged) if damaged else ",".join(columns_for(rows)) + "\n"  # header only
    path.write_text(text)
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "fidelity", "--rejudge", "--out", str(path)],
                       capture_output=True, text=True, env={**os.environ, "GPULAB_NO_GPU": "1"}, cwd=tmp_path,
                       timeout=300)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert path.read_text() == text


def _rejudge_cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", "fidelity", *args, "--rejudge"], capture_output=True,
                          text=True, env={**os.environ, "GPULAB_NO_GPU": "1"}, cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("damage, words", [
    # a second `variant` column: its cells stood for the first, and every variant cell was rewritten
    (lambda text: text.replace(",note,", ",variant,", 1), "column variant: the header names this column twice"),
    # a quantity gpulab does not compare: its row was dropped and the file rewritten
    (lambda text: text.replace(",gmem_load_requests,", ",no_such_quantity,", 1), "column quantity: 'no_such_quantity'"),
])
def test_rejudge_refuses_a_column_named_twice_and_an_unknown_quantity(tmp_path, damage, words):
    """Issue 42: both were rewritten silently (exit 0); now one line with the line and column, and
    the file as it was."""
    from gpulab.records import to_csv_text

    path = tmp_path / "fidelity.csv"
    rows = fidelity.measure_one(spec("stencil", "global", (100_003,)), profile=fake_profile()).rows
    text = damage(to_csv_text([dict(r, predicted=1) if r["quantity"] == "gmem_load_requests" else r for r in rows]))
    line = next((n for n, cells in enumerate(text.splitlines(), 1) if "no_such_quantity" in cells), 1)
    path.write_text(text)
    r = _rejudge_cli(tmp_path, "--out", str(path))
    assert r.returncode == 2 and f"line {line}, {words}" in r.stderr, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and path.read_text() == text


def test_rejudge_of_named_experiments_leaves_the_others_as_recorded(tmp_path):
    """`gpulab fidelity stencil --rejudge` rejudged every experiment in the file (issue 42): now the
    rows of the experiments (and --variant) it names, the others byte for byte as they were."""
    from gpulab.records import write_csv

    path = tmp_path / "fidelity.csv"
    stale = [dict(r, predicted=1, exact=False, verdict="differs") if r["quantity"] == "gmem_load_requests" else r
             for s in (spec("stencil", "global", (100_003,)), spec("coalesce", "rows", (999, 1001)))
             for r in fidelity.measure_one(s, profile=fake_profile()).rows]
    write_csv(path, stale)
    r = _rejudge_cli(tmp_path, "stencil", "--out", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    verdicts = {r["experiment"]: r["verdict"] for r in read_csv(path) if r["quantity"] == "gmem_load_requests"}
    assert verdicts == {"stencil": "exact", "coalesce": "differs"}
    r = _rejudge_cli(tmp_path, "coalesce", "--variant", "cols", "--out", str(path))
    assert r.returncode == 0 and "nothing changed" in r.stdout, r.stdout + r.stderr
    r = _rejudge_cli(tmp_path, "nope", "--out", str(path))
    assert r.returncode == 2 and "unknown experiment 'nope'" in r.stderr


def test_rejudge_rewrites_only_when_something_changed(tmp_path):
    path = tmp_path / "fidelity.csv"
    rows = fidelity.measure_one(spec("stencil", "global", (100_003,)), profile=fake_profile()).rows
    from gpulab.records import to_csv_text, write_csv

    path.write_text(to_text := to_csv_text(rows))
    mtime = path.stat().st_mtime_ns
    _, _, changed = fidelity.rejudge_file(path)
    assert not changed and path.stat().st_mtime_ns == mtime and path.read_text() == to_text
    stale = [dict(r, predicted=1, exact=False, verdict="differs") if r["quantity"] == "gmem_load_requests" else r
             for r in rows]
    write_csv(path, stale)
    _, _, changed = fidelity.rejudge_file(path)
    assert changed and {r["verdict"] for r in read_csv(path) if r["quantity"] == "gmem_load_requests"} == {"exact"}


def _wavefront_rows(instrumented: float, hardware: float, predicted: int = 99_750) -> dict:
    measured = {q: 0.0 for q in fidelity.QUANTITIES}
    predicted_all = {q: 0 for q in fidelity.QUANTITIES}
    predicted_all.update(smem_load_wavefronts=predicted, smem_load_ideal_wavefronts=predicted,
                         hw_smem_load_wavefronts=predicted, smem_load_bank_conflicts=0)
    measured.update(smem_load_wavefronts=instrumented, hw_smem_load_wavefronts=hardware,
                    smem_load_ideal_wavefronts=float(predicted), smem_load_bank_conflicts=instrumented - predicted)
    return {r["quantity"]: r for r in fidelity.compare(predicted_all, measured, l2_bytes=None)}


def test_a_differing_wavefront_row_says_when_the_hardware_counter_equals_the_model():
    # sgemm v9 STAGES=3 at 300x388x196 on the H200: instrumented 99,825, hardware 99,750 = model
    rows = _wavefront_rows(99_825.0, 99_750.0)
    for q in ("smem_load_wavefronts", "smem_load_bank_conflicts"):
        assert rows[q]["verdict"] == "differs"  # still judged against the instrumented count
        assert "hardware counter equals the model (99,750)" in rows[q]["note"] and "+75" in rows[q]["note"]


def test_no_such_note_when_the_hardware_counter_differs_too():
    rows = _wavefront_rows(99_825.0, 99_826.0)
    assert rows["smem_load_wavefronts"]["verdict"] == "differs"
    assert "hardware" not in rows["smem_load_wavefronts"]["note"]
    assert _wavefront_rows(99_750.0, 99_750.0)["smem_load_wavefronts"]["note"] == ""
