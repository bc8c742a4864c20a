"""`gpulab profile` and `gpulab compare` on a real GPU with Nsight Compute: end to end at small
shapes, every capture one report read through the report interface and kept beside its record, and
the measured global requests equal to the model's prediction where a variant has one; a fidelity
run equal to the counts the card recorded in results/h200/fidelity.csv. Skips (with the reason)
where ncu is not installed or may not read the counters."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpulab.gpu import ncu, ncu_reader
from gpulab.jobs import fidelity
from gpulab.jobs.profile import predicted_counters, profile
from gpulab.records import read_csv
from gpulab.run.args import make_spec

FIDELITY_H200 = Path(__file__).resolve().parents[2] / "results" / "h200" / fidelity.FILE_NAME

pytestmark = pytest.mark.gpu


def _profile(spec, **kw):
    try:
        return profile(spec, **kw)
    except ncu.CountersNotPermitted as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("variant, params, shape", [
    ("v1", {"TILE": 16}, "64x64x64"),
    ("v0", {"BLOCK": 16}, "64x64x64"),
    ("v1", {"TILE": 32}, "100x70x45"),  # ragged: guards cut the edge tiles
])
def test_profile_counts_match_the_prediction(ncu_path, variant, params, shape, tmp_path):
    spec = make_spec("sgemm", variant, params, shape)
    prof = _profile(spec, ncu=ncu_path, reports_dir=tmp_path / "reports")
    m = prof.measured
    # one report, read by the report interface, kept where asked, written by the ncu that captured it
    assert prof.reader.startswith("ncu_report ") and prof.report_path.parent == tmp_path / "reports"
    assert prof.report_ref == f"reports/{prof.report_path.name}" and prof.report_path.stat().st_size > 0
    assert ncu_reader.report_writer(prof.report_path) == prof.ncu_version
    assert prof.info["check"]["correct"] is True
    assert not prof.missing, prof.missing
    assert m["gmem_load_requests"] > 0 and m["gmem_store_requests"] > 0
    assert m["top_stall"]
    assert 0 < prof.info["occupancy"]["theoretical_occupancy_pct"] <= 100
    predicted, note = predicted_counters(spec)
    if predicted is None:
        pytest.skip(f"no prediction to compare with: {note}")
    for key in ("gmem_load_requests", "gmem_load_sectors", "gmem_store_requests", "gmem_store_sectors",
                "smem_load_wavefronts", "smem_load_bank_conflicts", "smem_load_ideal_wavefronts"):
        assert m[key] == predicted[key], (key, m[key], predicted[key])


def test_matmul_profile_counts_at_512(ncu_path, tmp_path):
    """The predicted table of matmul_profile.cu (docs/SOURCES.md), measured: 16 x 16 naive and tiled SGEMM at 512^3."""
    for variant, params, requests, sectors in (("v0", {"BLOCK": 16}, 8_388_608, 16_777_216),
                                               ("v1", {"TILE": 16}, 524_288, 2_097_152)):
        prof = _profile(make_spec("sgemm", variant, params, "512x512x512"), ncu=ncu_path, reports_dir=tmp_path)
        assert (prof.measured["gmem_load_requests"], prof.measured["gmem_load_sectors"]) == (requests, sectors)


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=dict(os.environ), timeout=600)


def test_cli_profile_end_to_end(ncu_path, tmp_path):
    r = _cli("profile", "sgemm", "v1", "--size", "64", "--csv", str(tmp_path / "p.csv"), cwd=tmp_path)
    if "ERR_NVGPUCTRPERM" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    assert "Counted quantities" in r.stdout and "Top warp stalls" in r.stdout
    (row,) = read_csv(tmp_path / "p.csv")
    assert row["variant"] == "v1" and row["ncu_gmem_load_requests"] > 0 and row["ncu_top_stall"]
    assert (tmp_path / row["ncu_report"]).is_file()  # the report, beside the CSV its row joined


def test_cli_profile_sass_csv_has_the_stalls_by_reason(ncu_path, tmp_path):
    r = _cli("profile", "sgemm", "v9", "--size", "512", "--sass", "--sass-csv", str(tmp_path / "sass.csv"),
             "--csv", str(tmp_path / "p.csv"), cwd=tmp_path)
    if "ERR_NVGPUCTRPERM" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    rows = read_csv(tmp_path / "sass.csv")
    reasons = [c for c in rows[0] if c.startswith("stall_") and c != "stall_samples"]
    assert {"stall_selected", "stall_barrier", "stall_dispatch_stall"} <= set(reasons)
    total = sum(float(row["stall_samples"] or 0) for row in rows)
    by_reason = sum(float(row[c] or 0) for row in rows for c in reasons)
    assert total > 0 and abs(by_reason - total) <= 0.01 * total  # the reasons account for the samples


def test_a_fidelity_run_counts_what_the_card_recorded(ncu_path, tmp_path):
    """sgemm v1 at 512^3 through the report: every count results/h200/fidelity.csv holds as exact (measured
    through ncu's CSV before gpulab read reports) is counted again, the same."""
    spec = make_spec("sgemm", "v1", {}, "512x512x512")
    recorded = {r["quantity"]: r for r in read_csv(FIDELITY_H200)
                if (r["experiment"], r["variant"], r["params"], r["shape"]) == ("sgemm", "v1", "TILE=32", "512x512x512")
                and r.get("source_sha") == spec.source_sha() and r.get("exact") is True}
    if not recorded:
        pytest.skip("results/h200/fidelity.csv holds no exact row of sgemm v1 TILE=32 512x512x512 on today's source")
    res = fidelity.measure_one(spec, reports_dir=tmp_path / "reports")
    if res.error and "ERR_NVGPUCTRPERM" in res.error:
        pytest.skip(res.error)
    assert not res.error, res.error
    rows = {r["quantity"]: r for r in res.rows}
    for q, then in recorded.items():
        assert rows[q]["measured"] == then["measured"] and rows[q]["exact"] is True, q
    assert {r["ncu_report"] for r in res.rows} == {"reports/sgemm-v1-TILE32-512x512x512-fidelity.ncu-rep"}
    assert (tmp_path / "reports" / "sgemm-v1-TILE32-512x512x512-fidelity.ncu-rep").is_file()


def test_cli_profile_full_saves_a_report(ncu_path, tmp_path):
    r = _cli("profile", "sgemm", "v0", "--size", "64", "--full", "--out", str(tmp_path / "v0"),
             "--csv", str(tmp_path / "p.csv"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "v0.ncu-rep").stat().st_size > 0
    assert "ncu-ui" in r.stdout


def test_cli_compare_v0_v1(ncu_path, tmp_path):
    r = _cli("compare", "sgemm", "v0:BLOCK=16", "v1:TILE=16", "--size", "256", "--csv", str(tmp_path / "c.csv"),
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Global load requests fell 16x" in r.stdout
    assert "top stall" in r.stdout


@pytest.mark.parametrize("experiment", ["sgemm", "gemm_bf16"])
def test_profile_the_vendor_library_call(ncu_path, experiment, tmp_path):
    """`cublas` in a variant's place: the library's one call captured between cudaProfilerStart and
    Stop, whatever kernel it picked, with what the compile would have said read from the counters."""
    spec = make_spec(experiment, "cublas", {}, "512x512x512")
    prof = _profile(spec, ncu=ncu_path, reports_dir=tmp_path)
    m, info = prof.measured, prof.info
    assert info["check"]["correct"] is True
    assert prof.kernel and prof.kernel != spec.experiment.entry  # the library's own kernel, by its name
    assert m["duration_ns"] > 0 and m["warp_instructions"] > 0 and m["sm_clock_hz"] > 1e8
    assert m["gmem_load_requests"] >= 0 and m["top_stall"]
    assert info["resources"]["reg_per_thread"] > 0 and len(info["launch"]["block"]) == 3
    assert info["occupancy"]["blocks_per_sm"] >= 1 and 0 < info["occupancy"]["theoretical_occupancy_pct"] <= 100
    assert prof.predicted is None and "vendor library" in prof.predicted_note
    row = prof.record()
    assert row["variant"] == "cublas" and row["params"] == "" and row["ncu_kernel"] == prof.kernel
    # Counts and time add up the call's kernels (cuBLAS FP32 at 512^3 on the H200: a split-K GEMM and
    # its reduction); the first kernel's own time is in the raw metrics.
    assert row["ncu_kernels"] == prof.kernels == 1 + len(prof.other_kernels)
    assert m["duration_ns"] == prof.raw["gpu__time_duration.sum"] + sum(ns for _, ns in prof.other_kernels)


def test_cli_compare_a_rung_with_cublas(ncu_path, tmp_path):
    r = _cli("compare", "sgemm", "v9", "cublas", "--size", "512", "--csv", str(tmp_path / "c.csv"), cwd=tmp_path)
    if "ERR_NVGPUCTRPERM" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    assert "cublas ran " in r.stdout and "warp instructions executed" in r.stdout and "SM clock" in r.stdout
    rows = read_csv(tmp_path / "c.csv")
    assert sorted(row["variant"] for row in rows) == ["cublas", "v9"]
    assert all(row["ncu_warp_instructions"] > 0 for row in rows)


def test_cli_profile_the_vendor_library_per_instruction_and_in_full(ncu_path, tmp_path):
    """--sass and --full take the library's call too: its SASS by kind (no model beside it) and a report."""
    r = _cli("profile", "sgemm", "cublas", "--size", "256", "--sass", "--sass-csv", str(tmp_path / "sass.csv"),
             "--full", "--out", str(tmp_path / "cublas"), "--csv", str(tmp_path / "p.csv"), cwd=tmp_path)
    if "ERR_NVGPUCTRPERM" in r.stderr:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    assert "cublas ran " in r.stdout and "memory instructions by kind" in r.stdout
    assert (tmp_path / "cublas.ncu-rep").stat().st_size > 0
    rows = read_csv(tmp_path / "sass.csv")
    assert any("FFMA" in str(row["instruction"]) for row in rows)
