"""Launch geometry, constraints and extra arguments of the kernels that split K: sk (sliced K inside
a block), sx (split-K across blocks on v9's ring), v12 (stream-K on a persistent grid) and v13
(whole waves, the last partial wave split along K). v12's and v13's grids follow the card's SM
count (gpulab.gpu.device.sm_count, which the tests set through this module)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Launch, Params, Shape
from gpulab.experiments.gemm_common import SM90, SMEM_PER_BLOCK_RESERVED, SMEM_SM_MAX, SMEM_STATIC_MAX, check_regs
from gpulab.experiments.sgemm.ladder.launch import check_threads, v9_constraints, v9_smem_bytes, warps
from gpulab.experiments.sgemm.split_workspace import split_buffers
from gpulab.gpu.device import sm_count
from gpulab.gpu.seam import cupy


# -- sk: sliced-K small tiles for few-tile and skinny shapes ---------------------------------------
def _sk_threads(p: Params) -> int:
    return p["KS"] * (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])


def sk_launch(p: Params, s: Shape) -> Launch:
    # A 1D grid over the tiles, row-major (the kernel splits the block id): M/BM may pass 65535.
    return Launch(grid=(cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"]), 1, 1), block=(_sk_threads(p), 1, 1))


def sk_constraints(p: Params, s: Shape | None) -> str | None:
    if p["BM"] % p["TM"] or p["BN"] % p["TN"]:
        return f"BM x BN = {p['BM']} x {p['BN']} is not a whole number of TM x TN = {p['TM']} x {p['TN']} pieces"
    if p["BK"] % p["KS"]:
        return f"BK={p['BK']} must split evenly into KS={p['KS']} k groups"
    threads = _sk_threads(p)
    if reason := check_threads(threads):
        return reason
    tiles = p["BK"] * (p["BM"] + 1) + p["BK"] * p["BN"]
    smem = 4 * max(tiles, p["KS"] * p["BM"] * p["BN"] if p["KS"] > 1 else 0)
    if smem > SMEM_STATIC_MAX:
        return f"the tiles or the KS partial sums need {smem} B, over 48 KiB of static shared memory"
    # Fitted to ptxas (NVRTC 13.5, sm_90) over random samples of the space (no spill in 650): the
    # accumulators (counted three times: unrolled k steps keep fragments live beside them), the next tile
    # staged in registers (up to five per float a thread loads: the value and the 64-bit address
    # ptxas keeps across the loop), ~30 for the rest and 8 of margin (two spills in 200 without it).
    staged = -(-p["BM"] * p["BK"] // threads) + -(-p["BK"] * p["BN"] // threads)
    if staged > 32:
        return f"{staged} floats of each tile per thread ({threads} threads): over 32, they would not fit in registers"
    if reason := check_regs(3 * p["TM"] * p["TN"] + p["TM"] + p["TN"] + 5 * staged + 38, threads, p["MINB"]):
        return reason
    if p["MINB"] * (smem + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"MINB={p['MINB']} blocks of {smem} B shared memory do not fit in one SM"
    if s is not None and cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"]) > (1 << 31) - 1:
        return f"{cdiv(s['M'], p['BM']) * cdiv(s['N'], p['BN'])} tiles of {p['BM']}x{p['BN']} exceed a grid; use larger tiles"
    return None


# -- sx: split-K across blocks on v9's ring -------------------------------------------------------
def sx_launch(p: Params, s: Shape) -> Launch:
    tiles = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    return Launch(grid=(tiles, p["S"], 1), block=(32 * warps(p), 1, 1), smem_dynamic_bytes=v9_smem_bytes(p))


def sx_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    return split_buffers(inputs, out, shape, params, sx_launch(params, shape).grid[0])


def sx_constraints(p: Params, s: Shape | None) -> str | None:
    # v9's, plus one register for the slice bounds and the workspace pointers.
    return v9_constraints(p, s, fragment_regs=2)


# -- v12: stream-K on a persistent grid -------------------------------------------------------------
def v12_blocks(p: Params, s: Shape) -> int:
    """v12's grid: MINB blocks on every SM (all resident at once: v12_constraints), or one per
    (tile, k tile) iteration when there are fewer (a block with an empty share would only wait)."""
    iterations = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"]) * cdiv(s["K"], p["BK"])
    return min(p["MINB"] * sm_count(), iterations)


def v12_workspace_floats(p: Params, s: Shape) -> int:
    """One partial tile per block, thread-major (work[block][register][thread]): BM*BN floats each."""
    return v12_blocks(p, s) * p["BM"] * p["BN"]


def v12_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(v12_blocks(p, s), 1, 1), block=(32 * warps(p), 1, 1), smem_dynamic_bytes=v9_smem_bytes(p))


def v12_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """The workspace and a flag per block, zeroed once: the kernel leaves every flag zero again (the
    block that consumes a partial resets its flag), so a launcher may run any number of times."""
    cp = cupy()
    blocks = v12_blocks(params, shape)
    return cp.zeros(v12_workspace_floats(params, shape), dtype=cp.float32), cp.zeros(blocks, dtype=cp.uint32)


def v12_constraints(p: Params, s: Shape | None) -> str | None:
    """v11's, plus what makes the spin-waits safe: MINB blocks per SM must fit by shared memory
    (v9's check), threads and the SM's block slots as well as by registers (the launch bounds), so
    that all MINB x SMs blocks of the grid are resident at once. 24 registers over v9's estimate for
    the schedule (64-bit iteration bounds, the segment loop, the fixup's pointers): fitted to ptxas,
    which spills at 64 x 128 x 8 and x 16 with 64 x 64 warps, fits 64 x 256 x 8 (254 registers), and
    under NVRTC 13.0 (the H200's) spilled 28 B at the default 64 x 128 x 16 with MINB=3 (168
    registers), which NVRTC 13.5 fitted."""
    if reason := v9_constraints(p, s, fragment_regs=24):
        return reason
    threads = 32 * warps(p)
    if p["MINB"] * threads > 32 * SM90.max_warps:
        return f"MINB={p['MINB']} blocks of {threads} threads exceed an SM's {32 * SM90.max_warps}: not all resident"
    if p["MINB"] > SM90.max_blocks:
        return f"MINB={p['MINB']} blocks exceed an SM's {SM90.max_blocks} block slots: not all resident"
    return None


# -- v13: whole waves, the last partial wave's tiles split along K ----------------------------------
SPLIT_TAIL_MIN_KTILES = 4  # a slice of a tail tile is at least this many k tiles deep


@dataclasses.dataclass(frozen=True)
class TailPlan:
    """v13's grid: the first `whole` of the `tiles` run one block each; each of the other `tail`
    tiles is cut into `splits` k slices, one block each (splits = 1: nothing is cut, whole = tiles)."""

    tiles: int
    whole: int
    splits: int

    @property
    def tail(self) -> int:
        return self.tiles - self.whole

    @property
    def blocks(self) -> int:
        return self.whole + self.tail * self.splits


def split_tail_plan(p: Params, s: Shape) -> TailPlan:
    """v13's schedule. The card holds a wave of W = RESIDENT x SMs blocks; all tiles but the last
    tiles % W run whole, and each of those last ones is cut into `splits` k slices. `splits` (1 to S,
    at least SPLIT_TAIL_MIN_KTILES k tiles a slice) is the one whose slices fill the fewest waves of
    slice-deep work, ceil(tail x splits / W) / splits, the smallest of those that tie: 68 tiles over
    396 slots -> 5 (340 blocks, one wave of 1/5 tiles), 272 -> 7 (1,904 blocks, 5 waves of 1/7).
    Nothing is cut where nothing is gained (no tail, or a tail that already nearly fills a wave)."""
    tiles = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    wave = p["RESIDENT"] * sm_count()
    tail = tiles % wave
    most = min(p["S"], cdiv(s["K"], p["BK"]) // SPLIT_TAIL_MIN_KTILES)
    if tail == 0 or most < 2:
        return TailPlan(tiles, tiles, 1)
    splits = min(range(1, most + 1), key=lambda k: (Fraction(cdiv(tail * k, wave), k), k))
    return TailPlan(tiles, tiles, 1) if splits == 1 else TailPlan(tiles, tiles - tail, splits)


def v13_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(split_tail_plan(p, s).blocks, 1, 1), block=(32 * warps(p), 1, 1),
                  smem_dynamic_bytes=v9_smem_bytes(p))


def v13_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """A workspace slot of BM x BN floats per slice block and a counter per split tile, zeroed once
    (the kernel leaves every counter zero), then the plan: whole tiles and slices per tail tile."""
    cp = cupy()
    plan = split_tail_plan(params, shape)
    slots = plan.tail * plan.splits
    work = cp.zeros(max(1, slots * params["BM"] * params["BN"]), dtype=cp.float32)
    counters = cp.zeros(max(1, plan.tail), dtype=cp.uint32)
    return work, counters, np.int32(plan.whole), np.int32(plan.splits)


def v13_constraints(p: Params, s: Shape | None) -> str | None:
    """v9's (v11's loop; the slices' copy of it is a function of its own, with its own registers),
    and a RESIDENT that shared memory and the SM's threads allow (registers are ptxas's to say: the
    bench row's theoretical blocks per SM shows what they allowed)."""
    if reason := v9_constraints(p, s):
        return reason
    threads = 32 * warps(p)
    if p["RESIDENT"] * (v9_smem_bytes(p) + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"RESIDENT={p['RESIDENT']} blocks of {v9_smem_bytes(p)} B shared memory do not fit in one SM"
    if p["RESIDENT"] * threads > 32 * SM90.max_warps:
        return f"RESIDENT={p['RESIDENT']} blocks of {threads} threads exceed an SM's {32 * SM90.max_warps}"
    return None
