"""Inputs that used to end in a traceback: each is one line on stderr saying what to do, exit 2."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "GPULAB_NO_GPU": "1"}


def gpulab(*args, cwd, env=ENV):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def one_line_exit_2(r, *words):
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


@pytest.fixture
def workdir(tmp_path):
    shutil.copytree(REPO / "results" / "h200", tmp_path / "results" / "h200",
                    ignore=shutil.ignore_patterns("*.png", "*.html"))
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    return tmp_path


def test_a_folder_as_readme(workdir):
    one_line_exit_2(gpulab("readme", "--readme", "results", cwd=workdir), "is a folder", "--readme")


def test_a_folder_as_fidelity_out(workdir):
    ncu = workdir / "ncu"
    ncu.write_text("#!/bin/sh\nexit 3\n")
    ncu.chmod(0o755)
    r = gpulab("fidelity", "stencil", "--out", "results", cwd=workdir, env={**ENV, "GPULAB_NCU": str(ncu)})
    one_line_exit_2(r, "results is a folder")


def test_a_readme_that_is_not_utf8(workdir):
    readme = workdir / "README.md"
    readme.write_bytes(readme.read_bytes() + b"\n\xe9t\xe9\n")
    before = readme.read_bytes()
    one_line_exit_2(gpulab("readme", cwd=workdir), "README.md", "not UTF-8")
    assert readme.read_bytes() == before


def test_a_results_folder_gpulab_may_not_write(workdir, monkeypatch, capsys):
    """As a read-only folder answers (root ignores permissions, so the refusal is stood in for)."""
    from gpulab import cli, records

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(records.tempfile, "mkstemp", refuse)
    monkeypatch.chdir(workdir)
    monkeypatch.setattr(sys, "argv", ["gpulab", "report"])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "cannot write results/h200/" in err and "Permission denied" in err
    assert len(err.strip().splitlines()) == 1
    assert not list((workdir / "results" / "h200").glob("*.png"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_read_only_results_folder(workdir):
    folder = workdir / "results" / "h200"
    folder.chmod(0o555)
    try:
        one_line_exit_2(gpulab("report", cwd=workdir), "cannot write", "Permission denied")
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("args", [["list"], ["predict", "sgemm", "v1"], ["bench", "sgemm", "--size", "0"]])
def test_an_ascii_terminal_gets_output_not_a_traceback(tmp_path, args):
    r = gpulab(*args, cwd=tmp_path, env={**ENV, "PYTHONIOENCODING": "ascii"})
    assert "Traceback" not in r.stdout + r.stderr and "UnicodeEncodeError" not in r.stderr, r.stderr
    assert r.returncode == (2 if "--size" in args else 0), r.stderr
