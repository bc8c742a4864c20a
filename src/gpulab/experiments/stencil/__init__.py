"""stencil: the moving average of radius R over N floats, from global memory, a shared tile, a
shared tile feeding a register window of 4 outputs per thread (after the lesson "CUDA Memory Hierarchy & Optimization", docs/SOURCES.md), or no shared memory at
all: coalesced 16-byte loads per lane with the halo passed between lanes by warp shuffles.

out[i] = (x[i-R] + ... + x[i+R]) / (2R+1) for every i in [0, N), with x = 0 outside [0, N): zero
padding, so all N outputs are defined and every one must be written.

Inputs are small non-negative integers, so every window sum is an exact float32 integer whatever
the order of the additions, and the one division by 2R+1 is correctly rounded on both sides (the
kernels use a true division, the reference float32 division): the reference is bit-exact and the
wrong-output count is exact, not a tolerance verdict.
  - default (random): x[i] drawn from 0..15 with a fresh seed per check. A window shifted by one
    reads different values, so an off-by-one index is caught.
  - --exact: the lesson's inputs, x[i] = (i + offset) % (2R+1) with a random offset. Any 2R+1
    consecutive values are a permutation of 0..2R, so every output away from the edges is exactly
    R: a wrong output is anything else. (A window shifted by a whole period would pass here; the
    random mode catches that.)

Napkin math: no flops that matter; x read once and out written once, 4N + 4N bytes. The 2R-float
halo is re-read from cache, not DRAM (the lesson measured 78 MB from DRAM for a 67 MB input).
  N = 2^24: 67.1 MB read + 67.1 MB written (each just above the H200's 60 MiB L2: much of the
    output may still be in L2 when the timing stops, so the rate reads a little high).
  N = 2^26: 268 MB read + 268 MB written: DRAM-bound; ~128 us at the ~4.2 TB/s copy ceiling.

How R reaches the check: the radius is a compile-time param, and Experiment.make_inputs/check
receive no params, so kernel_args (which does) records R in the inputs dict the harness then hands
to check, and builds the --exact inputs, which depend on R, on the device.
"""

from __future__ import annotations

import numpy as np

from gpulab.arith import cdiv
from gpulab.check import compare_exact
from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Launch, Param, Params, Shape, Variant
from gpulab.experiments.stencil.access import global_access, regs_access, shared_access, shfl_access
from gpulab.experiments.napkin import array_module, napkin_columns

BLOCK = 256
RADII = tuple(range(1, 33))
R_PARAM = Param("R", RADII, 3, "radius: each output averages 2R+1 inputs")
R_SWEEP = {"R": (3, 8)}
RANDOM_MAX = 15  # random inputs in 0..15: sums of at most 65 terms stay far below 2^24


def _launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(s["N"], BLOCK), 1, 1), block=(BLOCK, 1, 1))


def _window_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(s["N"], 4 * BLOCK), 1, 1), block=(BLOCK, 1, 1))  # 4 outputs per thread


def _shuffle_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(s["N"], p["PER"] * BLOCK), 1, 1), block=(BLOCK, 1, 1))  # PER outputs per thread


def periodic_input(n: int, r: int, offset: int, xp):
    """The memory-hierarchy lesson's input: x[i] = (i + offset) % (2r+1), as float32."""
    return ((xp.arange(n, dtype=xp.int64) + offset) % (2 * r + 1)).astype(xp.float32)


def reference(x, r: int, xp):
    """The zero-padded moving average of `x` (float32 holding integers), bit-exact in float32.

    Window sums are taken exactly in int64 from a prefix sum of the padded input, converted to
    float32 (exact below 2^24) and divided in float32, the same correctly rounded division the
    kernels do.
    """
    n = x.shape[0]
    padded = xp.zeros(n + 2 * r, dtype=xp.int64)
    padded[r:r + n] = x.astype(xp.int64)
    prefix = xp.zeros(n + 2 * r + 1, dtype=xp.int64)
    prefix[1:] = xp.cumsum(padded)
    sums = prefix[2 * r + 1:2 * r + 1 + n] - prefix[:n]
    return sums.astype(xp.float32) / xp.float32(2 * r + 1)


class Stencil(Experiment):
    name = "stencil"
    title = "moving average of radius R (zero-padded): global reads, a shared tile, a register window, warp shuffles"
    dims = ("N",)
    entry = "stencil"
    baseline = "global"
    bound = "memory"
    # R changes the problem, not the implementation: speedups compare shared R=8 with global R=8.
    problem_params = ("R",)
    default_shapes = ((1 << 24,), (1 << 26,))
    test_shapes = ((1,), (2,), (7,), (255,), (257,), (1000,), (100_003,), (1 << 24,), (1 << 26,))
    # i + R is computed in int32 on the device.
    max_dim = 1 << 30

    variants = (
        Variant(
            name="global",
            file="v0_global.cu",
            summary="each thread reads its 2R+1 neighbours from global memory (the caches absorb reuse)",
            launch=_launch,
            access=global_access,
            params=(R_PARAM,),
            sweep=R_SWEEP,
        ),
        Variant(
            name="shared",
            file="v1_shared_tile.cu",
            summary="block stages BLOCK + 2R inputs in shared memory, one barrier, then sums from the tile",
            launch=_launch,
            access=shared_access,
            params=(R_PARAM,),
            sweep=R_SWEEP,
        ),
        Variant(
            name="regs",
            file="v2_register_window.cu",
            summary="shared tile; each thread sums 4 outputs from a window in registers (16-byte LDS)",
            launch=_window_launch,
            access=regs_access,
            params=(R_PARAM,),
            sweep=R_SWEEP,
        ),
        Variant(
            name="shfl",
            file="v3_warp_shuffle.cu",
            summary="no shared memory: PER/4 coalesced 16-byte loads per lane, issued first; halo by warp shuffles",
            launch=_shuffle_launch,
            access=shfl_access,
            params=(R_PARAM,
                    Param("PER", (8, 16), 8, "outputs per thread: PER/4 16-byte loads per lane"),
                    Param("HINT", (0, 1), 0, "1: centre loads evict-first (ld.global.cs)")),
            sweep=R_SWEEP,
        ),
        Variant(
            name="nosync",
            file="demo_nosync.cu",
            summary="the shared tile without its barrier: a race, reported and never passed",
            launch=_launch,
            access=shared_access,
            params=(R_PARAM,),
            sweep=R_SWEEP,
            expected_wrong=True,
        ),
    )

    def bytes_moved(self, shape: Shape) -> int:
        return 2 * 4 * shape["N"]

    def device_bytes(self, shape: Shape) -> int:
        # x and out (float32); the reference's int64 padded input, prefix sums and sums, its
        # float32 result, and compare_exact's float64 copies and mask.
        n = shape["N"] + 2 * RADII[-1] + 1
        return 4 * n + 4 * n + 3 * 8 * n + 4 * n + 2 * 8 * n + n

    def make_inputs(self, shape: Shape, rng: np.random.Generator, exact: bool) -> dict:
        if exact:
            # The pattern depends on R, which only kernel_args sees: it builds x from the offset.
            return {"x": None, "exact": True, "offset": int(rng.integers(0, 1 << 20))}
        x = rng.integers(0, RANDOM_MAX + 1, size=shape["N"], dtype=np.uint8).astype(np.float32)
        return {"x": x, "exact": False}

    def output(self, shape: Shape, xp):
        return xp.full(shape["N"], xp.nan, dtype=xp.float32)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        r = params["R"]
        if inputs.get("exact") and (inputs.get("x") is None or inputs.get("R") != r):
            inputs["x"] = periodic_input(shape["N"], r, inputs["offset"], array_module(out))
        inputs["R"] = r  # for check(), which receives no params
        return (inputs["x"], out, np.int32(shape["N"]))

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        r = inputs.get("R")
        if r is None or inputs.get("x") is None:
            raise GpulabError("stencil: check() needs the inputs after kernel_args(), which records R")
        return compare_exact(out, reference(inputs["x"], r, xp), xp)

    def records_extra(self, shape: Shape, params: Params) -> dict:
        n = 4 * shape["N"]
        return napkin_columns(n, n) | {"inputs_per_output": 2 * params["R"] + 1}


EXPERIMENT = Stencil()
