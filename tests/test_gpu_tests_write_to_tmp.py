"""The GPU tests write their results under tmp_path, never into the clone's results/ (what gpulab
commands wrote on a card, nothing else). bench, tune and sanitize write into the card's results
folder beside their CSV (ceilings.csv, the sanitizer gate's verdicts in sanitize.csv, tuned.json),
under the default results root, results/ of the working directory: a GPU test run from the clone
(pytest's cwd) that benched in process wrote the gate's rows into results/h200/sanitize.csv.

Read from the source, no GPU needed: a call of gpulab's bench, run, tune or sanitize in process
(`gpulab.X(` or `api.X(`) sits in a test that takes the `results_root` fixture (tests/gpu/conftest.py),
and a `gpulab.cli` child running one has cwd=tmp_path (sanitize: or its --out, all it writes);
profile, compare and fidelity in process keep their Nsight Compute reports beside the CSV they are
given (`csv=`, `out=`), else in the card's results folder: without one, the same fixture. It sees
the calls written in the test files, not what a helper they call runs."""

import ast
from pathlib import Path

import pytest

GPU_TESTS = sorted((Path(__file__).parent / "gpu").glob("*.py"))
COMMANDS = {"bench", "run", "tune", "sanitize"}
# In process, these keep every Nsight Compute report they capture in the reports folder beside the
# CSV named by `csv=` or `out=`, else in the card's results folder (results/h200/reports/).
REPORTING = {"profile", "compare", "fidelity"}
# gpulab.jobs.profile.profile, called by its own name (or a test's wrapper of it): its report goes to
# `reports_dir` or `report_out` where given, else to the card's results folder under `results_root`.
PROFILE_JOB = {"profile", "_profile"}
PROFILE_JOB_PLACES = {"reports_dir", "report_out", "results_root"}


def _strings(call: ast.Call) -> list[str]:
    """The string constants among a call's positional arguments, a list argument's flattened."""
    out = []
    for arg in call.args:
        for node in arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]:
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append(node.value)
    return out


def _unsafe(func: ast.FunctionDef) -> list[str]:
    params = {a.arg for a in func.args.args + func.args.kwonlyargs}
    found = []
    for call in (n for n in ast.walk(func) if isinstance(n, ast.Call)):
        f = call.func
        named_csv = any(k.arg in ("csv", "out") for k in call.keywords)
        if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("gpulab", "api")
                and "results_root" not in params
                and (f.attr in COMMANDS or (f.attr in REPORTING and not named_csv))):
            found.append(f"line {call.lineno}: {f.value.id}.{f.attr}() without the results_root fixture")
        if (isinstance(f, ast.Name) and f.id in PROFILE_JOB and "results_root" not in params
                and not any(k.arg in PROFILE_JOB_PLACES or k.arg is None for k in call.keywords)):
            found.append(f"line {call.lineno}: {f.id}() keeps its report in results/ (give reports_dir=tmp_path)")
        words = _strings(call)
        if "gpulab.cli" in words and words.index("gpulab.cli") + 1 < len(words):
            command = words[words.index("gpulab.cli") + 1]
            cwd = next((k.value for k in call.keywords if k.arg == "cwd"), None)
            in_tmp = isinstance(cwd, ast.Name) and cwd.id == "tmp_path"
            if command in COMMANDS and not in_tmp and not (command == "sanitize" and "--out" in words):
                found.append(f"line {call.lineno}: gpulab {command} in a child whose cwd is not tmp_path")
    return found


@pytest.mark.parametrize("path", GPU_TESTS, ids=[p.name for p in GPU_TESTS])
def test_gpu_tests_write_results_under_tmp_path(path):
    tree = ast.parse(path.read_text())
    found = [line for node in tree.body if isinstance(node, ast.FunctionDef) for line in _unsafe(node)]
    assert not found, f"{path.name} writes into the clone's results/:\n" + "\n".join(found)


def test_the_guard_sees_an_unsafe_bench():
    source = ("def test_a(tmp_path):\n    gpulab.bench('sgemm')\n"
              "def test_b(tmp_path):\n"
              "    subprocess.run([sys.executable, '-m', 'gpulab.cli', 'bench', 'sgemm'], cwd=ROOT)\n"
              "def test_c(tmp_path, results_root):\n    api.bench('sgemm')\n"
              "def test_d(tmp_path):\n"
              "    subprocess.run([sys.executable, '-m', 'gpulab.cli', 'sanitize', '--out', 'x'])\n"
              "def test_e(ncu_path):\n    gpulab.profile('transpose', 'tile', save=False)\n"
              "def test_f(tmp_path):\n    gpulab.profile('sgemm', 'v1', csv=tmp_path / 'p.csv')\n"
              "def test_g(ncu_path):\n    _profile(spec, ncu=ncu_path)\n"
              "def test_h(ncu_path, tmp_path):\n    _profile(spec, ncu=ncu_path, reports_dir=tmp_path)\n")
    tree = ast.parse(source)
    assert [bool(_unsafe(node)) for node in tree.body] == [True, True, False, False, True, False, True, False]
