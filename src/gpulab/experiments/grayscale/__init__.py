"""grayscale: RGBA uint8 -> gray uint8, four ways of walking the image (NVIDIA's Nsight Compute memory talk, docs/SOURCES.md), and a fifth that
keeps several 16-byte loads in flight per thread.

The image is packed (row pitch = 4*width bytes), row-major, RGBA in memory order. The gray value is
BT.601 luma in 8-bit fixed point,

    gray = (77*R + 150*G + 29*B + 128) >> 8        (alpha ignored)

weights 77/256, 150/256, 29/256 (0.301, 0.586, 0.113) summing to 1, so white stays 255, and + 128
rounds half up. Kernels and the numpy reference do the same integer arithmetic, so the check is
exact in both modes.

Napkin math: no flops that matter; 4 bytes read and 1 byte written per pixel.
  3840 x 2160: 33.2 MB read + 8.3 MB written = 41.5 MB, which fits in the H200's 62.9 MB L2. The
    flush makes the reads cold, but the writes may still sit in L2 when the timed window closes.
  7680 x 4320: 132.7 MB read + 33.2 MB written = 165.9 MB, 2.6x the L2: DRAM-bound; ~40 us at the
    ~4.2 TB/s copy ceiling.

Every element written: a uint8 output has no NaN to poison it with, so the output is poisoned with
one value here and the harness (Lab.verify) launches a second time into a buffer poisoned with its
complement: a pixel the kernel never writes differs between the two launches, whatever its true
value. See gpulab.run.lab.merge_poisoned.
"""

from __future__ import annotations

import numpy as np

from gpulab.arith import cdiv
from gpulab.check import compare_exact
from gpulab.experiments.base import Experiment, Launch, Param, Params, Shape, Variant
from gpulab.experiments.grayscale.access import column_access, multi_access, row_access, vec4_access, wide_access
from gpulab.experiments.napkin import napkin_columns

THREADS = 256
POISON = 0x5A  # the second launch uses ~0x5A = 0xA5
WEIGHTS = (77, 150, 29)  # R, G, B, out of 256


def _pixels(s: Shape) -> int:
    return s["width"] * s["height"]


def _column_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(s["width"], cdiv(s["height"], THREADS), 1), block=(1, THREADS, 1))


def _row_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(s["width"], THREADS), s["height"], 1), block=(THREADS, 1, 1))


def _multi_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(_pixels(s), THREADS * p["PIX"]), 1, 1), block=(THREADS, 1, 1))


def _vector_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(_pixels(s), THREADS * 4), 1, 1), block=(THREADS, 1, 1))


def _wide_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(_pixels(s), THREADS * 4 * p["V"]), 1, 1), block=(THREADS, 1, 1))


def reference(rgba, xp):
    """Gray uint8 (height x width) from RGBA uint8 (height x width x 4): the stated integer rule."""
    wr, wg, wb = WEIGHTS
    acc = rgba[..., 0].astype(xp.uint32) * wr
    acc += rgba[..., 1].astype(xp.uint32) * wg
    acc += rgba[..., 2].astype(xp.uint32) * wb
    acc += 128
    return (acc >> 8).astype(xp.uint8)


class Grayscale(Experiment):
    name = "grayscale"
    title = "RGBA uint8 -> gray uint8 (BT.601 luma, 8-bit fixed point, round half up)"
    dims = ("width", "height")
    entry = "grayscale"
    baseline = "column"
    bound = "memory"
    default_shapes = ((3840, 2160), (7680, 4320))
    test_shapes = ((1, 1), (3, 1), (1, 3), (5, 3), (7, 257), (1001, 333), (3839, 2161), (3840, 2160),
                   (7680, 4320))
    # The row walk puts the height in gridDim.y (at most 65535); every variant accepts the same shapes.
    max_dim = 65535

    variants = (
        Variant(
            name="column",
            file="v0_column_walk.cu",
            summary="a block's threads walk down a column (the talk's unaligned baseline)",
            launch=_column_launch,
            access=column_access,
        ),
        Variant(
            name="row",
            file="v1_row_walk.cu",
            summary="a block's threads walk along a row: coalesced",
            launch=_row_launch,
            access=row_access,
        ),
        Variant(
            name="multi",
            file="v2_multi_pixel.cu",
            summary="PIX consecutive pixels per thread, a 4-byte load and a 1-byte store each",
            launch=_multi_launch,
            access=multi_access,
            params=(Param("PIX", (2, 4, 8), 4, "consecutive pixels per thread"),),
            sweep={"PIX": (2, 4, 8)},
        ),
        Variant(
            name="vec4",
            file="v3_vectorized.cu",
            summary="four pixels per thread: one 16-byte load, one 4-byte store (any width: flat + tail)",
            launch=_vector_launch,
            access=vec4_access,
        ),
        Variant(
            name="wide",
            file="v4_wide.cu",
            summary="V groups of four pixels per thread: V 16-byte loads in flight, V coalesced 4-byte stores",
            launch=_wide_launch,
            access=wide_access,
            params=(Param("V", (1, 2, 4), 2, "groups of 4 pixels per thread: 16-byte loads in flight"),
                    Param("HINT", (0, 1), 0, "1: loads evict-first (ld.global.cs)")),
            sweep={"V": (1, 2, 4), "HINT": (0, 1)},
        ),
    )

    def bytes_moved(self, shape: Shape) -> int:
        return 5 * _pixels(shape)

    def device_bytes(self, shape: Shape) -> int:
        # input and two poisoned outputs; the merged int64 output; the reference (uint32 accumulator
        # and a uint32 channel at a time, uint8 result); compare_exact's mask.
        return (4 + 1 + 1 + 8 + 4 + 4 + 1 + 1) * _pixels(shape)

    def make_inputs(self, shape: Shape, rng: np.random.Generator, exact: bool) -> dict:
        # uint8 pixels are exact either way: both modes draw every channel uniformly from 0..255.
        rgba = rng.integers(0, 256, size=(shape["height"], shape["width"], 4), dtype=np.uint8)
        return {"rgba": rgba}

    def output(self, shape: Shape, xp):
        return xp.full((shape["height"], shape["width"]), POISON, dtype=xp.uint8)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        return (inputs["rgba"], out, np.int32(shape["width"]), np.int32(shape["height"]))

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        # `out` may be the harness's merge of two differently poisoned launches (int64, -2^62 where
        # they differ); that never equals a uint8 reference value.
        return compare_exact(out, reference(inputs["rgba"], xp), xp)

    def records_extra(self, shape: Shape, params: Params) -> dict:
        return napkin_columns(4 * _pixels(shape), _pixels(shape))


EXPERIMENT = Grayscale()
