"""`gpulab predict` as a user meets it on a machine with no GPU: the table of predicted counters,
the per-instruction rows, the roofline floor and where its ceilings come from, the 2 s budget at
4096^3, and one-line errors (exit 2) for a variant without an access model or a bad config."""

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ENV = {**os.environ, "GPULAB_NO_GPU": "1"}
ROOT = Path(__file__).resolve().parent.parent


def gpulab(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env=ENV, cwd=cwd, timeout=120)


def number(text: str, label: str) -> int:
    """The first number on the table row that starts with `label`."""
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│|]", line) if c.strip()]
        if cells and cells[0] == label:
            return int(cells[1].replace(",", ""))
    raise AssertionError(f"no row {label!r} in\n{text}")


def test_predict_4096_cubed_sgemm_with_matmul_profile_numbers(tmp_path):
    # Its speed (under 2 s, the whole process, on a 2-core CPU) is timed by hand, never by a test.
    r = gpulab("predict", "sgemm", "v1", "--param", "TILE=16", "--size", "4096", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    warps = 4096 * 4096 // 32
    assert number(out, "global load requests") == 2 * warps * (4096 // 16)  # matmul_profile.cu's count, at 4096
    assert number(out, "bytes into L1TEX, global loads (sectors x 32)") == 32 * 4 * 2 * warps * (4096 // 16)
    assert number(out, "compulsory DRAM bytes (inputs, output, passes the L2 loses)") == 3 * 4 * 4096**2
    assert "shared load requests (instructions)" in out and "bank conflicts" in out
    assert "lds.128 As[ty][4q..4q+3]" in out  # per-instruction rows, brackets intact (not rich markup)
    assert "roofline floor" in out and "compute-bound" in out
    # No results/ here: the floor uses the ceilings the repository recorded (as gpulab best does), and says so.
    assert "measured on NVIDIA H200" in out and "results/h200/ceilings.csv" in out
    assert not (tmp_path / "results").exists()  # predict writes nothing


def test_predict_uses_the_cards_measured_ceilings_when_present():
    if not (ROOT / "results" / "h200" / "ceilings.csv").exists():
        pytest.skip("results/h200/ceilings.csv is not committed")
    r = gpulab("predict", "coalesce", "rows", "--param", "VEC=4", "--shape", "8192x8192", "--gpu", "h200", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "measured on NVIDIA H200" in r.stdout and "memory-bound" in r.stdout
    assert number(r.stdout, "global load requests") == 8192 * 8192 // 4 // 32
    assert number(r.stdout, "sectors") == 8192 * 8192 * 4 // 32  # every byte once, whole sectors


@pytest.mark.parametrize("args, words", [
    (["predict", "sgemm", "v1", "--param", "TILE=7"], "not accepted"),
    (["predict", "sgemm", "v99"], "no variant 'v99'"),
    (["predict", "nosuch", "v0"], "unknown experiment"),
    (["predict", "sgemm", "v1:TILE=16", "--param", "TILE=32"], "give it once"),
    (["predict", "sgemm", "v1", "--shape", "10x10"], "needs 3 numbers"),
    (["predict", "sgemm", "v1", "--shape", "4x0x4"], "4x0x4: N 0 must be at least 1"),  # which one of the three
    (["predict", "stencil", "shfl", "--shape", "1x1"], "needs 1 number (N)"),
    (["predict", "sgemm", "v1", "--gpu", "nosuchcard"], "no results for card 'nosuchcard'"),
])
def test_bad_input_is_one_line_exit_2(args, words, tmp_path):
    r = gpulab(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_variant_without_an_access_model_is_one_clear_line(monkeypatch, capsys):
    from gpulab import cli
    from gpulab.experiments import get_experiment

    exp = get_experiment("stencil")
    monkeypatch.setattr(type(exp), "variants", tuple(
        dataclasses.replace(v, access=None) if v.name == "regs" else v for v in exp.variants))
    monkeypatch.setattr(sys, "argv", ["gpulab", "predict", "stencil", "regs"])
    monkeypatch.setenv("GPULAB_NO_GPU", "1")
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "stencil regs has no access model yet" in err
    assert "with one: global, shared, shfl, nosync" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("experiment, variant", [
    ("coalesce", "cols"), ("coalesce", "stride"), ("stencil", "regs"), ("stencil", "nosync"),
    ("grayscale", "column"), ("grayscale", "vec4"),
])
def test_predict_every_memory_experiment_at_its_default_shape(experiment, variant, tmp_path):
    r = gpulab("predict", experiment, variant, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "per instruction, summed over the launch" in r.stdout
    assert "memory-bound" in r.stdout
