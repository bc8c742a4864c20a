"""`gpulab new NAME`: a working experiment package to start from, outside gpulab's own files.

It writes DIR/NAME/ with the four things an experiment is (docs/contract.md): `__init__.py` (the
problem: inputs, the float64 reference, the check, flops and bytes, default and test shapes),
`v0_naive.cu` (one variant, declaring itself in its gpulab block), `access.py` (that variant's
access model, for predict, profile and fidelity) and `test_NAME.py` (CPU tests that pass as
written, and a GPU test). Three starting points (--like): an elementwise sum of two matrices
(`copy`, memory-bound), a matrix multiply (`sgemm`, compute-bound), a three-point moving average
(`stencil`, neighbours). Then:

    GPULAB_PATH=DIR gpulab list NAME
    GPULAB_PATH=DIR gpulab run NAME            (compiles and prints resources, with or without a GPU)
    GPULAB_PATH=DIR gpulab predict NAME v0
    GPULAB_PATH=DIR python -m pytest DIR/NAME
"""

from __future__ import annotations

import importlib.util
import keyword
import re
import shutil
import tempfile
from pathlib import Path

from gpulab.errors import CompileError, GpulabError
from gpulab.experiments import all_experiments
from gpulab.gpu.compile import compile_kernel

KINDS = ("copy", "sgemm", "stencil")


def new(name: str, directory: str | Path = ".", like: str = "copy") -> Path:
    """Write the package DIR/NAME from the `like` template; its folder. Refuses to overwrite, and
    refuses a name the package or its kernel could not carry (nothing is written then)."""
    if not isinstance(name, str):
        raise GpulabError(f"an experiment is named by text, e.g. gpulab.new('mine'); got {name!r:.60}")
    if not isinstance(directory, (str, Path)):
        raise GpulabError(f"directory is a folder's path, e.g. '.' or 'kernels'; got {directory!r:.60}")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise GpulabError(f"'{name}' cannot name an experiment: use lower-case letters, digits and _, starting "
                          "with a letter (it is a Python package and a CUDA function name)")
    if like not in KINDS:
        raise GpulabError(f"--like {like}: choose one of {', '.join(KINDS)}")
    if name in {e.name for e in all_experiments()}:
        raise GpulabError(f"an experiment named '{name}' already exists (gpulab list); choose another name")
    if (spec := importlib.util.find_spec(name)) is not None:  # discovery would import that module instead
        raise GpulabError(f"'{name}' is already the name of a Python module ({spec.origin or 'a namespace package'}), "
                          "and an experiment is imported by its name; choose another name")
    folder = Path(directory).expanduser() / name
    if folder.exists():
        raise GpulabError(f"{folder} already exists; choose another name or --dir (nothing was written)")
    check_kernel_name(name)
    words = {"name": name, "Class": "".join(part.title() for part in name.split("_")) or "Mine"}
    files = {k: v.replace("{{name}}", words["name"]).replace("{{Class}}", words["Class"])
             for k, v in TEMPLATES[like].items()}
    files["test_{{name}}.py".replace("{{name}}", name)] = files.pop("test_{{name}}.py")
    folder.mkdir(parents=True)
    try:
        for file_name, text in files.items():
            (folder / file_name).write_text(text.lstrip("\n"))
    except OSError as exc:  # a full disk, say: no half package to block the next try
        shutil.rmtree(folder, ignore_errors=True)
        raise GpulabError(f"cannot write {exc.filename or folder}: {exc.strerror or exc}; nothing was left behind") from None
    return folder


def check_kernel_name(name: str) -> None:
    """Every variant defines `extern "C" __global__ void NAME(...)`: a C++ keyword (float) or a
    function CUDA already declares (max, sqrt, printf) cannot be that name, so NVRTC is asked first."""
    with tempfile.TemporaryDirectory() as scratch:
        probe = Path(scratch) / f"{name}.cu"
        probe.write_text(f'#include "common.cuh"\nextern "C" __global__ void {name}(float* out) {{ out[0] = 1.0f; }}\n')
        try:
            compile_kernel(probe, name)
        except CompileError as exc:
            raise GpulabError(f"'{name}' cannot be the kernel's name: NVRTC refuses `extern \"C\" __global__ void "
                              f"{name}(...)` ({str(exc).split(': ', 1)[-1][:120]}); choose another name") from None


# -- the templates: {{name}} and {{Class}} are filled in ------------------------------------------
_TEST = '''
"""Tests of the {{name}} experiment: they pass as generated; keep them passing as you add variants.

    GPULAB_PATH=<the folder holding {{name}}/> python -m pytest <that folder>/{{name}}
CPU: every variant compiles without spills, its access model matches exhaustive evaluation at the
test shapes, the check passes the reference and catches a wrong output. GPU (skipped without one):
every variant is correct at every test shape. They use gpulab's Python API only.
"""

import os
from pathlib import Path

import numpy as np
import pytest

# The folder that holds this package is where gpulab finds it (GPULAB_PATH): added when missing,
# so `python -m pytest` works from anywhere.
_HOME = str(Path(__file__).resolve().parent.parent)
if _HOME not in os.environ.get("GPULAB_PATH", "").split(os.pathsep):
    os.environ["GPULAB_PATH"] = os.pathsep.join(filter(None, (os.environ.get("GPULAB_PATH"), _HOME)))

import gpulab  # noqa: E402  (after GPULAB_PATH is set)

EXP = gpulab.experiment("{{name}}")


def test_compiles_without_spills():
    rows = gpulab.compile_only(["{{name}}"], arch="sm_90")
    assert {r["variant"] for r in rows} == {v.name for v in EXP.variants}
    assert all(r.get("reg_per_thread", 0) > 0 and r.get("spill_stores_bytes") == 0 for r in rows), rows


@pytest.mark.parametrize("variant", [v.name for v in EXP.variants if v.access is not None])
@pytest.mark.parametrize("dims", EXP.test_shapes)
def test_access_model_symmetry_is_exact(variant, dims):
    shape = "x".join(map(str, dims))
    fast = gpulab.predict("{{name}}", variant, shape=shape)
    slow = gpulab.predict("{{name}}", variant, shape=shape, exhaustive=True)
    assert list(fast.instructions) == list(slow.instructions)
    assert fast.summary["dram_compulsory_bytes"] == EXP.bytes_moved(EXP.shape(*dims))


def test_check_passes_the_reference_and_catches_a_wrong_output():
    shape = EXP.shape(*EXP.test_shapes[1])
    inputs = EXP.make_inputs(shape, np.random.default_rng(0), exact=False)
    good = EXP.reference(inputs, shape, np).astype(np.float32)
    assert EXP.check(good, inputs, shape, False, np).ok
    bad = good.copy()
    bad.flat[-1] += 1.0
    assert not EXP.check(bad, inputs, shape, False, np).ok


def test_correct_on_the_test_shapes_gpu():
    if gpulab.card() is None:
        pytest.skip("needs an NVIDIA GPU")
    rows = gpulab.verify("{{name}}")  # every variant at every test shape, checked, not timed
    assert rows and all(r.get("correct") for r in rows), [r for r in rows if not r.get("correct")]
'''

_COPY_INIT = '''
"""{{name}}: out = A + B for float32 M x N matrices (row-major): a memory-bound starting point.

What an experiment defines (docs/contract.md): its name, dimensions, the kernel entry every variant
defines, its variants, the shapes it runs and tests, its inputs, the reference and the check, and
the flops and bytes that turn a time into rates.

Napkin math: M*N additions (counted as 0 flops: memory-bound); A and B read once, out written once:
12*M*N bytes. At 8192 x 8192 that is 805 MB, far beyond any L2: a copy-speed problem.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpulab.check import compare_float
from gpulab.experiments.base import Experiment, Params, Shape
from gpulab.experiments.declared import variant_from_file

from .access import naive_access

HERE = Path(__file__).resolve().parent


class {{Class}}(Experiment):
    name = "{{name}}"
    title = "float32 elementwise sum out = A + B"
    dims = ("M", "N")
    entry = "{{name}}"                 # the extern "C" __global__ function every variant defines
    baseline = "v0"                    # speedups are over this variant
    bound = "memory"                   # rates are read against the card's copy ceiling
    default_shapes = ((4096, 4096), (8192, 8192))   # what `gpulab run` and `bench` use
    test_shapes = ((1, 1), (37, 333), (1000, 1531))  # small and ragged: every guard is exercised
    ragged_shapes = ((1000, 1531),)                  # what `gpulab fidelity` measures besides
    max_dim = 1 << 15

    variants = (
        variant_from_file(HERE / "v0_naive.cu", access=naive_access),
    )

    def bytes_moved(self, shape: Shape) -> int:
        return 3 * 4 * shape["M"] * shape["N"]

    def device_bytes(self, shape: Shape) -> int:
        return (3 * 4 + 3 * 8 + 1) * shape["M"] * shape["N"]  # A, B, out and the check's float64 copies

    def make_inputs(self, shape: Shape, rng, exact: bool) -> dict:
        size = (shape["M"], shape["N"])
        if exact:  # small integers: every sum is exact in float32
            return {k: rng.integers(-100, 100, size=size).astype(np.float32) for k in "AB"}
        return {k: rng.uniform(-1.0, 1.0, size=size).astype(np.float32) for k in "AB"}

    def output(self, shape: Shape, xp):
        return xp.full((shape["M"], shape["N"]), xp.nan, dtype=xp.float32)  # NaN: unwritten fails

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        return (inputs["A"], inputs["B"], out, np.int32(shape["M"]), np.int32(shape["N"]))

    def reference(self, inputs: dict, shape: Shape, xp):
        return inputs["A"].astype(xp.float64) + inputs["B"].astype(xp.float64)

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        return compare_float(out, self.reference(inputs, shape, xp), xp)


EXPERIMENT = {{Class}}()
'''

_COPY_CU = '''
/* gpulab variant
name:    v0
summary: naive: one thread per element
param:   THREADS = 256 in 128, 256, 512 | threads per block
grid:    ceil_div(M * N, THREADS)
block:   THREADS
*/
// The first rung: thread i adds element i. A warp reads 128 contiguous bytes of A and of B and
// writes 128 of out: 4 sectors per instruction, every byte used. Expected: near the copy ceiling
// once the matrices are much larger than L2. Shapes: any M, N >= 1 (the guard below).

extern "C" __global__ void {{name}}(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ out,
                                    int M, int N) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)M * N) out[i] = A[i] + B[i];
}
'''

_COPY_ACCESS = '''
"""The access model of v0_naive.cu (see gpulab.model.predict): one LDG of A, one of B and one STG
of out per thread, behind the `i < M*N` guard. Blocks move by THREADS floats, a whole number of
128-byte lines for every THREADS offered, so every block counts alike except the last (cut)."""

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import Instruction, KernelAccess, buffers, shifted

F32 = 4


def naive_access(params: Params, shape: Shape) -> KernelAccess:
    threads, total = params["THREADS"], shape["M"] * shape["N"]
    blocks = cdiv(total, threads)
    base = buffers(A=F32 * total, B=F32 * total, out=F32 * total)
    classes = {"x": shifted(blocks, F32 * threads, edge=(blocks - 1,))}

    def i(ix):
        return ix.bx * threads + ix.tid

    def guard(ix):
        return i(ix) < total

    instructions = tuple(
        Instruction(f"{'stg' if array == 'out' else 'ldg'} {array}[i]", "global",
                    "store" if array == "out" else "load", F32,
                    address=lambda ix, array=array: base[array] + F32 * i(ix), active=guard, blocks=classes)
        for array in ("A", "B", "out"))
    return KernelAccess(grid=(blocks, 1, 1), block=(threads, 1, 1), instructions=instructions,
                        flops=0.0, dram_compulsory_bytes=3 * F32 * total)
'''

_SGEMM_INIT = '''
"""{{name}}: C = A * B in float32, row-major, A M x K, B K x N: a compute-bound starting point.

What an experiment defines (docs/contract.md): its name, dimensions, the kernel entry every variant
defines, its variants, the shapes it runs and tests, its inputs, the reference and the check, and
the flops and bytes that turn a time into rates.

Napkin math: 2*M*N*K flops; A and B read once and C written once, 4*(M*K + K*N + M*N) bytes. At
2048^3: 17 GFLOP against 50 MB, 341 flop per byte: compute-bound on any card.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpulab.check import compare_exact, compare_float
from gpulab.experiments.base import Experiment, Params, Shape
from gpulab.experiments.declared import variant_from_file

from .access import naive_access

HERE = Path(__file__).resolve().parent


class {{Class}}(Experiment):
    name = "{{name}}"
    title = "float32 matrix multiply C = A*B (row-major)"
    dims = ("M", "N", "K")
    entry = "{{name}}"                 # the extern "C" __global__ function every variant defines
    baseline = "v0"
    bound = "compute"                  # rates are read against the card's FP32 FMA ceiling
    default_shapes = ((1024, 1024, 1024), (2048, 2048, 2048))
    test_shapes = ((1, 1, 1), (17, 33, 65), (100, 153, 77))
    ragged_shapes = ((300, 388, 196),)
    max_dim = 1 << 14

    variants = (
        variant_from_file(HERE / "v0_naive.cu", access=naive_access),
    )

    def flops(self, shape: Shape) -> float:
        return 2.0 * shape["M"] * shape["N"] * shape["K"]

    def bytes_moved(self, shape: Shape) -> int:
        m, n, k = shape.values
        return 4 * (m * k + k * n + m * n)

    def device_bytes(self, shape: Shape) -> int:
        m, n, k = shape.values
        return 12 * (m * k + k * n + m * n)  # float32 buffers and the float64 reference's copies

    def make_inputs(self, shape: Shape, rng, exact: bool) -> dict:
        m, n, k = shape.values
        if exact:  # |a*b| <= 6: sums stay exact float32 integers for K up to 2^24 / 6
            return {"A": rng.integers(-3, 4, size=(m, k)).astype(np.float32),
                    "B": rng.integers(-2, 3, size=(k, n)).astype(np.float32)}
        return {"A": rng.uniform(-1, 1, size=(m, k)).astype(np.float32),
                "B": rng.uniform(-1, 1, size=(k, n)).astype(np.float32)}

    def output(self, shape: Shape, xp):
        return xp.full((shape["M"], shape["N"]), xp.nan, dtype=xp.float32)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        m, n, k = shape.values
        return (np.int32(m), np.int32(n), np.int32(k), inputs["A"], inputs["B"], out)

    def reference(self, inputs: dict, shape: Shape, xp):
        return inputs["A"].astype(xp.float64) @ inputs["B"].astype(xp.float64)

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        ref = self.reference(inputs, shape, xp)
        return compare_exact(out, ref, xp) if exact else compare_float(out, ref, xp)

    def vendor_baselines(self) -> dict:
        return {"cublas": _cublas}


def _cublas(inputs: dict, out, shape: Shape) -> None:
    import cupy

    cupy.matmul(inputs["A"], inputs["B"], out=out)


EXPERIMENT = {{Class}}()
'''

_SGEMM_CU = '''
/* gpulab variant
name:    v0
summary: naive: one thread per element of C, k loop over global memory
param:   BLOCK = 16 in 8, 16, 32 | the block is BLOCK x BLOCK threads
grid:    ceil_div(N, BLOCK), ceil_div(M, BLOCK)
block:   BLOCK, BLOCK
*/
// The first rung: thread (col, row) walks k, reading A[row][k] (the same address for a warp's
// lanes of one row: a broadcast) and B[k][col] (32 neighbouring floats). Every element of A and B
// is read from global memory N and M times: L1 and L2 hide part of it, the FMA rate is far away.
// Shapes: any M, N, K >= 1.

extern "C" __global__ void {{name}}(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C) {
    const int col = blockIdx.x * BLOCK + threadIdx.x;
    const int row = blockIdx.y * BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
}
'''

_SGEMM_ACCESS = '''
"""The access model of v0_naive.cu (see gpulab.model.predict): per k step one LDG of A and one of
B, then one STG of C, behind the early return of threads outside C. Symmetry: k moves A's address
by 4 bytes (period 32 steps) and B's by 4N; blocks move by BLOCK floats along x and BLOCK rows
along y; the blocks cut by the edges of C stand alone."""

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, ragged, shifted

F32 = 4


def naive_access(params: Params, shape: Shape) -> KernelAccess:
    b, (M, N, K) = params["BLOCK"], shape.values
    nx, ny = cdiv(N, b), cdiv(M, b)
    base = buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N)

    def row(i):
        return i.by * b + i.ty

    def col(i):
        return i.bx * b + i.tx

    def inside(i):
        return (row(i) < M) & (col(i) < N)

    def blocks(x_stride, y_stride):
        return {"x": shifted(nx, x_stride, edge=ragged(nx, b, N)), "y": shifted(ny, y_stride, edge=ragged(ny, b, M))}

    instructions = (
        Instruction("ldg A[row][k]", "global", "load", F32, address=lambda i: base["A"] + F32 * (row(i) * K + i.k),
                    active=inside, loops=(Loop("k", K, shifted(K, F32)),), blocks=blocks(0, F32 * b * K)),
        Instruction("ldg B[k][col]", "global", "load", F32, address=lambda i: base["B"] + F32 * (i.k * N + col(i)),
                    active=inside, loops=(Loop("k", K, shifted(K, F32 * N)),), blocks=blocks(F32 * b, 0)),
        Instruction("stg C[row][col]", "global", "store", F32, address=lambda i: base["C"] + F32 * (row(i) * N + col(i)),
                    active=inside, blocks=blocks(F32 * b, F32 * b * N)),
    )
    return KernelAccess(grid=(nx, ny, 1), block=(b, b, 1), instructions=instructions,
                        flops=2.0 * M * N * K, dram_compulsory_bytes=F32 * (M * K + K * N + M * N))
'''

_STENCIL_INIT = '''
"""{{name}}: out[i] = (x[i-1] + x[i] + x[i+1]) / 3 over N floats, x = 0 outside [0, N): a
starting point with neighbours (halos).

What an experiment defines (docs/contract.md): its name, dimensions, the kernel entry every variant
defines, its variants, the shapes it runs and tests, its inputs, the reference and the check, and
the flops and bytes that turn a time into rates.

Napkin math: 3 flops per output (two adds, one division); x read once and out written once from
DRAM, 8*N bytes (the neighbours come from cache). At N = 2^26: 537 MB, DRAM-bound.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpulab.check import compare_float
from gpulab.experiments.base import Experiment, Params, Shape
from gpulab.experiments.declared import variant_from_file

from .access import naive_access

HERE = Path(__file__).resolve().parent


class {{Class}}(Experiment):
    name = "{{name}}"
    title = "three-point moving average with zero padding"
    dims = ("N",)
    entry = "{{name}}"
    baseline = "v0"
    bound = "memory"
    default_shapes = ((1 << 24,), (1 << 26,))
    test_shapes = ((1,), (2,), (1000,), (100_003,))
    ragged_shapes = ((100_003,),)
    max_dim = 1 << 30

    variants = (
        variant_from_file(HERE / "v0_naive.cu", access=naive_access),
    )

    def flops(self, shape: Shape) -> float:
        return 3.0 * shape["N"]

    def bytes_moved(self, shape: Shape) -> int:
        return 8 * shape["N"]

    def device_bytes(self, shape: Shape) -> int:
        return (8 + 24 + 1) * shape["N"]

    def make_inputs(self, shape: Shape, rng, exact: bool) -> dict:
        if exact:  # sums of small integers are exact; the division by 3 is correctly rounded both sides
            return {"x": rng.integers(0, 16, size=shape["N"]).astype(np.float32)}
        return {"x": rng.uniform(-1, 1, size=shape["N"]).astype(np.float32)}

    def output(self, shape: Shape, xp):
        return xp.full(shape["N"], xp.nan, dtype=xp.float32)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        return (inputs["x"], out, np.int32(shape["N"]))

    def reference(self, inputs: dict, shape: Shape, xp):
        x = inputs["x"].astype(xp.float64)
        padded = xp.concatenate([xp.zeros(1), x, xp.zeros(1)])
        return (padded[:-2] + padded[1:-1] + padded[2:]) / 3.0

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        return compare_float(out, self.reference(inputs, shape, xp), xp)


EXPERIMENT = {{Class}}()
'''

_STENCIL_CU = '''
/* gpulab variant
name:    v0
summary: naive: each thread reads its three inputs from global memory
param:   THREADS = 256 in 128, 256, 512 | threads per block
grid:    ceil_div(N, THREADS)
block:   THREADS
*/
// The first rung: thread i reads x[i-1], x[i], x[i+1] (each guarded to [0, N)) and writes out[i].
// Neighbouring lanes read overlapping addresses: L1 serves two of every three reads.
// Shapes: any N >= 1.

extern "C" __global__ void {{name}}(const float* __restrict__ x, float* __restrict__ out, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    const float left = i > 0 ? x[i - 1] : 0.0f;
    const float right = i + 1 < N ? x[i + 1] : 0.0f;
    out[i] = (left + x[i] + right) / 3.0f;
}
'''

_STENCIL_ACCESS = '''
"""The access model of v0_naive.cu (see gpulab.model.predict): three predicated LDG (x[i+d] for
d = -1, 0, 1, each where 0 <= i+d < N) and one STG, behind the early return of i >= N. Blocks move
by THREADS floats (whole lines); the first (its left neighbour is outside) and the last two (the
right neighbour, the cut) stand alone."""

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, every, shifted

F32 = 4


def naive_access(params: Params, shape: Shape) -> KernelAccess:
    threads, n = params["THREADS"], shape["N"]
    blocks = cdiv(n, threads)
    base = buffers(x=F32 * n, out=F32 * n)
    classes = {"x": shifted(blocks, F32 * threads, edge={0, blocks - 2, blocks - 1})}

    def i(ix):
        return ix.bx * threads + ix.tid

    def j(ix):  # the tap: d = -1, 0, 1
        return i(ix) + ix.d - 1

    instructions = (
        Instruction("ldg x[i+d]", "global", "load", F32, address=lambda ix: base["x"] + F32 * j(ix),
                    active=lambda ix: (i(ix) < n) & (j(ix) >= 0) & (j(ix) < n),
                    loops=(Loop("d", 3, every(3)),), blocks=classes),
        Instruction("stg out[i]", "global", "store", F32, address=lambda ix: base["out"] + F32 * i(ix),
                    active=lambda ix: i(ix) < n, blocks=classes),
    )
    return KernelAccess(grid=(blocks, 1, 1), block=(threads, 1, 1), instructions=instructions,
                        flops=3.0 * n, dram_compulsory_bytes=2 * F32 * n)
'''

TEMPLATES = {
    "copy": {"__init__.py": _COPY_INIT, "v0_naive.cu": _COPY_CU, "access.py": _COPY_ACCESS, "test_{{name}}.py": _TEST},
    "sgemm": {"__init__.py": _SGEMM_INIT, "v0_naive.cu": _SGEMM_CU, "access.py": _SGEMM_ACCESS,
              "test_{{name}}.py": _TEST},
    "stencil": {"__init__.py": _STENCIL_INIT, "v0_naive.cu": _STENCIL_CU, "access.py": _STENCIL_ACCESS,
                "test_{{name}}.py": _TEST},
}
