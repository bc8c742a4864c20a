"""Problems written in PyTorch (gpulab.Problem.from_torch) without a GPU: the experiment they make,
their kernels compiled, problem files found by --problem and by path, and every bad input one line.
What needs torch runs where torch is installed (the GPU tests run the whole path on the card)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gpulab
from gpulab.errors import GpulabError
from gpulab.experiments import torch_problem
from gpulab.experiments.torch_problem import Problem
from gpulab.run.lab import RunSpec, compile_record

ROOT = Path(__file__).resolve().parents[1]
SOFTMAX = ROOT / "examples" / "softmax"


def _softmax(**changes):
    """The softmax example's problem, built here: its reference and inputs are never called by what
    these tests do, so they need no torch."""
    def reference(x):
        raise AssertionError("not called without a GPU")

    def make_inputs(shape, generator):
        raise AssertionError("not called without a GPU")

    kwargs = dict(dims=("M", "N"), kernels=["naive.cu", "online.cu", "cached.cu"], out_shape=lambda s: (s["M"], s["N"]),
                  default_shapes=[(8192, 4096)], folder=SOFTMAX, bytes_moved=lambda s: 8 * s["M"] * s["N"])
    return Problem.from_torch(changes.pop("name", "softmax"), reference, make_inputs, **(kwargs | changes))


def test_a_torch_problem_is_an_experiment_of_its_kernels():
    exp = _softmax()
    assert exp.name == exp.entry == "softmax" and exp.dims == ("M", "N")
    assert [v.name for v in exp.variants] == ["naive", "online", "cached"]
    assert exp.baseline == "naive" and list(exp.vendor_baselines()) == ["torch"]
    shape = exp.shape(8192, 4096)
    assert exp.bytes_moved(shape) == 8 * 8192 * 4096
    out = exp.output(shape, np)
    assert out.shape == (8192, 4096) and out.dtype == np.float32 and np.isnan(out).all()
    x = np.zeros((8192, 4096), np.float32)
    args = exp.kernel_args({"x": x, "scale": 0.5}, out, shape, {})
    assert args[0] is x and args[1] == np.float32(0.5) and args[2] is out and args[3:] == (np.int32(8192), np.int32(4096))
    assert exp.variant("cached").constraints({"THREADS": 256, "ITEMS": 16}, exp.shape(2, 5000)) is not None


def test_its_kernels_compile_without_a_gpu():
    rows = [compile_record(spec, "sm_90") for spec in _specs()]
    assert len(rows) == 3 and all(r["reg_per_thread"] > 0 and not r["spill_stores_bytes"] for r in rows), rows


def _specs():
    exp = _softmax()
    shape = exp.shape(64, 1024)
    return [RunSpec(exp, v, v.default_params(), shape) for v in exp.variants]


@pytest.mark.parametrize("changes, words", [
    ({"name": "Soft-max"}, "lower-case letters"),
    ({"tolerance": 0}, "must be a number above 0"),
    ({"default_shapes": []}, "give default_shapes"),
    ({"dims": ()}, "dims names the shape"),
    ({"out_dtype": "no-such-type"}, "is not a dtype"),
    ({"bound": "compute"}, "gives flops="),
    ({"kernels": ["missing.cu"]}, "no such file"),
])
def test_bad_problems_are_refused_in_one_line(changes, words):
    with pytest.raises(GpulabError, match=words):
        _softmax(**changes)


def test_an_out_shape_that_is_not_whole_numbers_is_refused():
    exp = _softmax(out_shape=lambda s: (s["M"], -1))
    with pytest.raises(GpulabError, match="positive whole numbers"):
        exp.output(exp.shape(4, 4), np)


def test_without_torch_one_line_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails as where it is not installed
    with pytest.raises(GpulabError, match=r"pip install 'gpulab\[torch\]'"):
        torch_problem.torch_module()
    r = subprocess.run([sys.executable, "-c", "import sys; sys.modules['torch'] = None; "
                        "from gpulab.cli import main; sys.argv = ['gpulab', 'list', '--problem', "
                        f"'{SOFTMAX / 'softmax.py'}']; main()"], capture_output=True, text=True, timeout=120)
    if "torch" in sys.modules and sys.modules["torch"] is not None:
        pytest.skip("torch imported in this process")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "softmax.py:" in r.stderr and "gpulab[torch]" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, words", [
    (["list", "--problem"], "--problem needs a file"),
    (["list", "--problem", "nowhere.py"], "no such .py file"),
    (["list", "--problem", "README.md"], "no such .py file"),
])
def test_a_bad_problem_argument_is_one_line(args, words):
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True, timeout=120,
                       cwd=ROOT)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_problem_file_without_problem_is_refused(tmp_path):
    path = tmp_path / "empty.py"
    path.write_text("x = 1\n")
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "list", "--problem", str(path)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2 and "defines no PROBLEM" in r.stderr, r.stderr


def test_a_problem_file_joins_the_experiments_by_option_and_by_path(tmp_path):
    """The same file named by --problem (anywhere on the line) or in the experiment's place; the
    worker processes a command starts find it too (GPULAB_PROBLEMS)."""
    problem = tmp_path / "twice.py"
    problem.write_text(
        "from pathlib import Path\nfrom gpulab import Problem\n"
        "PROBLEM = Problem.from_torch('twice', lambda x: 2 * x, lambda shape, generator: {}, dims=('N',),\n"
        f"    kernels=[], out_shape=lambda s: (s['N'],), default_shapes=[(1024,)], folder=Path('{tmp_path}'))\n")
    for args in (["list", "twice", "--problem", str(problem)], ["--problem", str(problem), "list", "twice"],
                 ["list", str(problem)]):
        r = subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "twice" in r.stdout and "torch" in r.stdout, (args, r.stderr)
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "list", "twice"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "unknown experiment 'twice'" in r.stderr


def test_load_problem_from_python(tmp_path, monkeypatch):
    monkeypatch.delenv("GPULAB_PROBLEMS", raising=False)
    problem = tmp_path / "thrice.py"
    problem.write_text(
        "from pathlib import Path\nfrom gpulab import Problem\n"
        "PROBLEM = Problem.from_torch('thrice', lambda x: 3 * x, lambda shape, generator: {}, dims=('N',),\n"
        f"    kernels=[], out_shape=lambda s: (s['N'],), default_shapes=[(64,)], folder=Path('{tmp_path}'))\n")
    exp = gpulab.load_problem(problem)
    assert exp.name == "thrice" and gpulab.experiment("thrice") is exp
    with pytest.raises(GpulabError, match="no such .py file"):
        gpulab.load_problem(tmp_path / "nope.py")
    with pytest.raises(GpulabError, match="a problem is a .py file"):
        gpulab.load_problem(None)


def test_a_problem_that_fails_to_load_leaves_the_experiments_as_they_were(tmp_path, monkeypatch):
    """It joined GPULAB_PROBLEMS before loading, so every later call of the process (and of the
    processes it starts) raised its error again, gpulab.experiment('sgemm') among them."""
    monkeypatch.delenv("GPULAB_PROBLEMS", raising=False)
    broken = tmp_path / "broken.py"
    broken.write_text("x = 1\n")  # no PROBLEM
    clash = tmp_path / "clash.py"
    clash.write_text(
        "from pathlib import Path\nfrom gpulab import Problem\n"
        "PROBLEM = Problem.from_torch('sgemm', lambda x: x, lambda shape, generator: {}, dims=('N',),\n"
        f"    kernels=[], out_shape=lambda s: (s['N'],), default_shapes=[(64,)], folder=Path('{tmp_path}'))\n")
    for path, words in ((broken, "defines no PROBLEM"), (clash, "clashes with the built-in")):
        with pytest.raises(GpulabError, match=words):
            gpulab.load_problem(path)
        assert "GPULAB_PROBLEMS" not in os.environ
        assert gpulab.experiment("sgemm").name == "sgemm"


def test_the_torch_path_on_the_cpu_where_torch_is_installed():
    """make_inputs hands torch's memory over without a copy (numpy on the CPU), the check compares
    with the reference, and torch's row writes the answer; a wrong output fails."""
    torch = pytest.importorskip("torch")
    exp = Problem.from_torch("softmax", lambda x: torch.softmax(x, dim=-1),
                             lambda shape, generator: {"x": torch.randn(shape["M"], shape["N"], generator=generator)},
                             dims=("M", "N"), out_shape=lambda s: (s["M"], s["N"]), default_shapes=[(8, 16)],
                             folder=SOFTMAX, tolerance=1e-6)
    shape = exp.shape(8, 16)
    inputs = exp.make_inputs(shape, np.random.default_rng(1), False)
    assert isinstance(inputs["x"], np.ndarray)
    out = exp.output(shape, np)
    exp.vendor_baselines()["torch"](inputs, out, shape)
    assert exp.check(out, inputs, shape, False, np).ok
    out[3, 4] += 1e-3
    assert not exp.check(out, inputs, shape, False, np).ok
