"""transpose: out = A^T for a float32 M x N matrix A (row-major), out N x M. An experiment written
against gpulab's public contract only (docs/contract.md), found through GPULAB_PATH:

    GPULAB_PATH=examples gpulab list transpose
    GPULAB_PATH=examples gpulab bench transpose --shape 8192x8192

The ladder (one .cu file each, declaring itself in a /* gpulab variant */ block):
  naive   one thread per element: coalesced reads, writes 32 sectors per instruction
  tile    a 32x32 tile staged in shared memory: coalesced both ways, 32-way bank conflicts
  padded  the tile padded to 33 columns: no bank conflicts
  vec     the padded tile (32 or 64 a side) moved as float4 (LDG.128 / STG.128), several per thread
  cupy    CuPy's own transposed copy (cupy.copyto(out, A.T)), timed beside as the library row

Inputs: A with random floats (or small integers with --exact): a value read from the wrong place is
a different value. The reference is A.T itself, so the check is exact in both modes (a transpose
does no arithmetic; float64 would add nothing).

Napkin math: no flops; every element read once and written once, 4*M*N + 4*M*N bytes. At 8192 x
8192 that is 268 MB each way, 4.5x the H200's 60 MiB L2 each: DRAM-bound, ~125 us at the ~4.3 TB/s
copy ceiling. The rate reported is those bytes over the time, read against the copy ceiling.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpulab.check import compare_exact
from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Params, Shape
from gpulab.experiments.declared import variant_from_file

from .access import naive_access, tile_access, vec_access

HERE = Path(__file__).resolve().parent
MAX_ELEMENTS = (1 << 31) - 1  # the kernels index rows and columns with int


class Transpose(Experiment):
    name = "transpose"
    title = "float32 matrix transpose out = A^T (row-major)"
    dims = ("M", "N")
    entry = "transpose"
    baseline = "naive"
    bound = "memory"
    default_shapes = ((8192, 8192), (4096, 4096))
    # Ragged: M and N multiples of 4 but not of 32 (vec's float4 path, cut tiles), then neither
    # (vec's scalar path); 1 x n and n x 1 are the thinnest tiles there are.
    ragged_shapes = ((1000, 1532), (333, 517))
    test_shapes = ((1, 1), (1, 37), (37, 1), (333, 517), (1000, 1532), (1024, 1024), (8192, 8192))
    max_dim = 1 << 20

    variants = (
        variant_from_file(HERE / "naive.cu", access=naive_access),
        variant_from_file(HERE / "tile.cu", access=tile_access(pad=0)),
        variant_from_file(HERE / "padded.cu", access=tile_access(pad=1)),
        variant_from_file(HERE / "vec.cu", access=vec_access),
    )

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if shape["M"] * shape["N"] > MAX_ELEMENTS:
            raise GpulabError(f"transpose: {shape.label} has more than {MAX_ELEMENTS:,} elements; "
                              "choose a smaller shape, e.g. --shape 16384x16384")

    def bytes_moved(self, shape: Shape) -> int:
        return 2 * 4 * shape["M"] * shape["N"]

    def device_bytes(self, shape: Shape) -> int:
        # A and out, plus the check's float64 copies of both and its mask.
        return (4 + 4 + 8 + 8 + 1) * shape["M"] * shape["N"]

    def make_inputs(self, shape: Shape, rng: np.random.Generator, exact: bool) -> dict:
        size = (shape["M"], shape["N"])
        if exact:
            return {"A": rng.integers(-1000, 1000, size=size).astype(np.float32)}
        return {"A": rng.uniform(-1.0, 1.0, size=size).astype(np.float32)}

    def output(self, shape: Shape, xp):
        return xp.full((shape["N"], shape["M"]), xp.nan, dtype=xp.float32)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        return (inputs["A"], out, np.int32(shape["M"]), np.int32(shape["N"]))

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        return compare_exact(out, inputs["A"].T, xp)  # exact in both modes: nothing is computed

    def vendor_baselines(self) -> dict:
        return {"cupy": _cupy_transpose}


def _cupy_transpose(inputs: dict, out, shape: Shape) -> None:
    """CuPy's elementwise copy from the transposed view: the library's own transpose kernel."""
    import cupy

    cupy.copyto(out, inputs["A"].T)


EXPERIMENT = Transpose()
