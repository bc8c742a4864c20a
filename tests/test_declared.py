"""One-file variants: the /* gpulab variant */ block, its expression language (never Python's eval),
and the messages that say what to add or fix, with the file and line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.experiments.declared import DeclarationError, Expr, parse_declaration, variant_from_file

GOOD = """// my own SGEMM
/* gpulab variant
name:     mine
summary:  naive with a different block
param:    TILE = 16 in 8, 16, 32 | the block side
param:    UNROLL = 1 in 1, 2, 4
sweep:    TILE = 8, 16
grid:     ceil_div(N, TILE), ceil_div(M, TILE)
block:    TILE, TILE
smem:     4 * TILE * (TILE + 1)
min_sm:   80 | cp.async
require:  TILE * TILE <= 1024 | a block has at most 1024 threads
require:  K % UNROLL == 0 | K must be a multiple of UNROLL
*/
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {}
"""


def _file(tmp_path, text, name="mine.cu"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_block_declares_what_a_registry_line_does(tmp_path):
    exp = get_experiment("sgemm", kernels=[_file(tmp_path, GOOD)])
    v = exp.variant("mine")
    assert [p.name for p in v.params] == ["TILE", "UNROLL"] and v.param("TILE").choices == (8, 16, 32)
    assert v.default_params() == {"TILE": 16, "UNROLL": 1} and v.sweep == {"TILE": (8, 16)}
    launch = v.launch({"TILE": 16, "UNROLL": 1}, exp.shape(100, 33, 8))
    assert launch.grid == (3, 7, 1) and launch.block == (16, 16, 1) and launch.smem_dynamic_bytes == 4 * 16 * 17
    assert v.arch_reason("sm_75") and "cp.async" in v.arch_reason("sm_75") and v.arch_reason("sm_90") is None
    assert v.constraints({"TILE": 32, "UNROLL": 4}, None) is None  # K is not known without a shape
    assert v.constraints({"TILE": 32, "UNROLL": 4}, exp.shape(8, 8, 6)) == "K must be a multiple of UNROLL"
    assert exp.source(v) == tmp_path / "mine.cu" and exp.kernel_files == (str(tmp_path / "mine.cu"),)
    assert len(get_experiment("sgemm").variants) == len(exp.variants) - 1  # the package is untouched


def test_an_arch_specific_minimum_compiles_for_its_a_target_and_runs_on_that_arch_alone(tmp_path):
    v = variant_from_file(_file(tmp_path, GOOD.replace("min_sm:   80 | cp.async", "min_sm:   90a | wgmma")))
    assert v.arch_specific and v.min_sm == 90 and v.compile_arch("sm_90") == "sm_90a"
    assert v.arch_reason("sm_90") is None and "wgmma" in v.arch_reason("sm_100")
    assert not variant_from_file(_file(tmp_path, GOOD, "plain.cu")).arch_specific


def test_expressions_are_integer_arithmetic_and_nothing_else():
    assert Expr.parse("ceil_div(N, 32) * 2 + max(M, 3) % 5")({"N": 65, "M": 7}) == 8
    assert Expr.parse("-7 / 2")({}) == -3 and Expr.parse("7 // 2")({}) == 3  # C's division, truncating
    assert Expr.parse("A < B <= 4 and not A == 0")({"A": 1, "B": 4}) is True
    for bad in ("__import__('os')", "A.b", "A[0]", "lambda: 1", "1.5", "'x'", "open('f')", "A ** 2", "A if B else C"):
        with pytest.raises(ValueError):
            Expr.parse(bad)


@pytest.mark.parametrize("text, line, words", [
    ("extern \"C\" __global__ void sgemm() {}\n", 1, "no gpulab block; put one at the top"),
    ("/* gpulab variant\ngrid: 1\nblock: 32\n", 1, "not closed"),
    ("/* gpulab variant\nblock: 32\n*/\n", 1, "no 'grid:' line; add one"),
    ("/* gpulab variant\ngrid: 1\nblock: 32\ncolour: red\n*/\n", 4, "'colour: red' is not KEY: VALUE"),
    ("/* gpulab variant\ngrid: 1\ngrid: 2\nblock: 32\n*/\n", 3, "'grid' is given twice"),
    ("/* gpulab variant\nparam: T = 5 in 1, 2\ngrid: 1\nblock: T\n*/\n", 2, "default 5 is not among"),
    ("/* gpulab variant\nparam: T 5\ngrid: 1\nblock: T\n*/\n", 2, "must look like param: NAME = DEFAULT in"),
    ("/* gpulab variant\ngrid: ceil_div(N, X)\nblock: 32\n*/\n", 2, "uses X, which is neither a param"),
    ("/* gpulab variant\ngrid: __import__('os')\nblock: 32\n*/\n", 2, "may be called"),
    ("/* gpulab variant\ngrid: 1\nblock: 32\nmin_sm: eighty\n*/\n", 4, "min_sm is a number and a reason"),
    ("/* gpulab variant\ngrid: 1, 2, 3, 4\nblock: 32\n*/\n", 2, "grid takes 1 to 3"),
    ("/* gpulab variant\nparam: T = 1 in 1, 2\nsweep: T = 3\ngrid: 1\nblock: T\n*/\n", 3, "sweep T=3 is not among"),
    # issue 42: each of these was accepted here and ended in a traceback or a launch CUDA refuses later
    ("/* gpulab variant\ngrid: min()\nblock: 32\n*/\n", 2, "min() takes two or more values"),
    ("/* gpulab variant\ngrid: max(N)\nblock: 32\n*/\n", 2, "max() takes two or more values"),
    ("/* gpulab variant\ngrid: ceil_div(M, 16, 2)\nblock: 32\n*/\n", 2, "ceil_div() takes two values"),
    ("/* gpulab variant\ngrid: " + "+".join(["M"] * 1200) + "\nblock: 32\n*/\n", 2, "longer than 500 characters"),
    ("/* gpulab variant\ngrid: " + "-" * 50_000 + "M\nblock: 32\n*/\n", 2, "longer than 500 characters"),
    ("/* gpulab variant\ngrid: " + "-" * 40 + "M\nblock: 32\n*/\n", 2, "nested deeper than 32"),
    ("/* gpulab variant\ngrid: 1\nblock: 0\n*/\n", 3, "block x = 0: a block has 1 to 1024 threads in x"),
    ("/* gpulab variant\ngrid: -1\nblock: 32\n*/\n", 2, "grid x = -1: a grid has 1 to 2147483647 blocks in x"),
    ("/* gpulab variant\ngrid: 1, 70000\nblock: 32\n*/\n", 2, "grid y = 70000: a grid has 1 to 65535 blocks in y"),
    ("/* gpulab variant\ngrid: 10000000000000000000000000000000\nblock: 32\n*/\n", 2, "a grid has 1 to 2147483647"),
    ("/* gpulab variant\ngrid: 1\nblock: 32, 64\n*/\n", 3, "block of 2048 threads: a block has at most 1024"),
    ("/* gpulab variant\ngrid: 1\nblock: 32\nsmem: -1\n*/\n", 4, "smem = -1: dynamic shared memory is 0 to 232448 bytes"),
    ("/* gpulab variant\nname: " + "v" * 65 + "\ngrid: 1\nblock: 32\n*/\n", 2, "at most 64 characters"),
    ("/* gpulab variant\ngrid: 16\nblock: 32\ncluster: 9\n*/\n", 4, "cluster = 9: a cluster has 1 to 8 blocks"),
    ("/* gpulab variant\ngrid: 3\nblock: 32\ncluster: 2\n*/\n", 4,
     "grid x = 3: a grid in clusters of 2 has a multiple of 2 blocks in x"),
])
def test_a_malformed_block_says_where_and_what_to_write(tmp_path, text, line, words):
    path = _file(tmp_path, text)
    with pytest.raises(DeclarationError) as info:
        parse_declaration(path, ("M", "N", "K"))
    assert f"{path}:{line}:" in str(info.value) and words in str(info.value)


def test_a_cluster_is_part_of_the_launch_and_checked_at_each_shape(tmp_path):
    """`cluster:` says what the kernel's __cluster_dims__ fixes: the launch carries it (the best row's
    model counts waves over the SMs that hold whole clusters), and a grid it does not divide at some
    shape skips the config there, saying why."""
    text = GOOD.replace("block:    TILE, TILE\n", "block:    TILE, TILE\ncluster:  2\n")
    exp = get_experiment("sgemm", kernels=[_file(tmp_path, text)])
    v, params = exp.variant("mine"), {"TILE": 16, "UNROLL": 1}
    assert v.launch(params, exp.shape(100, 32, 8)).cluster == 2 and v.constraints(params, exp.shape(100, 32, 8)) is None
    assert v.constraints(params, exp.shape(100, 33, 8)) == (
        "grid x = 3 at M=100 N=33 K=8 TILE=16 UNROLL=1: a grid in clusters of 2 has a multiple of 2 blocks in x")
    plain = get_experiment("sgemm", kernels=[_file(tmp_path, GOOD, "plain.cu")]).variant("mine")
    assert plain.launch(params, exp.shape(100, 33, 8)).cluster == 1


def test_a_file_that_is_not_utf8_says_where(tmp_path):
    path = tmp_path / "mine.cu"
    path.write_bytes(GOOD.encode() + b"// \xe9t\xe9\n")
    with pytest.raises(DeclarationError, match=f"{path}:{GOOD.count(chr(10)) + 1}: byte 0xe9 is not UTF-8"):
        get_experiment("sgemm", kernels=[path])


def test_a_launch_outside_cudas_limits_at_one_shape_is_skipped_with_the_reason(tmp_path):
    """An expression over the dimensions is checked where a shape is known: that config is skipped
    at that shape, saying why; launch() itself refuses such a launch in one line."""
    exp = get_experiment("sgemm", kernels=[_file(tmp_path, GOOD.replace("ceil_div(N, TILE), ceil_div(M, TILE)",
                                                                        "ceil_div(N, TILE), M - 100"))])
    v = exp.variant("mine")
    small, big = exp.shape(64, 64, 64), exp.shape(512, 512, 512)
    assert "grid y = -36 at" in v.constraints({"TILE": 16, "UNROLL": 1}, small)
    assert v.constraints({"TILE": 16, "UNROLL": 1}, big) is None
    with pytest.raises(GpulabError, match=r"mine.cu:\d+: grid y = -36 at .*M=64"):
        v.launch({"TILE": 16, "UNROLL": 1}, small)


def test_a_variant_name_taken_or_another_experiment(tmp_path):
    with pytest.raises(GpulabError, match="'v1' is already a variant of sgemm"):
        get_experiment("sgemm", kernels=[_file(tmp_path, GOOD.replace("name:     mine", "name: v1"))])
    with pytest.raises(GpulabError, match="says 'experiment: coalesce', not sgemm"):
        get_experiment("sgemm", kernels=[_file(tmp_path, GOOD.replace("name:     mine", "experiment: coalesce"))])
    with pytest.raises(GpulabError, match="no such file"):
        variant_from_file(tmp_path / "nope.cu")


def test_an_access_model_beside_the_file(tmp_path):
    (tmp_path / "model.py").write_text("def mine(params, shape):\n    return ('called', params['TILE'], shape)\n")
    path = _file(tmp_path, GOOD.replace("*/", "access: model.py:mine\n*/"))
    v = variant_from_file(path)
    assert v.access({"TILE": 8}, "S") == ("called", 8, "S")
    v = variant_from_file(_file(tmp_path, GOOD.replace("*/", "access: gone.py:mine\n*/"), "other.cu"))
    with pytest.raises(GpulabError, match="gone.py, which does not exist"):
        v.access({}, None)


KERNEL = GOOD.replace("require:  K % UNROLL == 0 | K must be a multiple of UNROLL\n", "").replace(
    "min_sm:   80 | cp.async\n", "").replace("smem:     4 * TILE * (TILE + 1)\n", "").replace(
    "{}", """{
    const int col = blockIdx.x * TILE + threadIdx.x, row = blockIdx.y * TILE + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
}""")


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "GPULAB_NO_GPU": "1"}, cwd=cwd, timeout=300)


def test_run_compiles_a_kernel_file_beside_the_ladder(tmp_path):
    path = _file(tmp_path, KERNEL)
    r = _cli("run", "sgemm", "--kernel", str(path), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "mine" in r.stdout and "TILE=8" in r.stdout and "v9" in r.stdout
    r = _cli("list", "sgemm", "--kernel", str(path))
    assert r.returncode == 0 and "naive with a different block" in r.stdout


def test_a_compile_error_shows_nvrtcs_first_errors_with_file_and_line(tmp_path):
    import gpulab

    path = _file(tmp_path, KERNEL.replace("float acc = 0.0f;", "float acc = undefined_thing;"))
    line = KERNEL.splitlines().index("    float acc = 0.0f;") + 1
    rows = gpulab.compile_only(["sgemm"], kernels=[path])
    mine = [r for r in rows if r["variant"] == "mine"]
    assert mine and all(f"mine.cu:{line}: error" in r["skip_reason"] and "undefined_thing" in r["skip_reason"]
                        for r in mine), mine
    assert all(r.get("reg_per_thread") for r in rows if r["variant"] == "v1")  # the ladder still compiles
    r = _cli("run", "sgemm", "--kernel", str(path), cwd=tmp_path)
    assert r.returncode == 1 and "did not compile" in r.stderr and "sgemm mine TILE=8" in r.stderr
    assert "Traceback" not in r.stderr


def test_compile_only_skips_a_config_whose_launch_cuda_would_refuse_and_compiles_the_rest(tmp_path):
    """A block of TILE x 4 rows: at TILE = 32, 4,096 threads. compile_only raised on that one config
    and returned no row for any other."""
    import gpulab

    path = _file(tmp_path, KERNEL.replace("block:    TILE, TILE", "block:    TILE, TILE * 4").replace(
        "sweep:    TILE = 8, 16", "sweep:    TILE = 8, 32").replace(
        "require:  TILE * TILE <= 1024 | a block has at most 1024 threads\n", ""))
    rows = {r["params"]: r for r in gpulab.compile_only(["sgemm"], kernels=[path]) if r["variant"] == "mine"}
    assert rows["TILE=8 UNROLL=1"].get("reg_per_thread") and not rows["TILE=8 UNROLL=1"].get("skip_reason")
    assert "a block of 4096 threads" in rows["TILE=32 UNROLL=1"]["skip_reason"]
    assert "a block has at most 1024" in rows["TILE=32 UNROLL=1"]["skip_reason"]


def test_bench_with_a_bad_declaration_is_one_line(tmp_path):
    path = _file(tmp_path, "extern \"C\" __global__ void sgemm() {}\n")
    r = _cli("bench", "sgemm", "--kernel", str(path), cwd=tmp_path)
    assert r.returncode == 2 and "no gpulab block" in r.stderr and "grid:" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_profiler_child_gets_the_kernel_file(tmp_path):
    from gpulab.api import spec_of
    from gpulab.run import ncu_child

    spec = spec_of("sgemm", "mine:TILE=8", kernels=[_file(tmp_path, KERNEL)], shape="64x64x64")
    argv = ncu_child.target_argv(spec, tmp_path / "info.json")
    assert argv[argv.index("--kernel") + 1] == str(tmp_path / "mine.cu") and "TILE=8" in argv
    again = ncu_child.spec_of(ncu_child.parser().parse_args(argv[3:]))  # after python3 -m gpulab.run.ncu_child
    assert (again.label, again.params) == (spec.label, spec.params)
    assert again.experiment.kernel_files == spec.experiment.kernel_files


def test_a_spec_of_a_kernel_file_crosses_into_the_worker(tmp_path):
    """The isolated worker gets runs by reference: a --kernel variant travels as its files."""
    import pickle

    from gpulab.api import spec_of

    spec = spec_of("sgemm", "mine:TILE=8", kernels=[_file(tmp_path, KERNEL)], shape="64x64x64")
    again = pickle.loads(pickle.dumps(spec))
    assert again.label == spec.label and again.experiment.kernel_files == (str(tmp_path / "mine.cu"),)
    assert again.variant.launch(again.params, again.shape).grid == (8, 8, 1)
