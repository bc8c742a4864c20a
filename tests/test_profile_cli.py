"""`gpulab profile` and `gpulab compare` as a user meets them, on a machine with no GPU: a stand-in
ncu (GPULAB_NCU) serves the reports recorded on the H200 (tests/fixtures/ncu_reports, written by
scripts/ncu_capture_fixtures.py) and what the profiled program reported there, so the whole path
after the capture runs for real: the report read through the report interface, the tables and
readings, the CSV record and the report kept beside it; each number is held to the report, to the
access model and to the card's recorded fidelity rows. Fakes that print ncu's real error texts
check the one-line errors and exit code 2 (those need no report)."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpulab import quantities as Q
from gpulab.gpu import ncu, ncu_reader
from gpulab.jobs.fidelity import predicted_quantities, spec_from_row
from gpulab.records import read_csv
from gpulab.run.args import make_spec
from ncu_reports import FIXTURES, interface, recorded

FIDELITY_H200 = Path(__file__).resolve().parent.parent / "results" / "h200" / "fidelity.csv"

# The run the child program names -> the recorded fixture the stand-in serves for it.
SERVED = {"sgemm v1": "sgemm_v1_512", "sgemm v9": "sgemm_v9_129x67x33", "sgemm v9 source": "sgemm_v9_129x67x33_source",
          "sgemm cublas": "sgemm_cublas_512"}

FAKE = '''#!{python}
"""A stand-in for ncu serving reports recorded on the H200: a capture copies the recorded report of
the run the child program names into --export, and what that program reported there into --info."""
import json, shutil, sys
from pathlib import Path
args = sys.argv[1:]
fixtures = Path({fixtures!r})
if "--version" in args:
    version = json.loads((fixtures / "MANIFEST.json").read_text())["ncu_version"]
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print(f"Version {{version}} (build 36398880) (public-release)")
    sys.exit(0)
child = args.index("gpulab.run.ncu_child")
experiment, variant = args[child + 1], args[child + 2]
source = "--section" in args and args[args.index("--section") + 1] == "SourceCounters"
name = {served!r}.get(f"{{experiment}} {{variant}}" + (" source" if source else ""))
# a library's call is captured by its profiler range, a kernel by its name after the check and warm-ups
if variant == "cublas":
    taken = "--kernel-name" not in args and args[args.index("--profile-from-start") + 1] == "off"
else:
    taken = args[args.index("--kernel-name") + 1] == experiment and args[args.index("--launch-skip") + 1] == "3"
if name is None or not taken or "--csv" in args:
    print("==PROF== Disconnected from process 1")
    print("==WARNING== No kernels were profiled.")
    sys.exit(0)
shutil.copyfile(fixtures / (name + ".ncu-rep"), args[args.index("--export") + 1])
shutil.copyfile(fixtures / (name + ".json"), args[args.index("--info") + 1])
print("==PROF== Connected to process 1 (python3)")
print("gpulab.run.ncu_child: the program's own line")
print("==PROF== Disconnected from process 1")
'''


@pytest.fixture
def fake_ncu(tmp_path) -> Path:
    """The stand-in, where the recorded reports and an interface to read them are here (else a skip)."""
    for name in SERVED.values():
        recorded(name)
    interface()
    script = tmp_path / "fake-ncu"
    script.write_text(FAKE.format(python=sys.executable, fixtures=str(FIXTURES), served=SERVED))
    script.chmod(0o755)
    return script


def gpulab(*args, cwd, ncu=None, **env):
    full_env = {**os.environ, "GPULAB_NO_GPU": "1", **env}
    if ncu is not None:
        full_env["GPULAB_NCU"] = str(ncu)
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=300)


def recorded_launches(name: str):
    return ncu_reader.read_launches(recorded(name), interface())


def same(a, b) -> bool:
    """Equal to the CSV's precision (six decimals), nan being equal to nan."""
    return (math.isnan(a) and math.isnan(b)) if math.isnan(b) else a == pytest.approx(b, rel=1e-6)


def manifest() -> dict:
    return json.loads((FIXTURES / "MANIFEST.json").read_text())


def card_rows(spec) -> dict[str, dict]:
    """results/h200/fidelity.csv's rows of `spec`'s run by quantity, where they were measured on the
    kernel of today's source ({} otherwise)."""
    rows = [r for r in read_csv(FIDELITY_H200) if r.get("experiment") == spec.experiment.name
            and r.get("variant") == spec.name and r.get("shape") == spec.shape.label]
    same = [r for r in rows if (s := spec_from_row(r)[0]) is not None and s.params == spec.params
            and r.get("source_sha") == spec.source_sha()]
    return {r["quantity"]: r for r in same}


def test_profile_end_to_end_reads_the_report_and_keeps_it_beside_the_record(tmp_path, fake_ncu):
    r = gpulab("profile", "sgemm", "v1", "--size", "512", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    spec = make_spec("sgemm", "v1", {}, "512x512x512")
    out = r.stdout
    for words in (f"{spec.label} on NVIDIA H200", f"ncu {manifest()['ncu_version']}",
                  "launch 4 of 4 captured (1 checked, 2 warm-up)", "Counted quantities", "Headline metrics",
                  "Top warp stalls", "wrote the record to results/h200/profile.csv"):
        assert words in out, words
    assert "full report" not in out  # only a --full capture is one to open in ncu-ui
    (row,) = read_csv(tmp_path / "results" / "h200" / "profile.csv")
    assert (row["experiment"], row["variant"], row["params"]) == ("sgemm", "v1", "TILE=32")
    assert row["ncu_launch_skip"] == 3 and row["ncu_version"] == manifest()["ncu_version"] and row["gpu"] == "NVIDIA H200"
    assert "time_ms" not in row  # never time under ncu
    # the report the row came from, kept beside the CSV and named by the row
    assert row["ncu_report"] == "reports/sgemm-v1-TILE32-512x512x512-profile.ncu-rep"
    kept = tmp_path / "results" / "h200" / row["ncu_report"]
    assert kept.read_bytes() == recorded("sgemm_v1_512").read_bytes()
    # every number of the row is the report's ...
    (launch,) = recorded_launches("sgemm_v1_512")
    measured = Q.measure(launch.metrics)
    for q in Q.COUNTED + Q.HEADLINE:
        if q.metric:
            assert same(row[f"ncu_{q.key}"], measured[q.key]), q.key
    assert f"{row['ncu_gmem_load_requests']:,.0f}" in out
    assert row["ncu_top_stall"] in Q.STALL_REASONS and Q.stall_label(row["ncu_top_stall"]) in out
    # ... and, where the card recorded a count as exact, the model's and the recorded one
    predicted = predicted_quantities(spec)
    for q, card in card_rows(spec).items():
        if card.get("exact") is True:
            assert row[f"ncu_{q}"] == card["measured"] == predicted[q], q


def test_profile_sass_counts_per_instruction_beside_the_model(tmp_path, fake_ncu):
    r = gpulab("profile", "sgemm", "v9", "--shape", "129x67x33", "--sass", "--sass-csv", "sass.csv",
               cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    for words in ("memory instructions by kind", "shared load", "global ldgsts", "hottest instructions",
                  "instructions to sass.csv"):
        assert words in r.stdout, words
    rows = read_csv(tmp_path / "sass.csv")
    assert len(rows) > 100 and {"address", "instruction", "access", "executed", "shared_wavefronts"} <= set(rows[0])
    # where the warps stalled, per instruction and state, in gpulab's names of the states
    stall_columns = [c for c in rows[0] if c.startswith("stall_") and c != "stall_samples"]
    assert {"stall_long_scoreboard", "stall_barrier", "stall_selected"} <= set(stall_columns)
    by_reason = [sum(float(r[c] or 0) for c in stall_columns) for r in rows]
    assert sum(by_reason) > 0
    assert all(abs(total - float(r["stall_samples"] or 0)) < 0.5 for total, r in zip(by_reason, rows))
    # the per-instruction capture's report is kept beside the profile's
    reports = tmp_path / "results" / "h200" / "reports"
    assert sorted(p.name for p in reports.iterdir()) == [
        f"sgemm-v9-{p}-129x67x33-{job}.ncu-rep" for p in ["-".join(f"{k}{v}" for k, v in
                                                            make_spec("sgemm", "v9", {}, "129x67x33").params.items())]
        for job in ("profile", "source")]


def test_profile_record_is_replaced_not_duplicated(tmp_path, fake_ncu):
    for variant, shape in (("v1", "512x512x512"), ("v1", "512x512x512"), ("v9", "129x67x33")):
        assert gpulab("profile", "sgemm", variant, "--shape", shape, cwd=tmp_path, ncu=fake_ncu).returncode == 0
    rows = read_csv(tmp_path / "results" / "h200" / "profile.csv")
    assert sorted(r["variant"] for r in rows) == ["v1", "v9"]
    assert all((tmp_path / "results" / "h200" / r["ncu_report"]).exists() for r in rows)


def test_profile_full_keeps_the_report_and_says_how_to_open_it(tmp_path, fake_ncu):
    r = gpulab("profile", "sgemm", "v1", "--size", "512", "--full", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    name = "results/h200/reports/sgemm-v1-TILE32-512x512x512-profile.ncu-rep"
    assert (tmp_path / name).exists()
    assert f"full report: {name}" in r.stdout and f"ncu-ui {name}" in r.stdout and f"ncu -i {name}" in r.stdout
    r = gpulab("profile", "sgemm", "v1", "--size", "512", "--full", "--out", "mine/v1", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "mine" / "v1.ncu-rep").exists()
    (row,) = read_csv(tmp_path / "results" / "h200" / "profile.csv")
    assert row["ncu_report"] == "mine/v1.ncu-rep"


def test_profile_the_vendor_library_from_a_recorded_capture(tmp_path, fake_ncu):
    """`gpulab profile sgemm cublas`: cuBLAS's call at 512^3 on the H200 (recorded as it ran: a split-K GEMM
    and its reduction when this was written). The record's counts, bytes and duration are the whole
    call's, its rates and launch facts the longest kernel's, the others named, and what the compile
    says of a variant comes from the counters."""
    r = gpulab("profile", "sgemm", "cublas", "--size", "512", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    first, *others = ncu.range_launches(recorded_launches("sgemm_cublas_512"))
    out = " ".join(r.stdout.split())
    grid, block = "x".join(map(str, first.dims("grid"))), "x".join(map(str, first.dims("block")))
    for words in ("sgemm cublas 512x512x512 on NVIDIA H200", "call 4 of 4 captured", f"cublas ran {first.kernel}",
                  f"grid {grid}, block {block}", f"{first.get('launch__registers_per_thread'):.0f} registers",
                  "no prediction: cublas is the vendor library", "global load requests", "SM clock",
                  "warp instructions executed", *(k.kernel for k in others)):
        assert words in out, words
    if others:
        assert f"add up the call's {1 + len(others)} kernels" in out
    (row,) = read_csv(tmp_path / "results" / "h200" / "profile.csv")
    assert row["variant"] == "cublas" and not row["params"] and row["reg_per_thread"] == first.get("launch__registers_per_thread")
    assert row["ncu_kernel"] == first.kernel and row["ncu_kernels"] == 1 + len(others)
    for key, metric in (("duration_ns", "gpu__time_duration.sum"), ("warp_instructions", "smsp__inst_executed.sum"),
                        ("gmem_load_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")):
        assert row[f"ncu_{key}"] == pytest.approx(sum(k.get(metric) for k in (first, *others)), rel=1e-6), key
    assert row["ncu_sm_clock_hz"] == pytest.approx(first.get("sm__cycles_elapsed.avg.per_second"))  # a rate: the first's own
    assert 0 < row["theoretical_occupancy_pct"] <= 100 and row["blocks_per_sm"] >= 1
    assert not any(k.startswith("pred_") and row[k] not in ("", None) for k in row)  # no model, no prediction


def test_compare_a_variant_with_the_vendor_library(tmp_path, fake_ncu):
    r = gpulab("compare", "sgemm", "v1", "cublas", "--size", "512", "--csv", "cmp.csv", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    for words in ("v1 TILE=32 -> cublas", "cublas ran ", "global load requests", "warp instructions executed",
                  "top stall", "wrote both records to cmp.csv"):
        assert words in out, words
    rows = read_csv(tmp_path / "cmp.csv")
    assert sorted(row["variant"] for row in rows) == ["cublas", "v1"]
    # the reports go beside the CSV the records joined
    assert all((tmp_path / row["ncu_report"]).is_file() and row["ncu_report"].startswith("reports/") for row in rows)
    v1, lib = sorted(rows, key=lambda row: row["variant"] != "v1")
    a, b = v1["ncu_gmem_load_requests"], lib["ncu_gmem_load_requests"]
    assert not math.isnan(a) and not math.isnan(b) and a != b and (f"{a:,.0f}" in out and f"{b:,.0f}" in out)


@pytest.mark.parametrize("args, words", [
    (("profile", "sgemm", "cublas:BM=64"), "takes no params (drop BM)"),
    (("profile", "sgemm", "cublas", "-p", "TILE=16"), "takes no params (drop TILE)"),
    (("predict", "sgemm", "cublas"), "no access model to predict from"),
    (("profile", "stencil", "cublas"), "has no variant 'cublas'"),
])
def test_the_vendor_library_refuses_what_it_cannot_do(tmp_path, args, words):
    r = gpulab(*args, cwd=tmp_path, ncu=tmp_path / "never-run")
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("text, words", [
    ("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
     "Counters on the target device 0.\n", "NVreg_RestrictProfilingToAdminUsers=0"),
    ("==PROF== Disconnected from process 1\n==WARNING== No kernels were profiled.\n", "no kernel was profiled"),
    ("==ERROR== Failed to prepare kernel for profiling\n", "ncu failed (exit 1): error: Failed to prepare kernel"),
])
def test_profiler_errors_are_one_line_exit_2(tmp_path, text, words):
    fake = tmp_path / "ncu"
    fake.write_text(f"#!/bin/sh\ncat <<'EOF'\n{text}EOF\nexit 1\n")
    fake.chmod(0o755)
    r = gpulab("profile", "sgemm", "v1", "--size", "64", cwd=tmp_path, ncu=fake)
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert not (tmp_path / "results").exists()


def test_ncu_env_var_pointing_nowhere(tmp_path):
    r = gpulab("profile", "sgemm", "v1", "--size", "64", cwd=tmp_path, ncu=tmp_path / "nope")
    assert r.returncode == 2 and "GPULAB_NCU=" in r.stderr and "not an executable" in r.stderr


@pytest.mark.parametrize("args, words", [
    (["profile", "sgemm", "nosuch"], "no variant 'nosuch'"),
    (["profile", "sgemm", "v1", "--param", "TILE=7"], "not accepted"),
    (["profile", "sgemm", "v1", "--param", "TILE=8,16"], "one config at a time"),
    (["profile", "sgemm", "v1:TILE=16", "--param", "TILE=32"], "give it once"),
    (["profile", "sgemm", "v1:TILE"], "NAME=VALUE"),
    (["profile", "sgemm", "v1", "--param", "BLOCK=16"], "has no param BLOCK"),
    (["profile", "sgemm", "v1", "--size", "64,128"], "one shape at a time"),
    (["profile", "sgemm", "v1", "--out", "x.ncu-rep"], "out is where a full profile saves its report: add full"),
    (["profile", "sgemm", "v1", "--sass-csv", "x.csv"], "add --sass"),
    (["compare", "sgemm", "v1", "v1:TILE=32"], "same run"),
    (["compare", "sgemm", "v0", "v1", "--param-a", "TILE=16"], "has no param TILE"),
])
def test_bad_input_fails_before_ncu_runs(tmp_path, args, words):
    r = gpulab(*args, cwd=tmp_path, ncu=tmp_path / "never-run")
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("command", [["profile", "sgemm", "v1"], ["compare", "sgemm", "v0", "v1"]])
@pytest.mark.parametrize("content, words", [
    ("experiment,params,shape\nsgemm,,64x64x64\n", "lacks the column variant"),
    ("experiment,variant,params,shape\nsgemm,v1,TILE=16,64x6", "cut off"),
])
def test_a_damaged_profile_csv_is_refused_before_ncu_runs(tmp_path, command, content, words):
    """The CSV the records would join is checked first: a damaged one costs one line, not minutes
    under ncu before the save refuses it (ncu here points nowhere: reaching it would say so)."""
    csv = tmp_path / "p.csv"
    csv.write_text(content)
    r = gpulab(*command, "--size", "64", "--csv", "p.csv", cwd=tmp_path, ncu=tmp_path / "never-run")
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert csv.read_text() == content


@pytest.mark.parametrize("args, words", [
    (["sgemm", "v1", "--shape", "64x64x64"], "no NVIDIA GPU"),
    (["sgemm", "nosuch"], "no variant 'nosuch'"),
    (["sgemm", "v1", "--param", "TILE=8,16"], "one config at a time"),
    (["sgemm", "v1:TILE=16", "--param", "TILE=32"], "give it once"),
])
def test_the_child_programs_errors_are_the_line_the_parent_recognizes(tmp_path, args, words):
    from gpulab.gpu.ncu import TARGET_ERROR_PREFIX

    r = subprocess.run([sys.executable, "-m", "gpulab.run.ncu_child", *args], capture_output=True, text=True,
                       env={**os.environ, "GPULAB_NO_GPU": "1"}, cwd=tmp_path, timeout=120)
    assert r.returncode == 2
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith(TARGET_ERROR_PREFIX) and words in line
