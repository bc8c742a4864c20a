"""gpulab sanitize without a GPU: finding compute-sanitizer, the plan, the command, and the parser.

Where the log texts below come from: compute-sanitizer's report format as published in public bug
reports of its output (memcheck: ggml-org/llama.cpp issue 6948 and muhos/ParaFROST issue 10, both
compute-sanitizer 2023-2024; racecheck: NVIDIA/cccl issue 1903 and kokkos/kokkos issue 6217 for the
'RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)' line; synccheck: ggml-org/llama.cpp
issue 27678; initcheck: NVIDIA/cudf issue 8873), with our kernels' names, offsets and sizes put in.
Every line carries the '========= ' prefix; details are indented four spaces under their headline.
"""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpulab.jobs import sanitize as san
from gpulab.errors import GpulabError
from gpulab.experiments import all_experiments, get_experiment
from gpulab.run.lab import RunSpec

MEMCHECK_OOB = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at sgemm+0x2f0 in /work/tests/gpu/planted/reads_past_k.cu:17
=========     by thread (9,15,0) in block (2,16,0)
=========     Address 0x7f3c1e6a0c9c is out of bounds
=========     and is 4 bytes after the nearest allocation at 0x7f3c1e694000 of size 79,156 bytes
=========
========= Invalid __global__ read of size 4 bytes
=========     at sgemm+0x2f0 in /work/tests/gpu/planted/reads_past_k.cu:17
=========     by thread (10,15,0) in block (2,16,0)
=========     Address 0x7f3c1e6a0ca0 is out of bounds
=========     and is 8 bytes after the nearest allocation at 0x7f3c1e694000 of size 79,156 bytes
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaDeviceSynchronize.
=========
========= ERROR SUMMARY: 1,093 errors
========= ERROR SUMMARY: 1,073 errors were not printed. Use --print-limit option to adjust the number of printed errors
"""

MEMCHECK_CLEAN = """\
========= COMPUTE-SANITIZER
========= ERROR SUMMARY: 0 errors
"""

RACECHECK_NOSYNC = """\
========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at stencil+0x1c0 in /src/gpulab/experiments/stencil/demo_nosync.cu:22
=========     and Read access at stencil+0x2b0 in /src/gpulab/experiments/stencil/demo_nosync.cu:30 [1,536 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""

RACECHECK_WARNING_ONLY = """\
========= COMPUTE-SANITIZER
========= Warning: Race reported between Read access at stencil+0x1f20 in /src/kernel.cu:249
=========     and Write access at stencil+0x14b0 in /src/kernel.cu:349 [4 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)
"""

SYNCCHECK = """\
========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in block
=========     at sgemm+0x4a0 in /src/kernel.cu:31
=========     by thread (0,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 4,000 errors
"""

INITCHECK = """\
========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at grayscale+0x150 in /src/kernel.cu:12
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7fc406200400
=========
========= ERROR SUMMARY: 1 error
"""


def test_memcheck_out_of_bounds_count_and_first_report():
    r = san.parse_log(MEMCHECK_OOB)
    assert r.errors == 1093 and r.warnings == 0
    assert r.first == "Invalid __global__ read of size 4 bytes; at sgemm+0x2f0 in /work/tests/gpu/planted/reads_past_k.cu:17"


def test_a_clean_log_has_zero_errors_and_no_report():
    assert san.parse_log(MEMCHECK_CLEAN) == san.Report(0, 0, "")


def test_racecheck_summary_gives_errors_and_warnings():
    r = san.parse_log(RACECHECK_NOSYNC)
    assert (r.errors, r.warnings) == (1, 0)
    assert r.first.startswith("Error: Race reported between Write access at stencil+0x1c0")
    assert r.first.endswith("and Read access at stencil+0x2b0 in /src/gpulab/experiments/stencil/demo_nosync.cu:30 [1,536 hazards]")
    w = san.parse_log(RACECHECK_WARNING_ONLY)
    assert (w.errors, w.warnings) == (0, 1) and w.first.startswith("Warning: Race reported")


@pytest.mark.parametrize("text, errors, headline", [
    (SYNCCHECK, 4000, "Barrier error detected. Divergent thread(s) in block"),
    (INITCHECK, 1, "Uninitialized __global__ memory read of size 4 bytes"),
])
def test_synccheck_and_initcheck(text, errors, headline):
    r = san.parse_log(text)
    assert r.errors == errors and r.first.startswith(headline + "; at ")


def test_no_summary_is_none_not_zero():
    assert san.parse_log("========= COMPUTE-SANITIZER\n========= Invalid __global__ read of size 4 bytes\n").errors is None
    assert san.parse_log("").errors is None


def _spec(experiment="stencil", variant="nosync"):
    exp = get_experiment(experiment)
    v = exp.variant(variant)
    return RunSpec(exp, v, v.default_params(), san.sanitize_shape(exp))


@pytest.mark.parametrize("tool, report, expected, fails", [
    ("racecheck", san.Report(1, 0, "Error: Race"), "hazard reported (a demonstration)", False),
    ("racecheck", san.Report(0, 0, ""), "MISSED: the demonstration's hazard was not reported", True),
    ("memcheck", san.Report(0, 0, ""), "clean", False),
    ("initcheck", san.Report(49, 0, "Uninitialized"), "reported in a demonstration (not judged)", False),
])
def test_verdicts_for_the_demonstration(tool, report, expected, fails):
    row = _spec().base_record() | {"tool": tool}
    row["verdict"] = san.verdict(row, report)
    assert row["verdict"] == expected and san.failed(row) is fails


@pytest.mark.parametrize("tool", ["memcheck", "initcheck"])
def test_a_correct_variant_with_errors_fails(tool):
    row = _spec("stencil", "shared").base_record() | {"tool": tool}
    row["verdict"] = san.verdict(row, san.Report(2, 0, "Invalid"))
    assert row["verdict"] == "ERRORS" and san.failed(row)


def test_a_correct_variant_with_a_racecheck_warning_fails():
    row = _spec("stencil", "shared").base_record() | {"tool": "racecheck"}
    row["verdict"] = san.verdict(row, san.Report(0, 1, "Warning: Race"))
    assert row["verdict"] == "ERRORS" and san.failed(row)


def test_plan_covers_every_variant_and_every_tuned_config_at_ragged_shapes():
    tuned = {"sgemm": {"v9": {"params": {"BM": 64, "BN": 128, "BK": 8, "WM": 32, "WN": 64, "WNITER": 2, "TM": 4,
                                          "TN": 4, "STAGES": 3, "MINB": 2, "GROUP_M": 8},
                              "by_shape": {"4096x4096x4096": {"params": {"BM": 64, "BN": 128, "BK": 8, "WM": 64, "WN": 64,
                                                                         "WNITER": 2, "TM": 4, "TN": 4, "STAGES": 2,
                                                                         "MINB": 2, "GROUP_M": 8}}}}}}
    specs, skipped = san.plan(all_experiments(), tuned, "sm_90")
    assert skipped == []
    names = {(s.experiment.name, s.variant.name) for s in specs}
    assert names == {(e.name, v.name) for e in all_experiments() for v in e.variants}
    v9 = [s for s in specs if s.experiment.name == "sgemm" and s.variant.name == "v9"]
    assert len(v9) == 3  # the default, the tuned best, the tuned best at 4096^3
    for s in specs:
        assert all(d > 1 for d in s.shape.values) and s.library == ""
    assert {s.shape.label for s in specs if s.experiment.name == "sgemm"} == {"257x131x77"}


def test_plan_skips_what_the_card_cannot_run():
    specs, skipped = san.plan([get_experiment("sgemm")], {}, "sm_75")
    why = {s.variant.name: reason for s, reason in skipped}
    assert list(why) == ["v9", "v10", "v11", "v12", "v13", "v14", "sx"]
    assert all("sm_80" in why[name] for name in why if name != "v14") and "sm_90a" in why["v14"]


def test_command_filters_to_the_runs_kernel_and_logs_apart(tmp_path):
    cmd = san.command(Path("/cs"), "racecheck", "stencil", tmp_path / "s.pkl", tmp_path / "s.log")
    assert cmd[:3] == ["/cs", "--tool", "racecheck"]
    assert cmd[cmd.index("--kernel-name") + 1] == "kernel_name=stencil"
    # No launch count: beside the name filter it left the kernel unchecked once other kernels ran first.
    assert "--launch-count" not in cmd
    assert cmd[cmd.index("--log-file") + 1] == str(tmp_path / "s.log")
    assert cmd[-4:] == [sys.executable, "-m", "gpulab.run.sanitize_child", str(tmp_path / "s.pkl")]
    # The harness's own host API errors (cuda-bindings probing entry points) are not the kernel's.
    assert cmd[cmd.index("--report-api-errors") + 1] == "no"


def test_initcheck_watches_every_kernel(tmp_path):
    """initcheck learns what is initialised only from the kernels it instruments: filtered to ours,
    the copies back of CuPy's results read as uninitialised (H200, 2026-12-01)."""
    cmd = san.command(Path("/cs"), "initcheck", "stencil", tmp_path / "s.pkl", tmp_path / "s.log")
    assert "--kernel-name" not in cmd and "--launch-count" not in cmd


def _fake_sanitizer(tmp_path: Path, log: str, exit_code: int = 0) -> Path:
    """A stand-in compute-sanitizer: writes a recorded log where --log-file says, runs nothing."""
    (tmp_path / "log.txt").write_text(log)
    script = tmp_path / "compute-sanitizer"
    script.write_text(f"""#!{sys.executable}
import shutil, sys
args = sys.argv[1:]
shutil.copy({str(tmp_path / 'log.txt')!r}, args[args.index('--log-file') + 1])
print('{{"correct": true, "detail": ""}}')
sys.exit({exit_code})
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_sanitize_one_makes_the_row_from_the_log(tmp_path):
    fake = _fake_sanitizer(tmp_path, RACECHECK_NOSYNC)
    row = san.sanitize_one(fake, _spec(), "racecheck", tmp_path / "work")
    assert (row["experiment"], row["variant"], row["params"], row["shape"]) == ("stencil", "nosync", "R=3", "100003")
    assert row["tool"] == "racecheck" and row["errors"] == 1 and row["warnings"] == 0
    assert row["verdict"] == "hazard reported (a demonstration)" and row["checked_values"] == "correct"
    assert row["first_report"].startswith("Error: Race reported")


def test_a_sanitizer_that_stops_without_a_summary_is_a_failure(tmp_path):
    fake = _fake_sanitizer(tmp_path, "========= COMPUTE-SANITIZER\n========= Error: Target application terminated before first instrumented API call\n", 1)
    row = san.sanitize_one(fake, _spec("stencil", "shared"), "memcheck", tmp_path / "work")
    assert row["errors"] is None and san.failed(row)
    assert row["verdict"].startswith("no summary from compute-sanitizer (exit 1)")


def test_find_sanitizer_order(tmp_path, monkeypatch):
    fake = _fake_sanitizer(tmp_path, "")
    monkeypatch.setenv("GPULAB_SANITIZER", str(fake))
    assert san.find_sanitizer() == fake
    monkeypatch.setenv("GPULAB_SANITIZER", str(tmp_path / "missing"))
    with pytest.raises(GpulabError, match="GPULAB_SANITIZER=.* is not an executable"):
        san.find_sanitizer()
    monkeypatch.delenv("GPULAB_SANITIZER")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    home = tmp_path / "cuda"
    (home / "bin").mkdir(parents=True)
    monkeypatch.setenv("CUDA_HOME", str(home))
    if not Path("/usr/local/cuda/bin/compute-sanitizer").exists():
        with pytest.raises(GpulabError, match=r"looked at GPULAB_SANITIZER, PATH, \$CUDA_HOME/bin, /usr/local/cuda/bin"):
            san.find_sanitizer()
    os.symlink(fake, home / "bin" / "compute-sanitizer")
    assert san.find_sanitizer() == home / "bin" / "compute-sanitizer"


def test_missing_sanitizer_is_one_line_and_exit_2(tmp_path):
    env = os.environ | {"PATH": str(tmp_path), "CUDA_HOME": str(tmp_path)}
    env.pop("GPULAB_SANITIZER", None)
    if Path("/usr/local/cuda/bin/compute-sanitizer").exists():
        pytest.skip("this machine has /usr/local/cuda/bin/compute-sanitizer")
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "sanitize"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "looked at" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "results").exists()


def test_merge_replaces_only_the_same_run_and_tool():
    old = [{"experiment": "sgemm", "variant": "v1", "params": "TILE=16", "shape": "257x131x77", "tool": t, "errors": 5}
           for t in ("memcheck", "racecheck")]
    new = [{"experiment": "sgemm", "variant": "v1", "params": "TILE=16", "shape": "257x131x77", "tool": "memcheck", "errors": 0}]
    merged = san.merge(old, new)
    assert [(r["tool"], r["errors"]) for r in merged] == [("racecheck", 5), ("memcheck", 0)]


# -- a fault inside the tool, told apart from the kernel's by evidence ---------------------------
RACECHECK_TOOL_FAULT = """\
========= COMPUTE-SANITIZER
========= Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception.
=========
========= ERROR SUMMARY: 1 error
"""


def test_an_internal_sanitizer_error_is_the_tools_own_failure():
    r = san.parse_log(RACECHECK_TOOL_FAULT)
    assert r.errors == 1 and r.tool_error.startswith("Internal Sanitizer Error: The Sanitizer failed")
    assert san.parse_log(RACECHECK_NOSYNC).tool_error == "" and san.parse_log(MEMCHECK_OOB).tool_error == ""


def _row(tool, verdict, outside="", sha="abc", variant="t4", **extra):
    return {"experiment": "gemm_bf16", "variant": variant, "params": "CLUSTER=2", "shape": "17x33x65",
            "source_sha": sha, "tool": tool, "verdict": verdict, "outside_tool": outside,
            "first_report": "Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception." if verdict == san.TOOL_FAULT else "",
            "errors": 1 if verdict != "clean" else 0, "warnings": 0, **extra}


def test_a_tool_fault_with_its_evidence_keeps_its_own_verdict():
    rows = [_row("memcheck", "clean"), _row("racecheck", san.TOOL_FAULT, "correct"), _row("synccheck", "clean")]
    judged = san.judge_tool_faults(rows)
    fault = judged[1]
    assert fault["verdict"] == san.TOOL_FAULT and not san.failed(fault)
    assert fault["evidence"] == ("racecheck stopped inside itself (Internal Sanitizer Error); outside the tool: correct; "
                                 "memcheck: clean; synccheck: clean")
    assert judged[0] is rows[0] and judged[2] is rows[2]  # the other rows are left alone


@pytest.mark.parametrize("rows, why", [
    ([_row("racecheck", san.TOOL_FAULT, "faulted: cudaErrorIllegalAddress")], "outside the tool: faulted"),
    ([_row("racecheck", san.TOOL_FAULT, "wrong: 3 wrong elements")], "outside the tool: wrong"),
    ([_row("memcheck", "ERRORS"), _row("racecheck", san.TOOL_FAULT, "correct")], "memcheck: ERRORS"),
])
def test_without_the_evidence_a_fault_under_the_tool_is_the_kernels_error(rows, why):
    fault = next(r for r in san.judge_tool_faults(rows) if r["tool"] == "racecheck")
    assert fault["verdict"] == "ERRORS" and san.failed(fault) and why in fault["evidence"]


def test_a_tool_fault_takes_recorded_rows_of_the_same_source_as_evidence_and_says_what_was_not_run():
    fault = [_row("racecheck", san.TOOL_FAULT, "correct")]
    recorded = [_row("memcheck", "clean"), _row("synccheck", "ERRORS", sha="older")]  # another kernel source
    (judged,) = san.judge_tool_faults(fault, recorded)
    assert judged["verdict"] == san.TOOL_FAULT
    assert judged["evidence"].endswith("memcheck: clean; synccheck: not run")


def test_sanitize_one_checks_outside_the_tool_only_after_a_tool_fault(tmp_path, monkeypatch):
    outside = []
    monkeypatch.setattr(san, "check_outside", lambda spec_file, timeout_s=0: outside.append(spec_file) or {"correct": True})
    fault = san.sanitize_one(_fake_sanitizer(tmp_path, RACECHECK_TOOL_FAULT), _spec("stencil", "shared"),
                             "racecheck", tmp_path / "a", keep_log=tmp_path / "logs" / "a.log")
    assert fault["verdict"] == san.TOOL_FAULT and fault["outside_tool"] == "correct" and len(outside) == 1
    assert (tmp_path / "logs" / "a.log").read_text() == RACECHECK_TOOL_FAULT  # --logs keeps the log
    (tmp_path / "b").mkdir()
    clean = san.sanitize_one(_fake_sanitizer(tmp_path / "b", MEMCHECK_CLEAN), _spec("stencil", "shared"), "memcheck",
                             tmp_path / "c")
    assert clean["verdict"] == "clean" and clean["outside_tool"] == "" and len(outside) == 1
    assert clean["source_sha"] == _spec("stencil", "shared").source_sha() != ""


def test_select_keeps_the_named_variants_and_configs_and_refuses_what_is_not_planned():
    specs, _ = san.plan([get_experiment("gemm_bf16")], {}, "sm_90")
    t4 = san.select(specs, ["t4"], {"CLUSTER": (2,)})
    assert [s.variant.name for s in t4] == ["t4"] and t4[0].params["CLUSTER"] == 2
    assert san.select(specs, ["t4"], {"CLUSTER": (1,)}) == []  # t4's default is in clusters of two
    with pytest.raises(GpulabError, match="no variant nope to sanitize; planned: d0, kc, ks, t0, t1, t2, t3, t4"):
        san.select(specs, ["nope"], None)
    with pytest.raises(GpulabError, match="no planned run has a param TILE: drop it"):
        san.select(specs, ["t4"], {"TILE": (16,)})


def test_a_kept_log_is_named_by_the_run_and_tool():
    name = san.log_name(_spec("stencil", "nosync"), "racecheck")
    assert name == "stencil-nosync-R=3-100003-racecheck.log"


# -- the card's own logs (tests/fixtures/sanitize/), replayed through the parser ------------------
FIXTURES = Path(__file__).parent / "fixtures" / "sanitize"
CAPTURE = ("bash notebook/device/device_sanitize_models.sh on an H200 writes it to $OUT/sanitize_models/fixtures/; "
           "copy that folder's logs to tests/fixtures/sanitize/")


def _fixture(name: str) -> str:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{path.name} not recorded yet: {CAPTURE}")
    return path.read_text()


@pytest.mark.parametrize("name", ["t4-cluster2-memcheck.log", "t4-cluster2-synccheck.log", "t4-cluster2-initcheck.log",
                                  "racy_v1-memcheck.log"])
def test_the_cards_clean_logs_read_as_clean(name):
    """Logs compute-sanitizer wrote on the H200 for runs it found nothing in."""
    r = san.parse_log(_fixture(name))
    assert (r.errors, r.warnings, r.first, r.tool_error) == (0, 0, "", "")


def test_the_cards_racecheck_of_the_racy_kernel_reads_as_its_race():
    """The planted kernel (tests/gpu/planted/racy_v1.cu) under racecheck on the H200: hazards, the
    first of them in the planted file, nothing of the tool's own."""
    r = san.parse_log(_fixture("racy_v1-racecheck.log"))
    assert r.errors + r.warnings > 0 and r.tool_error == ""
    assert r.first.startswith(("Error: Race reported", "Warning: Race reported")) and "racy_v1.cu" in r.first
    row = {"tool": "racecheck", "expected_wrong": False}
    assert san.verdict(row, r) == "ERRORS"


def test_the_cards_racecheck_of_t4_in_clusters_of_two_reads_as_what_happened():
    """t4 in clusters of two under racecheck on the H200: where the tool failed inside itself the
    parser says so (and the row is a provisional TOOL_FAULT); otherwise a summary like any other."""
    text = _fixture("t4-cluster2-racecheck.log")
    r = san.parse_log(text)
    assert r.errors is not None
    if "Internal Sanitizer Error" in text:
        assert r.tool_error.startswith("Internal Sanitizer Error") and r.first.startswith("Internal Sanitizer Error")
        assert san.verdict({"tool": "racecheck"}, r) == san.TOOL_FAULT
    else:
        assert r.tool_error == ""


# -- what can be sanitized: your own experiments and kernels, as every command takes them --------
def test_an_experiment_on_gpulab_path_is_planned_at_its_own_small_ragged_shape(monkeypatch):
    monkeypatch.setenv("GPULAB_PATH", str(Path(__file__).resolve().parents[1] / "examples"))
    transpose = get_experiment("transpose")
    specs, skipped = san.plan([transpose], {}, "sm_90")
    assert {s.variant.name for s in specs} == {v.name for v in transpose.variants} and not skipped
    assert all(min(s.shape.values) > 1 for s in specs)  # ragged: more than one element in every dimension


def test_a_kernel_given_with_kernel_is_planned_and_crosses_to_the_child_by_its_file(tmp_path):
    """The racy user kernel of issue 42 (tests/gpu/planted/racy_v1.cu), added with --kernel: planned
    at sgemm's sanitize shape, and the spec the child unpickles rebuilds the experiment from the file."""
    import pickle

    racy = Path(__file__).parent / "gpu" / "planted" / "racy_v1.cu"
    exp = get_experiment("sgemm", kernels=(racy,))
    specs, _ = san.plan([exp], {}, "sm_90")
    (spec,) = san.select(specs, ["racy_v1"], None)
    assert spec.shape.label == "257x131x77" and spec.params == {"TILE": 16}
    back = pickle.loads(pickle.dumps(spec))
    assert back.variant.name == "racy_v1" and back.experiment.source(back.variant) == racy.resolve()
    assert back.source_sha() == spec.source_sha()


def test_the_command_takes_kernel_and_param_and_needs_compute_sanitizer(tmp_path):
    env = os.environ | {"PATH": str(tmp_path), "CUDA_HOME": str(tmp_path)}
    env.pop("GPULAB_SANITIZER", None)
    if Path("/usr/local/cuda/bin/compute-sanitizer").exists():
        pytest.skip("this machine has /usr/local/cuda/bin/compute-sanitizer")
    racy = Path(__file__).parent / "gpu" / "planted" / "racy_v1.cu"
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "sanitize", "sgemm", "--kernel", str(racy), "-v", "racy_v1",
                        "-p", "TILE=16", "--tool", "memcheck,racecheck"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and "compute-sanitizer not found" in r.stderr and "Traceback" not in r.stderr
    bad = subprocess.run([sys.executable, "-m", "gpulab.cli", "sanitize", "sgemm", "--tool", "memcheck,nope"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert bad.returncode == 2 and "unknown tool nope: choose from memcheck, racecheck, synccheck, initcheck" in bad.stderr


# -- the card's own logs ----------------------------------------------------------------------------
RECORDED = Path(__file__).parent / "fixtures" / "sanitize"  # README.md there says what ran


@pytest.mark.parametrize("name, errors, warnings, first, tool_error", [
    ("t4-cluster2-memcheck.log", 0, 0, "", ""),
    ("t4-cluster2-racecheck.log", 0, 0, "", ""),
    ("t4-cluster2-synccheck.log", 0, 0, "", ""),
    ("t4-cluster2-initcheck.log", 0, 0, "", ""),
    ("racy_v1-memcheck.log", 0, 0, "", ""),
    ("racy_v1-racecheck.log", 1, 1, "Error: Race reported between Write access at sgemm+0x3a0 in racy_v1.cu:25; "
     "and Read access at sgemm+0x3c0 in racy_v1.cu:28 [39360 hazards]", ""),
    ("reads_past_k-memcheck.log", 27, 0, "Invalid __global__ read of size 4 bytes; at sgemm+0x2c0 in reads_past_k.cu:22", ""),
    ("t4-cluster2-launch-count-racecheck.log", 1, 0,
     "Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception.",
     "Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception."),
])
def test_the_parser_reads_logs_the_h200_wrote(name, errors, warnings, first, tool_error):
    """Each log as compute-sanitizer wrote it on the card: the counts from its summary line (the
    memcheck log also says '7 errors were not printed': the count is still the summary's 27), the
    first report with where it is, and a fault of the tool itself told apart."""
    report = san.parse_log((RECORDED / name).read_text())
    assert (report.errors, report.warnings, report.first, report.tool_error) == (errors, warnings, first, tool_error)
    assert report.problem == ""


def test_every_recorded_log_is_parsed_by_a_test():
    tested = {"t4-cluster2-memcheck.log", "t4-cluster2-racecheck.log", "t4-cluster2-synccheck.log",
              "t4-cluster2-initcheck.log", "racy_v1-memcheck.log", "racy_v1-racecheck.log",
              "reads_past_k-memcheck.log", "t4-cluster2-launch-count-racecheck.log"}
    assert {p.name for p in RECORDED.glob("*.log")} == tested


def test_a_new_row_replaces_the_recorded_one_whatever_type_its_shape_came_as():
    """A row read back from the CSV holds a one-dimensional shape as a number, a new row as a label:
    the run is the same, and the new row replaces the old (on 2026-12-04 the stencil's runs were kept
    twice, and the README's block counted 69 runs of 68)."""
    old = {"experiment": "stencil", "variant": "shfl", "params": "R=3", "shape": 100003, "tool": "memcheck"}
    new = old | {"shape": "100003", "verdict": "clean"}
    assert san.merge([old], [new]) == [new]
