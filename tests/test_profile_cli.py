"""`gpulab profile` and `gpulab compare` as a user meets them, on a machine with no GPU: a scripted
fake ncu (GPULAB_NCU) plays a whole capture (writes the report and the profiled program's info
file, prints a raw CSV on --import), so tables, readings and the CSV record are exercised end to
end; fakes that print ncu's real error texts check the one-line errors and exit code 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpulab.gpu import ncu
from gpulab.quantities import STALL_REASONS, metric_names, stall_metric
from gpulab.records import read_csv

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"

# The numbers of sgemm v0 / v1 with 16 x 16 blocks at 512^3 on the H200 (tests/fixtures/ncu), rounded.
BASE = {
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 8192, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 32768,
    "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_st.sum": 32768,
    "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum": 1048576, "dram__bytes_write.sum": 0,
    "lts__t_sector_hit_rate.pct": 95.0, "sm__warps_active.avg.pct_of_peak_sustained_active": 80.0,
    "sm__warps_active.avg.per_cycle_active": 51.0, "smsp__issue_active.avg.pct_of_peak_sustained_active": 42.0,
    **{stall_metric(r): 0.1 for r in STALL_REASONS}, stall_metric("selected"): 1.0,
}
VALUES = {
    "v0": BASE | {
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 8388608,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 16777216,
        "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum": 536870912,
        "smsp__inst_executed_op_shared_ld_pred_on_any.sum": 0, "smsp__sass_inst_executed_op_shared_ld.sum": 0,
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 0, "dram__bytes_read.sum": 2103808,
        "dram__throughput.avg.pct_of_peak_sustained_elapsed": 18.1, "gpu__time_duration.sum": 58592,
        "l1tex__t_sector_hit_rate.pct": 88.6, "smsp__warps_eligible.avg.per_cycle_active": 1.32,
        stall_metric("long_scoreboard"): 9.5, stall_metric("lg_throttle"): 3.0,
    },
    "v1": BASE | {
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 524288,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 2097152,
        "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum": 67108864,
        "smsp__inst_executed_op_shared_ld_pred_on_any.sum": 5242880, "smsp__sass_inst_executed_op_shared_ld.sum": 5242880,
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 6294748,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 3292,
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 6294748, "dram__bytes_read.sum": 2101504,
        "dram__throughput.avg.pct_of_peak_sustained_elapsed": 9.6, "gpu__time_duration.sum": 44256,
        "l1tex__t_sector_hit_rate.pct": 3.2, "smsp__warps_eligible.avg.per_cycle_active": 1.57,
        stall_metric("long_scoreboard"): 7.75, stall_metric("mio_throttle"): 9.9, stall_metric("gmma"): "n/a",
    },
}
INFO = {
    "device": {"name": "Fake GPU", "slug": "fake-gpu", "arch": "sm_90", "l2_bytes": 62914560, "sm_count": 132},
    "occupancy": {"blocks_per_sm": 8, "warps_per_block": 8, "max_warps_per_sm": 64,
                  "theoretical_occupancy_pct": 100.0, "occupancy_limiter": "warps, registers"},
    "resources": {"reg_per_thread": 32, "smem_static_bytes": 2048},
    "launch": {"grid": [4, 4, 1], "block": [16, 16, 1], "smem_dynamic_bytes": 0},
    "launches": {"check": 1, "warmup": 2, "captured": 3},
    "check": {"correct": True, "max_rel_err": 1e-7, "wrong_count": 0},
    "env": {"gpu": "Fake GPU", "arch": "sm_90", "driver": "580.159.04", "date": "2026-11-29T00:00:00+00:00"},
}

FAKE = '''#!{python}
"""A stand-in for ncu: capture writes the report (holding the variant's name) and the program's
info file; --import prints a raw CSV (header, units, one launch) of that variant's numbers."""
import json, sys
from pathlib import Path
args = sys.argv[1:]
if "--version" in args:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0 (build 36398880)")
    sys.exit(0)
values = json.loads(Path({values!r}).read_text())
if "--page" in args and args[args.index("--page") + 1] == "source":  # --sass: the recorded source page
    Path(args[args.index("--log-file") + 1]).write_text(Path({source!r}).read_text())
    sys.exit(0)
recorded = {recorded!r}  # variant -> (raw CSV, info) of a real capture (tests/fixtures/ncu)
if "--import" in args:
    variant = Path(args[args.index("--import") + 1]).read_text().strip()
    if variant in recorded:
        print(Path(recorded[variant][0]).read_text(), end="")
        sys.exit(0)
    names = {names!r}
    ident = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
             "Block Size", "Grid Size", "Device", "CC"]
    def fmt(v):
        return v if isinstance(v, str) else f"{{v:,}}"
    def row(cells):
        return ",".join('"' + str(c) + '"' for c in cells)
    print(row(ident + names))
    print(row([""] * len(ident) + ["" for _ in names]))
    print(row(["0", "1", "python3", "127.0.0.1", "sgemm", "1", "7", "(16, 16, 1)", "(4, 4, 1)", "0", "9.0"]
              + [fmt(values[variant].get(n, 1234.5)) for n in names]))
    sys.exit(0)
export = Path(args[args.index("--export") + 1])
info = Path(args[args.index("--info") + 1])
variant = args[args.index("gpulab.run.ncu_child") + 2]
if variant in recorded:  # a library's call is captured by its profiler range, never by a kernel name
    if args[args.index("--profile-from-start") + 1] != "off" or "--kernel-name" in args:
        print("==WARNING== No kernels were profiled.")
        sys.exit(0)
    info.write_text(Path(recorded[variant][1]).read_text())
else:
    info.write_text(json.dumps({info!r}))
export.write_text(variant)
print("==PROF== Connected to process 1 (python3)")
print("gpulab.run.ncu_child: the program's own line")
print("==PROF== Disconnected from process 1")
'''


@pytest.fixture
def fake_ncu(tmp_path) -> Path:
    values = tmp_path / "values.json"
    values.write_text(json.dumps(VALUES))
    script = tmp_path / "fake-ncu"
    source = FIXTURES / "sgemm_v9_129x67x33_source.csv"
    recorded = {"cublas": (str(FIXTURES / "sgemm_cublas_512_raw.csv"), str(FIXTURES / "sgemm_cublas_512_info.json"))}
    script.write_text(FAKE.format(python=sys.executable, values=str(values), names=metric_names(), info=INFO,
                                  source=str(source), recorded=recorded))
    script.chmod(0o755)
    return script


def gpulab(*args, cwd, ncu=None, **env):
    full_env = {**os.environ, "GPULAB_NO_GPU": "1", **env}
    if ncu is not None:
        full_env["GPULAB_NCU"] = str(ncu)
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=300)


def test_profile_end_to_end_writes_the_record(tmp_path, fake_ncu):
    r = gpulab("profile", "sgemm", "v1:TILE=16", "--size", "64", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for words in ("sgemm v1 TILE=16 64x64x64 on Fake GPU", "ncu 2025.3.1.0", "launch 4 of 4 captured (1 checked, 2 warm-up)",
                  "Counted quantities",
                  "global load requests", "524,288", "Headline metrics", "Top warp stalls",
                  "top stall MIO throttle: the MIO instruction queue is full",
                  "0.001 extra wavefronts per request", "wrote the record to results/fake-gpu/profile.csv"):
        assert words in out, words
    (row,) = read_csv(tmp_path / "results" / "fake-gpu" / "profile.csv")
    assert row["experiment"] == "sgemm" and row["variant"] == "v1" and row["params"] == "TILE=16"
    assert row["ncu_gmem_load_requests"] == 524288 and row["ncu_gmem_load_sectors_per_request"] == 4
    assert row["ncu_top_stall"] == "mio_throttle" and row["gpu"] == "Fake GPU"
    assert row["ncu_dram_read_bytes"] == 2101504 and row["theoretical_occupancy_pct"] == 100
    assert row["ncu_launch_skip"] == 3 and row["ncu_version"] == "2025.3.1.0"
    assert "time_ms" not in row  # never time under ncu


def test_profile_sass_counts_per_instruction_beside_the_model(tmp_path, fake_ncu):
    r = gpulab("profile", "sgemm", "v1:TILE=16", "--size", "64", "--sass", "--sass-csv", "sass.csv",
               cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    for words in ("memory instructions by kind", "shared load", "global ldgsts", "hottest instructions",
                  "instructions to sass.csv"):
        assert words in r.stdout, words
    rows = read_csv(tmp_path / "sass.csv")
    assert len(rows) > 400 and {"address", "instruction", "executed", "shared_wavefronts"} <= set(rows[0])
    # Where the warps stalled, per instruction and reason (the recorded capture's stall columns).
    stall_columns = [c for c in rows[0] if c.startswith("stall_") and c != "stall_samples"]
    assert "stall_dispatch" in stall_columns and len(stall_columns) > 10
    by_reason = [sum(float(r[c] or 0) for c in stall_columns) for r in rows]
    assert sum(by_reason) > 0
    assert all(abs(total - float(r["stall_samples"] or 0)) < 0.5 for total, r in zip(by_reason, rows))


def test_profile_record_is_replaced_not_duplicated(tmp_path, fake_ncu):
    for variant in ("v1", "v1", "v0"):
        assert gpulab("profile", "sgemm", variant, "--size", "64", cwd=tmp_path, ncu=fake_ncu).returncode == 0
    rows = read_csv(tmp_path / "results" / "fake-gpu" / "profile.csv")
    assert sorted(r["variant"] for r in rows) == ["v0", "v1"]


def test_profile_full_saves_the_report_and_says_how_to_open_it(tmp_path, fake_ncu):
    r = gpulab("profile", "sgemm", "v0", "--size", "64", "--full", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    saved = tmp_path / "results" / "fake-gpu" / "profiles" / "sgemm-v0-BLOCK16-64x64x64.ncu-rep"
    assert saved.exists()
    assert "ncu-ui results/fake-gpu/profiles/sgemm-v0-BLOCK16-64x64x64.ncu-rep" in r.stdout
    assert "ncu -i results/fake-gpu/profiles/" in r.stdout
    r = gpulab("profile", "sgemm", "v0", "--size", "64", "--full", "--out", "mine/v0", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "mine" / "v0.ncu-rep").exists()


def test_compare_side_by_side(tmp_path, fake_ncu):
    r = gpulab("compare", "sgemm", "v0:BLOCK=16", "v1", "--param-b", "TILE=16", "--size", "64",
               "--csv", "cmp.csv", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for words in ("v0 BLOCK=16 -> v1 TILE=16", "global load requests", "↓ 16x", "better",
                  "DRAM throughput", "top stall", "Global load requests fell 16x",
                  "The top stall moved from long scoreboard to MIO throttle", "wrote both records to cmp.csv"):
        assert words in out, words
    # Beyond the key metrics: the counted quantities that moved (v1 reads shared memory, v0 does not),
    # and not those equal on both sides (neither issues cp.async).
    assert "shared load wavefronts" in out and "cp.async" not in out
    assert len(read_csv(tmp_path / "cmp.csv")) == 2


def test_profile_the_vendor_library_from_a_recorded_capture(tmp_path, fake_ncu):
    """`gpulab profile sgemm cublas`: cuBLAS's call at 512^3 on the H200 (tests/fixtures/ncu, recorded by
    scripts/ncu_capture_fixtures.py --library) launched a split-K GEMM and its reduction; the record's
    counts, bytes and duration are the whole call's, its rates and launch facts the GEMM's, the
    reduction is named, and what the compile says of a variant comes from the counters."""
    r = gpulab("profile", "sgemm", "cublas", "--size", "512", cwd=tmp_path, ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    for words in ("sgemm cublas 512x512x512 on NVIDIA H200", "call 4 of 4 captured",
                  "cublas ran sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8", "grid 8x8x4, block 128x1x1",
                  "121 registers", "split_k_kernel", "add up the call's 2 kernels",
                  "no prediction: cublas is the vendor library", "global load requests", "SM clock",
                  "warp instructions executed"):
        assert words in out, words
    (row,) = read_csv(tmp_path / "results" / "h200" / "profile.csv")
    assert row["variant"] == "cublas" and not row["params"] and row["reg_per_thread"] == 121
    assert row["ncu_kernel"].startswith("sm80_xmma_gemm") and "split_k" not in row["ncu_kernel"]
    assert "split_k" in row["ncu_other_kernels"] and row["ncu_kernels"] == 2
    gemm, reduction = ncu.range_launches(ncu.parse_csv((FIXTURES / "sgemm_cublas_512_raw.csv").read_text()))
    for key, metric in (("duration_ns", "gpu__time_duration.sum"), ("warp_instructions", "smsp__inst_executed.sum"),
                        ("gmem_load_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")):
        assert 0 < gemm.get(metric) < row[f"ncu_{key}"] == gemm.get(metric) + reduction.get(metric), key
    assert row["ncu_sm_clock_hz"] == gemm.get("sm__cycles_elapsed.avg.per_second")  # a rate: the GEMM's own
    assert 0 < row["theoretical_occupancy_pct"] <= 100 and row["blocks_per_sm"] >= 1
    assert not any(k.startswith("pred_") and row[k] not in ("", None) for k in row)  # no model, no prediction


def test_compare_a_variant_with_the_vendor_library(tmp_path, fake_ncu):
    r = gpulab("compare", "sgemm", "v1:TILE=16", "cublas", "--size", "512", "--csv", "cmp.csv", cwd=tmp_path,
               ncu=fake_ncu)
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "v1 TILE=16 -> cublas" in out and "cublas ran sm80_xmma_gemm" in out and "warp instructions executed" in out
    assert sorted(row["variant"] for row in read_csv(tmp_path / "cmp.csv")) == ["cublas", "v1"]


@pytest.mark.parametrize("args, words", [
    (("profile", "sgemm", "cublas:BM=64"), "takes no params (drop BM)"),
    (("profile", "sgemm", "cublas", "-p", "TILE=16"), "takes no params (drop TILE)"),
    (("predict", "sgemm", "cublas"), "no access model to predict from"),
    (("profile", "stencil", "cublas"), "has no variant 'cublas'"),
])
def test_the_vendor_library_refuses_what_it_cannot_do(tmp_path, fake_ncu, args, words):
    r = gpulab(*args, cwd=tmp_path, ncu=fake_ncu)
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
    (["profile", "sgemm", "v1", "--out", "x.ncu-rep"], "add --full"),
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
