"""Experiments outside the package: GPULAB_PATH folders and the `gpulab.experiments` entry points,
and what a user sees when one is wrong (one line naming the file and line, exit 2)."""

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from gpulab import experiments
from gpulab.errors import GpulabError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ENV = {**os.environ, "GPULAB_NO_GPU": "1"}


def gpulab(*args, path=None, cwd=None):
    env = dict(ENV)
    env.pop("GPULAB_PATH", None)
    if path is not None:
        env["GPULAB_PATH"] = os.pathsep.join(map(str, path)) if isinstance(path, (list, tuple)) else str(path)
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def _package(folder: Path, name: str, body: str) -> Path:
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(body)
    return folder / name / "__init__.py"


EXPERIMENT = """
from gpulab.experiments.base import Experiment


class Mine(Experiment):
    name = {name!r}
    dims = ("N",)
    default_shapes = ((64,),)


EXPERIMENT = Mine()
"""


def test_builtins_only_without_path(monkeypatch):
    monkeypatch.delenv("GPULAB_PATH", raising=False)
    assert [e.name for e in experiments.all_experiments()] == ["sgemm", "coalesce", "stencil", "grayscale", "gemm_bf16"]


def test_a_folder_on_gpulab_path_adds_its_packages(monkeypatch):
    monkeypatch.setenv("GPULAB_PATH", str(EXAMPLES))
    names = [e.name for e in experiments.all_experiments()]
    assert names[:4] == ["sgemm", "coalesce", "stencil", "grayscale"] and "transpose" in names
    assert experiments.get_experiment("transpose").directory == EXAMPLES / "transpose"


def test_list_shows_an_out_of_tree_experiment():
    r = gpulab("list", path=EXAMPLES)
    assert r.returncode == 0, r.stderr
    assert "transpose" in r.stdout and "padded" in r.stdout and "sgemm" in r.stdout


def test_a_name_clash_with_a_builtin_names_the_file_and_line(tmp_path):
    init = _package(tmp_path, "mysgemm", EXPERIMENT.format(name="sgemm"))
    r = gpulab("list", path=tmp_path)
    assert r.returncode == 2
    assert f"{init}:6" in r.stderr and "clashes with the built-in" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_a_clash_between_two_folders(tmp_path):
    _package(tmp_path / "a", "one", EXPERIMENT.format(name="same"))
    _package(tmp_path / "b", "two", EXPERIMENT.format(name="same"))
    r = gpulab("list", path=[tmp_path / "a", tmp_path / "b"])
    assert r.returncode == 2 and "clashes with the one in" in r.stderr and "one/__init__.py" in r.stderr


def test_a_folder_that_does_not_exist(tmp_path):
    r = gpulab("bench", "sgemm", path=tmp_path / "nope")
    assert r.returncode == 2 and "nope, which is not a folder" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_package_that_fails_to_import_names_the_failing_line(tmp_path):
    init = _package(tmp_path, "broken", "import os\n\nx = 1 / 0\n")
    r = gpulab("list", path=tmp_path)
    assert r.returncode == 2
    assert f"{init}:3" in r.stderr and "ZeroDivisionError" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


@pytest.mark.parametrize("body, words", [
    ("import sys\n\nsys.exit(0)\n", "called sys.exit(0)"),  # ended every command with exit 0 and no output
    ("\n\nraise BaseException('no')\n", "BaseException: no"),  # a traceback (issue 42)
    ("import sys\n\nsys.exit('bye')\n", "called sys.exit('bye')"),
])
def test_a_package_that_exits_or_raises_baseexception_names_the_line(tmp_path, body, words):
    init = _package(tmp_path, "rude", body)
    r = gpulab("list", path=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{init}:3" in r.stderr and words in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr and not r.stdout


def test_a_syntax_error_names_the_file_and_line(tmp_path):
    init = _package(tmp_path, "typo", "x = (\n")
    r = gpulab("list", path=tmp_path)
    assert r.returncode == 2 and f"{init}:1" in r.stderr


def test_a_folder_without_init_named_as_an_experiment_says_what_it_lacks(tmp_path):
    (tmp_path / "mine").mkdir()  # a kernel folder started by hand: discovery passes it by
    (tmp_path / "mine" / "v0.cu").write_text("// a kernel\n")
    r = gpulab("run", "mine", path=tmp_path)
    assert r.returncode == 2 and f"{tmp_path / 'mine'} is on GPULAB_PATH but has no __init__.py" in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_a_package_without_experiment(tmp_path):
    _package(tmp_path, "helpers", "VALUE = 1\n")
    r = gpulab("list", path=tmp_path)
    assert r.returncode == 2 and "defines no EXPERIMENT" in r.stderr


def test_a_package_name_taken_by_another_module(tmp_path):
    _package(tmp_path, "json", EXPERIMENT.format(name="x"))  # the standard library's json wins
    r = gpulab("list", path=tmp_path)
    assert r.returncode == 2 and "already taken" in r.stderr and "rename the folder" in r.stderr


def _entry_point(name, value, loaded=None, error=None):
    def load():
        if error:
            raise error
        return loaded

    return SimpleNamespace(name=name, value=value, dist=SimpleNamespace(name="my-plugin"), load=load)


def test_an_entry_point_adds_its_experiment(monkeypatch, tmp_path):
    _package(tmp_path, "plugged", EXPERIMENT.format(name="plugged"))
    monkeypatch.syspath_prepend(str(tmp_path))
    import plugged

    monkeypatch.delenv("GPULAB_PATH", raising=False)
    monkeypatch.setattr(experiments, "_entry_points", lambda: [_entry_point("plugged", "plugged", plugged)])
    experiments._discover.cache_clear()
    try:
        assert experiments.get_experiment("plugged") is plugged.EXPERIMENT
    finally:
        experiments._discover.cache_clear()


def test_an_entry_point_that_clashes_or_fails(monkeypatch):
    from gpulab.experiments import sgemm

    monkeypatch.delenv("GPULAB_PATH", raising=False)
    for ep, words in ((_entry_point("x", "x", sgemm), "clashes with the built-in"),
                      (_entry_point("y", "y:Z", error=ImportError("no module named y")), "loading the entry point 'y = y:Z'")):
        monkeypatch.setattr(experiments, "_entry_points", lambda ep=ep: [ep])
        experiments._discover.cache_clear()
        try:
            with pytest.raises(GpulabError, match=words):
                experiments.all_experiments()
        finally:
            experiments._discover.cache_clear()
