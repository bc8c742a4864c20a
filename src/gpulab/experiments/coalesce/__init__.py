"""coalesce: copy a float32 M x N matrix, out = A, changing only the order in which a warp's lanes
touch memory (after the lesson "CUDA Memory Hierarchy & Optimization", docs/SOURCES.md).

Every variant computes the same thing, a bit-exact copy, and touches every address exactly once for
the read and once for the write: only the order of the lanes differs (`cols` down columns, `rows`
along rows, `stride` with the lanes STRIDE floats apart). So one reference (A itself) checks all of
them, and the bytes counted are the same for all of them.

Napkin math: no flops; each element read once and written once, 4*M*N + 4*M*N bytes.
  4096 x 4096: 67.1 MB read + 67.1 MB written. Both buffers (134 MB) exceed the H200's 60 MiB L2,
    but the output alone (64 MiB) nearly fits: some written lines are still in L2 when the timed
    window closes (ncu read 47.8 MB of DRAM writes instead of 67.1 MB on an H200), so the rate reads a
    little high.
  8192 x 8192: 268 MB read + 268 MB written, 4.5x the L2 each way: DRAM-bound. At the H200's
    ~4.2 TB/s copy ceiling that is ~128 us; `rows` should take >= 95% of the ceiling.
The stride sweep counts the same 8*M*N bytes at every STRIDE: the GB/s it reports is the useful
copy rate, so the curve shows directly what each stride costs.
"""

from __future__ import annotations

import numpy as np

from gpulab.arith import cdiv
from gpulab.check import compare_exact
from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Launch, Param, Params, Shape, Variant
from gpulab.experiments.coalesce.access import cols_access, rows_access, stride_access
from gpulab.experiments.napkin import napkin_columns

THREADS = 256
STRIDES = (1, 2, 4, 8, 16, 32, 64, 128)
MAX_ELEMENTS = (1 << 31) - 1  # the cols and stride kernels index with 32-bit unsigned math


def _elements(s: Shape) -> int:
    return s["M"] * s["N"]


def _one_per_thread(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(_elements(s), THREADS), 1, 1), block=(THREADS, 1, 1))


def _rows_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(_elements(s), THREADS * p["VEC"]), 1, 1), block=(THREADS, 1, 1))


class Coalesce(Experiment):
    name = "coalesce"
    title = "float32 matrix copy: lanes along rows, down columns, or STRIDE floats apart"
    dims = ("M", "N")
    entry = "coalesce"
    baseline = "cols"
    bound = "memory"
    default_shapes = ((4096, 4096), (8192, 8192))
    test_shapes = ((1, 1), (1, 37), (37, 1), (333, 517), (1000, 4097), (4096, 4096), (8192, 8192))
    max_dim = 1 << 20

    variants = (
        Variant(
            name="cols",
            file="v0_cols.cu",
            summary="lanes walk down a column: every lane in its own sector (the order to avoid)",
            launch=_one_per_thread,
            access=cols_access,
        ),
        Variant(
            name="rows",
            file="v1_rows.cu",
            summary="lanes walk along a row: contiguous, coalesced (VEC floats per thread)",
            launch=_rows_launch,
            access=rows_access,
            params=(Param("VEC", (1, 4), 1, "floats per thread; 4 = one 16-byte load and store"),),
            sweep={"VEC": (1, 4)},
        ),
        Variant(
            name="stride",
            file="v2_stride.cu",
            summary="lanes STRIDE floats apart, the chunk's warps covering every element",
            launch=_one_per_thread,
            access=stride_access,
            params=(Param("STRIDE", STRIDES, 1, "floats between neighbouring lanes of a warp"),),
            sweep={"STRIDE": STRIDES},
        ),
    )

    def validate_shape(self, shape: Shape) -> None:
        super().validate_shape(shape)
        if _elements(shape) > MAX_ELEMENTS:
            raise GpulabError(
                f"coalesce: {shape.label} has {_elements(shape):,} elements; at most {MAX_ELEMENTS:,} "
                "(32-bit indices), e.g. 16384x16384"
            )

    def bytes_moved(self, shape: Shape) -> int:
        return 2 * 4 * _elements(shape)

    def device_bytes(self, shape: Shape) -> int:
        # A and out, plus the check's float64 copies of both and its mask.
        return (4 + 4 + 8 + 8 + 1) * _elements(shape)

    def make_inputs(self, shape: Shape, rng: np.random.Generator, exact: bool) -> dict:
        size = (shape["M"], shape["N"])
        if exact:
            a = rng.integers(-1000, 1000, size=size, dtype=np.int32).astype(np.float32)
        else:
            # Distinct-looking random floats: a copy from the wrong address reads a different value.
            a = (rng.random(size, dtype=np.float32) * 2.0 - 1.0).astype(np.float32, copy=False)
        return {"A": a}

    def output(self, shape: Shape, xp):
        return xp.full((shape["M"], shape["N"]), xp.nan, dtype=xp.float32)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        return (inputs["A"], out, np.int32(shape["M"]), np.int32(shape["N"]))

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        # A copy is exact in both modes: every element must equal its source bit for bit.
        return compare_exact(out, inputs["A"], xp)

    def records_extra(self, shape: Shape, params: Params) -> dict:
        n = 4 * _elements(shape)
        return napkin_columns(n, n)


EXPERIMENT = Coalesce()
