"""The command line as a user meets it, in a subprocess: exit codes, one-line errors, no traceback,
and nothing written when a command fails."""

import os
import subprocess
import sys

import pytest

ENV = {**os.environ, "GPULAB_NO_GPU": "1"}


def gpulab(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env=ENV, cwd=cwd, timeout=300)


def test_an_unknown_option_is_a_usage_error_not_a_traceback(tmp_path):
    r = gpulab("bench", "sgemm", "--nosuch", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "No such option" in r.stderr and "Traceback" not in r.stderr + r.stdout


@pytest.mark.parametrize("args, words", [
    (["bench", "sgemm", "--size", "0"], "at least 1"),
    (["bench", "sgemm", "--size", "-4"], "at least 1"),
    (["bench", "sgemm", "--size", "abc"], "not a whole number"),
    (["bench", "sgemm", "--shape", "10x10"], "needs 3 numbers"),
    (["bench", "nosuch"], "unknown experiment"),
    (["bench", "sgemm", "--variant", "v99"], "no variant 'v99'"),
    (["bench", "sgemm", "--param", "TILE=7"], "not accepted"),
    (["bench", "sgemm", "--param", "TILE"], "NAME=V1,V2"),
    (["bench", "sgemm", "--param", "NOPE=1"], "no chosen variant"),
    (["bench", "sgemm", "--size", "64"], "no NVIDIA GPU"),
    (["fidelity", "--rejudge"], "no fidelity table to rejudge"),
    (["run", "--arch", "sm_50"], "does not support sm_50; choose one of sm_75"),
    # params that would validate yet change what runs
    (["bench", "sgemm", "--param", "TILE=,"], "gives no value; write e.g. --param TILE=8,16"),
    (["tune", "sgemm", "v9", "--param", "TILE=8"], "has no param TILE; its params are: BM"),
    (["bench", "sgemm", "--param", "tile=16"], "upper case; write --param TILE=16"),
    (["bench", "sgemm", "--param", "TILE=8", "--param", "TILE=16"], "given twice; give its values once: --param TILE=8,16"),
])
def test_bad_input_is_one_line_exit_2(args, words, tmp_path):
    r = gpulab(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "results").exists()  # no partial CSV


def test_run_without_gpu_compiles_and_exits_0(tmp_path):
    r = gpulab("run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Resources per thread and block" in r.stdout and "v1" in r.stdout
    assert "need an NVIDIA GPU" in r.stdout


def test_list_names_every_variant():
    from gpulab.experiments import all_experiments

    r = gpulab("list")
    assert r.returncode == 0
    for exp in all_experiments():
        for v in exp.variants:
            assert v.name in r.stdout


def test_run_without_gpu_for_a_t4_skips_what_needs_sm_80(tmp_path):
    """seed 000 ran on a T4 (sm_75): everything compiles for it except the cp.async rung, which is
    skipped with its reason instead of stopping the run."""
    r = gpulab("run", "--arch", "sm_75", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "needs sm_80" in r.stdout  # the note column, however the table wraps it
    assert "Traceback" not in r.stdout + r.stderr


def test_an_unwritable_kernel_cache_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "run"], capture_output=True, text=True, cwd=tmp_path,
                       env={**ENV, "GPULAB_CACHE": str(tmp_path / "file")}, timeout=300)
    assert r.returncode == 2 and "set GPULAB_CACHE" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [
    ["predict", "sgemm", "v1", "--size", "256,512"],
    ["predict", "sgemm", "v1", "--param", "TILE=8,16"],
])
def test_predict_errors_do_not_speak_of_profiling(args, tmp_path):
    r = gpulab(*args, cwd=tmp_path)
    assert r.returncode == 2 and "one " in r.stderr and "profil" not in r.stderr.lower(), r.stderr
