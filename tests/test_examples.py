"""The transpose example (examples/transpose), an experiment written against the public contract
only and found through GPULAB_PATH: it compiles, its access models are exact by their symmetry
classes, the padded tile has no bank conflicts where the plain tile has 31 per column read, and its
recorded H200 fidelity (once committed) still holds. And `gpulab new` as a new user meets it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpulab
from gpulab.errors import GpulabError
from gpulab.jobs import fidelity
from gpulab.records import read_csv

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RECORDED = EXAMPLES / "transpose" / "results" / "h200" / fidelity.FILE_NAME


@pytest.fixture(autouse=True)
def on_path(monkeypatch):
    monkeypatch.setenv("GPULAB_PATH", str(EXAMPLES))


# Every variant at the params bench runs (vec's sweep), and the plain tiles at their widest block.
VARIANTS = [("naive", {}), ("tile", {"ROWS": 8}), ("tile", {"ROWS": 32}), ("padded", {"ROWS": 8}),
            ("padded", {"ROWS": 16})] + [("vec", {"ROWS": r, "TILE": t}) for r in (8, 16, 32) for t in (32, 64)]


def test_every_variant_compiles_without_spills():
    rows = gpulab.compile_only(["transpose"], arch="sm_90")
    assert {r["variant"] for r in rows} == {"naive", "tile", "padded", "vec"}
    assert all(r["spill_stores_bytes"] == 0 and r["reg_per_thread"] > 0 for r in rows), rows


@pytest.mark.parametrize("variant, params", VARIANTS)
@pytest.mark.parametrize("shape", ["1x37", "37x1", "333x517", "1000x1532", "64x96"])
def test_access_models_are_exact_by_their_classes(variant, params, shape):
    fast = gpulab.predict("transpose", variant, params=params, shape=shape)
    slow = gpulab.predict("transpose", variant, params=params, shape=shape, exhaustive=True)
    assert list(fast.instructions) == list(slow.instructions)


def test_padding_removes_the_bank_conflicts():
    tile = gpulab.predict("transpose", "tile", shape="8192x8192").summary
    padded = gpulab.predict("transpose", "padded", shape="8192x8192").summary
    vec = gpulab.predict("transpose", "vec", shape="8192x8192").summary
    wide = gpulab.predict("transpose", "vec", params={"TILE": 64, "ROWS": 16}, shape="8192x8192").summary
    assert tile["smem_load_wavefronts"] == 32 * tile["smem_load_requests"]  # a column in one bank
    assert padded["smem_load_bank_conflicts"] == padded["smem_store_bank_conflicts"] == 0
    for s in (vec, wide):
        assert s["smem_load_bank_conflicts"] == s["smem_store_bank_conflicts"] == 0
    # every global sector carries 32 useful bytes once the writes are coalesced
    for s in (padded, vec, wide):
        assert s["gmem_load_sectors"] * 32 == s["gmem_store_sectors"] * 32 == 4 * 8192 * 8192
    assert vec["gmem_load_requests"] * 4 == padded["gmem_load_requests"]  # float4: a quarter of the instructions


def test_the_check_is_exact_and_catches_a_wrong_element():
    import numpy as np

    exp = gpulab.experiment("transpose")
    shape = exp.shape(3, 5)
    inputs = exp.make_inputs(shape, np.random.default_rng(0), exact=False)
    out = inputs["A"].T.copy()
    assert exp.check(out, inputs, shape, False, np).ok
    out[0, 1], out[1, 0] = out[1, 0], out[0, 1]  # two elements swapped: an index mixed up
    assert not exp.check(out, inputs, shape, False, np).ok


def test_fidelity_plans_the_example_at_its_own_ragged_shapes():
    specs = fidelity.plan(["transpose"])
    assert {(s.variant.name, s.shape.label) for s in specs} >= {("padded", "8192x8192"), ("padded", "1000x1532"),
                                                                  ("vec", "333x517")}


def test_the_recorded_fidelity_still_holds():
    if not RECORDED.exists():
        pytest.skip("examples/transpose/results/h200/fidelity.csv is not committed yet (run it on the H200)")
    rows = read_csv(RECORDED)
    failures, checked, _ = fidelity.replay(rows)
    assert not failures and checked > 0, failures
    again, _ = fidelity.rejudge(rows)
    key = ("variant", "params", "shape", "quantity", "predicted", "measured", "verdict")
    assert [tuple(r.get(k) for k in key) for r in again] == [tuple(r.get(k) for k in key) for r in rows]
    assert not fidelity.changed_kernels(rows)


# -- gpulab new, as a new user meets it ---------------------------------------------------------
def _cli(*args, path=None, cwd=None):
    env = {**os.environ, "GPULAB_NO_GPU": "1"}
    env.pop("GPULAB_PATH", None)
    if path:
        env["GPULAB_PATH"] = str(path)
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)


@pytest.mark.parametrize("like", ["copy", "sgemm", "stencil"])
def test_new_then_list_run_predict_and_its_tests_pass(tmp_path, like):
    name = f"my{like}"
    r = _cli("new", name, "--dir", str(tmp_path / "k"), "--like", like, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    folder = tmp_path / "k" / name
    assert sorted(p.name for p in folder.iterdir()) == sorted(["__init__.py", "access.py", "v0_naive.cu",
                                                               f"test_{name}.py"])
    for args in (["list", name], ["run", name], ["predict", name, "v0"]):
        r = _cli(*args, path=tmp_path / "k", cwd=tmp_path)
        assert r.returncode == 0, (args, r.stderr)
        assert name in r.stdout
    assert "Resources per thread and block" in _cli("run", name, path=tmp_path / "k", cwd=tmp_path).stdout
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600,
                       env={k: v for k, v in os.environ.items() if k != "GPULAB_PATH"})
    assert r.returncode == 0, r.stdout[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout


@pytest.mark.parametrize("args, words", [
    (["new", "Bad-Name"], "cannot name an experiment"),
    (["new", "sgemm"], "already exists"),
    (["new", "fine", "--like", "fft"], "choose one of copy, sgemm, stencil"),
    # Each of these was written, and then broke every later command (a package named like a module
    # is refused by discovery) or its own kernel's compile (a C++ keyword, a CUDA function): issue 42.
    (["new", "json"], "'json' is already the name of a Python module"),
    (["new", "numpy"], "'numpy' is already the name of a Python module"),
    (["new", "gpulab"], "'gpulab' is already the name of a Python module"),
    (["new", "float"], "'float' cannot be the kernel's name: NVRTC refuses"),
    (["new", "max"], "'max' cannot be the kernel's name: NVRTC refuses"),
])
def test_new_refuses_what_it_cannot_make(tmp_path, args, words):
    r = _cli(*args, cwd=tmp_path)
    assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("args, words", [
    ((None,), "an experiment is named by text"),
    (("fine", 5), "directory is a folder's path"),
    (("fine", ".", None), "like None: choose one of copy, sgemm, stencil"),
])
def test_new_from_python_refuses_what_is_not_text(tmp_path, monkeypatch, args, words):
    import gpulab

    monkeypatch.chdir(tmp_path)
    with pytest.raises(GpulabError, match=words):
        gpulab.new(*args)
    assert not any(tmp_path.iterdir())


def test_new_on_a_full_disk_leaves_nothing_behind(tmp_path, monkeypatch):
    """A write that fails half-way (ENOSPC) left an empty __init__.py, and the folder then blocked
    a retry (issue 42): now one line and nothing written."""
    import errno
    import pathlib

    import gpulab

    real, calls = pathlib.Path.write_text, []

    def full(self, *args, **kwargs):  # the package's second file meets a full disk
        if self.is_relative_to(tmp_path):
            calls.append(self)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", full)
    with pytest.raises(GpulabError, match="No space left on device.*nothing was left behind"):
        gpulab.new("mine", tmp_path)
    assert len(calls) == 2 and not any(tmp_path.iterdir())
    monkeypatch.setattr(pathlib.Path, "write_text", real)
    assert (gpulab.new("mine", tmp_path) / "__init__.py").is_file()  # and a retry works


def test_new_never_overwrites(tmp_path):
    (tmp_path / "mine").mkdir()
    r = _cli("new", "mine", "--dir", str(tmp_path))
    assert r.returncode == 2 and "already exists" in r.stderr and not any((tmp_path / "mine").iterdir())


GENERATED = Path(__file__).resolve().parent / "fixtures" / "gpulab_new"


@pytest.mark.parametrize("like", ["copy", "sgemm", "stencil"])
def test_new_writes_byte_for_byte_what_it_wrote_before_its_templates_were_files(tmp_path, like):
    """The templates moved from Python strings in gpulab/jobs/new.py to files under gpulab/templates:
    `gpulab new my_kernels --like LIKE` writes what the strings gave, byte for byte
    (tests/fixtures/gpulab_new/LIKE/*.expected, written by that code before the move)."""
    folder = gpulab.new("my_kernels", tmp_path, like)
    expected = {p.name.removesuffix(".expected"): p.read_bytes() for p in (GENERATED / like).iterdir()}
    assert sorted(expected) == sorted(["__init__.py", "access.py", "v0_naive.cu", "test_my_kernels.py"])
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == expected
