"""Faulting and hanging kernels on a real GPU: a sweep survives them (each costs only its row, the
worker is replaced, the command ends non-zero), and compute-sanitizer catches what the value check
cannot (a planted out-of-bounds read whose outputs are all correct) and the nosync demo's race.

The planted kernels (tests/gpu/planted/) join the sweep through a stand-in experiment defined here:
SGEMM's numerics with planted variants. It is a module-level class, so the worker process imports
it by name like any experiment (a RunSpec crosses into the worker by reference)."""

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpulab.experiments import get_experiment
from gpulab.experiments.base import Launch, Variant
from gpulab.gpu.timing import TimingPolicy
from gpulab.run.lab import LabOptions, RunSpec
from gpulab.run.worker import IsolatedLab

SGEMM = get_experiment("sgemm")
PLANTED = Path(__file__).parent / "planted"
ROOT = Path(__file__).resolve().parents[2]
FAST = LabOptions(timing=TimingPolicy(warmup_ms=2.0, target_ms=5.0, min_reps=3, max_reps=10), seed=7)


def _launch16(p, s):
    return Launch((-(-s["N"] // 16), -(-s["M"] // 16), 1), (16, 16, 1))


def _planted(name: str, file: str) -> Variant:
    return Variant(name=name, file=str(PLANTED / file), summary=f"planted: {file}", launch=_launch16)


V1 = SGEMM.variant("v1")


class PlantedSgemm(type(SGEMM)):
    """SGEMM with planted variants beside a healthy one (v1, from its own file)."""

    variants = (
        dataclasses.replace(V1, file=str(SGEMM.source(V1))),
        _planted("illegal_address", "fault_illegal_address.cu"),
        _planted("trap", "fault_trap.cu"),
        _planted("misaligned", "fault_misaligned.cu"),
        _planted("hangs", "hangs.cu"),
        _planted("reads_past_k", "reads_past_k.cu"),
    )


PLANTED_SGEMM = PlantedSgemm()
SHAPE = SGEMM.shape(257, 131, 77)  # K = 77 is no multiple of 16: reads_past_k overruns A's last row


def _spec(name: str, params=None) -> RunSpec:
    v = PLANTED_SGEMM.variant(name)
    return RunSpec(PLANTED_SGEMM, v, params if params is not None else v.default_params(), SHAPE)


# The CUDA error each planted fault ends with (a trap is reported as a launch failure; some drivers
# have called it an illegal instruction).
FAULTS = {"illegal_address": ("cudaErrorIllegalAddress",), "trap": ("cudaErrorLaunchFailure", "cudaErrorIllegalInstruction"),
          "misaligned": ("cudaErrorMisalignedAddress",)}


@pytest.mark.parametrize("name", list(FAULTS))
def test_each_fault_is_a_device_fault_in_process(name):
    """In a process of its own (the fault poisons the context): verify raises DeviceFault."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
            "from test_faults_gpu import _spec\n"
            "from gpulab.errors import DeviceFault\n"
            "from gpulab.run.lab import Lab\n"
            "try:\n"
            f"    Lab().verify(_spec({name!r}))\n"
            "except DeviceFault as exc:\n"
            "    print('FAULT', exc.error)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert any(f"FAULT {error}" in r.stdout for error in FAULTS[name]), r.stdout


def test_a_sweep_survives_faulting_and_hanging_kernels(tmp_path, capsys):
    from gpulab.cli import exit_if_unfinished
    from gpulab.records import read_csv, write_csv

    names = ["v1", "illegal_address", "trap", "misaligned", "hangs", "v1"]
    specs = [_spec(n, {"TILE": 16} if n == "v1" else None) for n in names]
    start = time.monotonic()
    with IsolatedLab(FAST, timeout_s=20.0) as lab:
        rows = [lab.execute(spec) for spec in specs]  # the sweep's loop: a row per run, whatever happens
        path = tmp_path / "sweep.csv"
        write_csv(path, rows)
        with pytest.raises(SystemExit) as info:
            exit_if_unfinished(lab)
        starts = lab.worker.starts
    assert info.value.code == 1
    assert time.monotonic() - start < 300
    by = [(r["variant"], r.get("skip_reason") or "") for r in read_csv(path)]
    assert [v for v, _ in by] == names  # every row, in order
    for (name, reason) in by[1:4]:
        assert reason.startswith(tuple(f"faulted: {error}" for error in FAULTS[name])), reason
    assert by[4][1].startswith("timed out after 20 s")
    healthy = [r for r in rows if r["variant"] == "v1"]
    assert all(r["correct"] is True and r["time_ms"] > 0 for r in healthy)
    assert starts == 5  # the first worker, then a fresh one after each of the four failures
    err = capsys.readouterr().err
    assert "4 run(s) did not finish" in err


def test_the_out_of_bounds_read_passes_the_value_check(lab):
    for exact in (False, True):
        result = lab.verify(_spec("reads_past_k"), exact=exact)
        assert result.ok, result.describe()


def _sanitizer():
    from gpulab.errors import GpulabError
    from gpulab.jobs.sanitize import find_sanitizer

    try:
        return find_sanitizer()
    except GpulabError as exc:
        pytest.skip(str(exc))


def test_memcheck_catches_the_read_the_value_check_cannot_see(tmp_path):
    from gpulab.jobs.sanitize import sanitize_one

    row = sanitize_one(_sanitizer(), _spec("reads_past_k"), "memcheck", tmp_path)
    assert row["errors"] and row["errors"] > 0, row
    assert "Invalid __global__ read" in row["first_report"] and row["verdict"] == "ERRORS"
    clean = sanitize_one(_sanitizer(), _spec("v1", {"TILE": 16}), "memcheck", tmp_path / "v1")
    assert clean["verdict"] == "clean" and clean["checked_values"] == "correct", clean


def test_racecheck_reports_the_nosync_demos_hazard(tmp_path):
    from gpulab.jobs.sanitize import sanitize_one, sanitize_shape

    stencil = get_experiment("stencil")
    spec = RunSpec(stencil, stencil.variant("nosync"), {"R": 3}, sanitize_shape(stencil))
    row = sanitize_one(_sanitizer(), spec, "racecheck", tmp_path)
    assert row["verdict"] == "hazard reported (a demonstration)", row


def test_the_racy_user_kernel_is_caught_by_racecheck_and_the_gate_never_crowns_it(tmp_path):
    """Issue 42: sgemm's v1 with the second barrier of its loop removed, given as a user's kernel
    (tests/gpu/planted/racy_v1.cu): racecheck reports its hazard, memcheck does not (it reads nothing
    out of bounds), and the sanitizer gate refuses it, writing both rows to sanitize.csv."""
    from gpulab.jobs.clean import Gate
    from gpulab.jobs.sanitize import sanitize_one, sanitize_shape
    from gpulab.records import read_csv

    sanitizer = _sanitizer()
    exp = get_experiment("sgemm", kernels=(PLANTED / "racy_v1.cu",))
    spec = RunSpec(exp, exp.variant("racy_v1"), {"TILE": 16}, sanitize_shape(exp))
    race = sanitize_one(sanitizer, spec, "racecheck", tmp_path / "race")
    assert race["verdict"] == "ERRORS" and race["errors"] + race["warnings"] > 0, race
    assert "racy_v1.cu" in race["first_report"]
    verdict = Gate(tmp_path, "sm_90").verdict(RunSpec(exp, spec.variant, spec.params, exp.shape(97, 65, 33)))
    assert not verdict.clean and verdict.text.startswith("not clean: racecheck reported")
    rows = read_csv(tmp_path / "sanitize.csv")
    assert {(r["tool"], r["verdict"]) for r in rows} == {("memcheck", "clean"), ("racecheck", "ERRORS")}


# Every variant, but sgemm's v14 apart: under racecheck its launches in clusters of two (its default,
# and t4's) fault with an illegal address where memcheck, synccheck and initcheck find nothing and
# every check passes (H200, 2026-12-02): open, see docs/notes/gemm_bf16-notes.md. Its other three tools below.
@pytest.mark.parametrize("experiment, variants, tools", [
    ("sgemm", ",".join(v.name for v in get_experiment("sgemm").variants if v.name != "v14"), ""),
    ("sgemm", "v14", "memcheck,synccheck,initcheck"),
    ("coalesce", "", ""), ("stencil", "", ""), ("grayscale", "", ""),
], ids=["sgemm", "sgemm-v14", "coalesce", "stencil", "grayscale"])
def test_gpulab_sanitize_every_variant(experiment, variants, tools, tmp_path):
    """The command itself: every correct variant clean under the four tools, the demo's hazard
    reported (exit 0), rows in the CSV."""
    _sanitizer()
    out = tmp_path / "sanitize.csv"
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    chosen = [*(["--variant", variants] if variants else []), *(["--tool", tools] if tools else [])]
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "sanitize", experiment, *chosen, "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    from gpulab.records import read_csv

    rows = read_csv(out)
    exp = get_experiment(experiment)
    assert {row["variant"] for row in rows} == (set(variants.split(",")) if variants else {v.name for v in exp.variants})
    assert {row["tool"] for row in rows} == set((tools or "memcheck,racecheck,synccheck,initcheck").split(","))
