"""The sanitizer gate (gpulab.jobs.clean) without a GPU: a stand-in compute-sanitizer answers with a
log per tool, so what the gate runs, caches, writes and decides is checked for real; and the tables
that crown a best row only where the gate found it clean."""

import stat
import sys
from pathlib import Path

import pytest

from gpulab.experiments import get_experiment
from gpulab.jobs import clean
from gpulab.jobs import main as main_job
from gpulab.jobs import sanitize as san
from gpulab.quantities import CLEAN, SANITIZED
from gpulab.records import read_csv
from gpulab.report.tables import best_per_shape, summary_table
from gpulab.run.lab import RunSpec

SGEMM = get_experiment("sgemm")
RACY = Path(__file__).parent / "gpu" / "planted" / "racy_v1.cu"
CLEAN_LOG = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
RACE_LOG = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at sgemm+0x1c0 in racy_v1.cu:23
=========     and Read access at sgemm+0x2b0 in racy_v1.cu:27 [4,480 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""


def stand_in(tmp_path: Path, logs: dict[str, str]) -> tuple[Path, Path]:
    """A compute-sanitizer that writes logs[tool] (else a clean log) and records each call's tool."""
    calls = tmp_path / "calls.txt"
    for tool, text in logs.items():
        (tmp_path / f"{tool}.txt").write_text(text)
    script = tmp_path / "compute-sanitizer"
    script.write_text(f"""#!{sys.executable}
import pathlib, shutil, sys
args = sys.argv[1:]
tool = args[args.index('--tool') + 1]
with open({str(calls)!r}, 'a') as f:
    f.write(tool + '\\n')
log = pathlib.Path({str(tmp_path)!r}) / (tool + '.txt')
out = pathlib.Path(args[args.index('--log-file') + 1])
out.write_text(log.read_text() if log.exists() else {CLEAN_LOG!r})
print('{{"correct": true, "detail": ""}}')
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, calls


def _spec(variant="v1", params=None, shape=(97, 65, 33), exp=SGEMM):
    v = exp.variant(variant)
    return RunSpec(exp, v, params or v.default_params(), exp.shape(*shape))


def test_no_sanitizer_is_a_verdict_not_a_failure(tmp_path):
    gate = clean.Gate(tmp_path, "sm_90", sanitizer=None)  # as where compute-sanitizer is not installed
    verdict = gate.verdict(_spec())
    assert verdict == clean.Verdict(False, "not sanitized: compute-sanitizer not found")
    assert not (tmp_path / "sanitize.csv").exists()


def test_a_config_is_sanitized_once_then_read_from_the_record(tmp_path):
    tool, calls = stand_in(tmp_path, {})
    gate = clean.Gate(tmp_path, "sm_90", {"gpu": "Stand-in"}, sanitizer=tool)
    assert gate.verdict(_spec()) == clean.Verdict(True, CLEAN)
    assert gate.verdict(_spec(shape=(4096, 4096, 4096))) == clean.Verdict(True, CLEAN)  # the config, not the shape
    assert sorted(calls.read_text().split()) == ["memcheck", "racecheck"]
    rows = read_csv(tmp_path / "sanitize.csv")
    spec = _spec()
    assert {(r["tool"], r["verdict"], r["shape"], r["source_sha"], r["gpu"]) for r in rows} == {
        (t, "clean", "257x131x77", spec.source_sha(), "Stand-in") for t in ("memcheck", "racecheck")}
    # A later gate (another bench) reads the record: nothing runs again.
    again = clean.Gate(tmp_path, "sm_90", sanitizer=tool)
    assert again.verdict(_spec()).clean and sorted(calls.read_text().split()) == ["memcheck", "racecheck"]


def test_a_record_of_another_source_is_not_this_kernels(tmp_path):
    tool, calls = stand_in(tmp_path, {})
    spec = _spec()
    old = [spec.base_record() | {"shape": "257x131x77", "tool": t, "errors": 0, "warnings": 0, "verdict": "clean",
                                 "source_sha": "0ld50urce000"} for t in clean.GATE_TOOLS]
    san.save(tmp_path / "sanitize.csv", old)
    assert clean.Gate(tmp_path, "sm_90", sanitizer=tool).verdict(spec).clean
    assert sorted(calls.read_text().split()) == ["memcheck", "racecheck"]  # sanitized again: the kernel changed


def test_the_racy_user_kernel_is_never_clean_and_its_record_decides_without_the_tool(tmp_path):
    tool, _ = stand_in(tmp_path, {"racecheck": RACE_LOG})
    racy = get_experiment("sgemm", kernels=(RACY,))
    spec = _spec("racy_v1", exp=racy)
    verdict = clean.Gate(tmp_path, "sm_90", sanitizer=tool).verdict(spec)
    assert not verdict.clean
    assert verdict.text == ("not clean: racecheck reported 1 error(s): Error: Race reported between Write access at "
                            "sgemm+0x1c0 in racy_v1.cu:23; and Read access at sgemm+0x2b0 in racy_v1.cu:27 [4,480 hazards]")
    later = clean.Gate(tmp_path, "sm_90", sanitizer=None)
    assert later.verdict(spec) == verdict  # where the tool is gone, the recorded race still decides


@pytest.mark.parametrize("outside, words", [
    ({"correct": True}, "not sanitized: racecheck checked nothing (racecheck stopped inside itself (Internal "
                        "Sanitizer Error); outside the tool: correct; memcheck: clean; synccheck: not run)"),
    ({"faulted": "cudaErrorIllegalAddress"}, "not clean: racecheck reported 1 error(s): Internal Sanitizer Error"),
])
def test_a_tool_fault_is_not_clean(tmp_path, monkeypatch, outside, words):
    fault = "========= Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception.\n" \
            "========= ERROR SUMMARY: 1 error\n"
    tool, _ = stand_in(tmp_path, {"racecheck": fault})
    monkeypatch.setattr(san, "check_outside", lambda spec_file, timeout_s=0: outside)
    verdict = clean.Gate(tmp_path, "sm_90", sanitizer=tool).verdict(_spec())
    assert not verdict.clean and verdict.text.startswith(words)


def _bench_rows():
    """One shape: the racy kernel fastest, then v1 at two tiles, cuBLAS; what sweep_specs returns."""
    racy = get_experiment("sgemm", kernels=(RACY,))
    specs = [_spec("racy_v1", exp=racy), _spec("v1", {"TILE": 16}, exp=racy), _spec("v1", {"TILE": 32}, exp=racy)]
    rows = [s.base_record() | {"time_ms": t, "correct": True, "gflops": 1.0 / t, "pct_of_cublas": 100.0 / t}
            for s, t in zip(specs, (0.01, 0.02, 0.03))]
    rows.append({"experiment": "sgemm", "variant": "cublas", "params": "", "shape": "97x65x33", "time_ms": 0.005,
                 "correct": True})
    return racy, specs, rows


def test_vet_best_walks_the_fastest_rows_until_one_is_clean(tmp_path):
    tool, calls = stand_in(tmp_path, {})
    racy, specs, rows = _bench_rows()

    class Gate(clean.Gate):
        def verdict(self, spec):
            if spec.variant.name == "racy_v1":
                return clean.Verdict(False, "not clean: racecheck reported 4,480 error(s)")
            return super().verdict(spec)

    clean.vet_best(rows, specs, Gate(tmp_path, "sm_90", sanitizer=tool), ("cublas",))
    assert [r.get(SANITIZED) for r in rows] == ["not clean: racecheck reported 4,480 error(s)", CLEAN, None, None]
    assert sorted(calls.read_text().split()) == ["memcheck", "racecheck"]  # v1 TILE=16 only; TILE=32 is slower than it
    best = best_per_shape(rows)
    assert best[0]["best"] == "v1 TILE=16" and best[0]["time_ms"] == 0.02
    assert best[0]["passed_over"] == ["racy_v1 TILE=16: not clean: racecheck reported 4,480 error(s)"]


def test_a_row_with_errors_is_never_best_and_the_table_says_why():
    rows = [{"shape": "97x65x33", "variant": "racy_v1", "params": "TILE=16", "time_ms": 0.01, "correct": True,
             SANITIZED: "not clean: racecheck reported 4,480 error(s)"}]
    (best,) = best_per_shape(rows)
    assert best["time_ms"] is None
    assert best["best"] == "none sanitized clean (racy_v1 TILE=16: not clean: racecheck reported 4,480 error(s))"
    table = summary_table(rows, "v0", "best per shape")
    assert [c.header for c in table.columns][-1] == "faster, not best (sanitizer)"


def test_a_row_the_tools_could_not_check_may_be_best_and_says_so():
    """compute-sanitizer missing, or faulting inside itself: no evidence against the kernel either
    way, so the row may be best, and its name says it was not sanitized."""
    for why in ("not sanitized: compute-sanitizer not found",
                "not sanitized: racecheck checked nothing (correct outside the tool; memcheck clean)"):
        rows = [{"shape": "1024", "variant": "t4", "params": "CLUSTER=2", "time_ms": 0.01, "correct": True,
                 SANITIZED: why},
                {"shape": "1024", "variant": "t3", "params": "", "time_ms": 0.02, "correct": True, SANITIZED: CLEAN}]
        (best,) = best_per_shape(rows)
        assert best["time_ms"] == 0.01 and best["best"] == f"t4 CLUSTER=2 ({why})" and best["passed_over"] == []


def test_rows_recorded_before_the_gate_are_taken_as_they_were():
    rows = [{"shape": "1024", "variant": "v1", "params": "", "time_ms": 0.5, "correct": True},
            {"shape": "1024", "variant": "v2", "params": "", "time_ms": 0.7, "correct": True}]
    assert best_per_shape(rows)[0]["best"] == "v1" and best_per_shape(rows)[0]["passed_over"] == []
    assert [c.header for c in summary_table(rows, "v0", "t").columns][-1] == "% cuBLAS"


def test_the_run_summary_skips_a_row_the_gate_refused():
    _, _, rows = _bench_rows()
    rows[0][SANITIZED] = "not clean: racecheck reported 4,480 error(s)"
    rows[1][SANITIZED] = CLEAN
    summary = main_job.summary_row(SGEMM, [r | {"shape": "97x65x33"} for r in rows], "tour", 1.0)
    assert summary["best_variant"] == "v1" and summary["time_ms"] == 0.02


def test_a_tunes_winner_is_the_fastest_clean_config_among_the_first_few(tmp_path):
    tool, calls = stand_in(tmp_path, {})
    configs = [_spec("v1", {"TILE": t}) for t in (8, 16, 32)]

    class Gate(clean.Gate):
        def verdict(self, spec):
            if spec.params["TILE"] == 8:
                return clean.Verdict(False, "not clean: memcheck reported 2 error(s)")
            return super().verdict(spec)

    at, verdict, passed = clean.first_clean(configs, Gate(tmp_path, "sm_90", sanitizer=tool))
    assert (at, verdict.clean) == (1, True)
    assert [(p.params["TILE"], why) for p, why in passed] == [(8, "not clean: memcheck reported 2 error(s)")]
    nothing = clean.Gate(tmp_path / "none", "sm_90", sanitizer=None)
    at, verdict, passed = clean.first_clean(configs, nothing)
    assert (at, verdict.text, passed) == (0, clean.NO_SANITIZER, [])  # written as the fastest, with why


@pytest.mark.parametrize("tries", [1, 2])
def test_a_tune_whose_first_configs_are_all_racy_keeps_the_fastest_with_its_verdict(tmp_path, tries):
    configs = [_spec("v1", {"TILE": t}) for t in (8, 16, 32)]

    class Racy(clean.Gate):
        def verdict(self, spec):
            return clean.Verdict(False, f"not clean: racecheck ({spec.params['TILE']})")

    at, verdict, passed = clean.first_clean(configs, Racy(tmp_path, "sm_90", sanitizer=None), tries=tries)
    assert at == 0 and verdict.text == "not clean: racecheck (8)"
    assert [p.params["TILE"] for p, _ in passed] == [16][:tries - 1]


def test_a_gate_turned_off_checks_nothing_and_every_verdict_says_so(tmp_path):
    from gpulab.experiments.sgemm import EXPERIMENT as SGEMM_EXP

    gate = clean.Gate(tmp_path, "sm_90", {}, sanitizer="find", off="the gate was turned off (--no-sanitize)")
    spec = RunSpec(SGEMM_EXP, SGEMM_EXP.variant("v1"), SGEMM_EXP.variant("v1").default_params(), SGEMM_EXP.shape(64, 64, 64))
    verdict = gate.verdict(spec)
    assert verdict.text == "not sanitized: the gate was turned off (--no-sanitize)" and verdict.may_be_best
    assert not (tmp_path / "sanitize.csv").exists()
