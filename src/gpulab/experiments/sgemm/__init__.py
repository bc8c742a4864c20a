"""SGEMM: C = A * B in float32, row-major, A is M x K, B is K x N, any M, N, K >= 1.

The napkin math: 2*M*N*K flops; the compulsory DRAM traffic is A and B read once and C written
once, 4*(M*K + K*N + M*N) bytes. At 4096^3 that is 137 GFLOP against 201 MB: 683 flop per byte,
far to the compute side of any card's ridge point, so the FMA rate and cuBLAS are the ceilings.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np

from gpulab.arith import cdiv
from gpulab.check import compare_exact, compare_float
from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Launch, Param, Params, Shape, Variant
from gpulab.experiments.gemm_bf16.tma_rungs import T4, t4_constraints, t4_extra_args, t4_launch, t4_model, t4_one_round
from gpulab.experiments.gemm_common import (
    CPU_REFERENCE_MAX_MACS, SMEM_BLOCK_OPTIN_MAX, SMEM_PER_BLOCK_RESERVED, SMEM_SM_MAX, SMEM_STATIC_MAX, SM90,
    check_regs, to_host,
)
from gpulab.experiments.sgemm.tf32_split import PARTS, padded_k, split_tf32
from gpulab.experiments.sgemm.access import (
    v0_access, v1_access, v2_access, v3_access, v4_access, v5_access, v6_access, v7_access, v8_access,
    v9_access, v10_access, v11_access, v13_access, gt_access, gv_access, sk_access, sx_access,
)
from gpulab.gpu.device import sm_count
from gpulab.gpu.seam import cupy


def _v0_launch(p: Params, s: Shape) -> Launch:
    b = p["BLOCK"]
    return Launch(grid=(cdiv(s["N"], b), cdiv(s["M"], b), 1), block=(b, b, 1))


def _v1_launch(p: Params, s: Shape) -> Launch:
    t = p["TILE"]
    return Launch(grid=(cdiv(s["N"], t), cdiv(s["M"], t), 1), block=(t, t, 1))


# -- the ladder above v1: launch geometry and the constraints each rung states ------------------
# (The card limits they check against: gpulab.experiments.gemm_common.)
def _threads_2d(p: Params) -> int:
    """v3-v5: one thread per TM x TN piece of the BM x BN block tile."""
    return (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])


def _warps(p: Params) -> int:
    """v6-v9: one warp per WM x WN warp tile."""
    return (p["BM"] // p["WM"]) * (p["BN"] // p["WN"])


def _block_threads(p: Params) -> int:
    if "WM" in p:
        return 32 * _warps(p)
    if "TN" in p:
        return _threads_2d(p)
    return p["BM"] * p["BN"] // p["TM"]


def _grid_2d_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(s["N"], p["BN"]), cdiv(s["M"], p["BM"]), 1), block=(_block_threads(p), 1, 1))


def _v9_smem_bytes(p: Params) -> int:
    """The ring of STAGES tiles (transposed A padded to BM+4, then B), or the write-back slices of
    16 x 36 floats per warp, whichever is larger: they share the dynamic allocation."""
    tile = p["BK"] * (p["BM"] + 4) + p["BK"] * p["BN"]
    return 4 * max(p["STAGES"] * tile, _warps(p) * 16 * 36)


def _v9_launch(p: Params, s: Shape) -> Launch:
    # A 1D grid: the kernel maps block ids to tiles in groups of GROUP_M block-rows.
    blocks = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    return Launch(grid=(blocks, 1, 1), block=(32 * _warps(p), 1, 1), smem_dynamic_bytes=_v9_smem_bytes(p))


def _check_threads(threads: int) -> str | None:
    if threads % 32 or not 64 <= threads <= 1024:
        return f"{threads} threads per block: need a multiple of 32 between 64 and 1024"
    return None


def _v2_constraints(p: Params, s: Shape | None) -> str | None:
    threads = p["BM"] * p["BN"] // p["TM"]
    if p["BM"] % p["TM"]:
        return f"BM={p['BM']} is not a multiple of TM={p['TM']}"
    if reason := _check_threads(threads):
        return reason
    if 4 * p["BK"] * (p["BM"] + p["BN"]) > SMEM_STATIC_MAX:
        return "the A and B tiles exceed 48 KiB of static shared memory"
    return check_regs(p["TM"] + 40, threads)


def _v3_constraints(p: Params, s: Shape | None, vector: bool = False) -> str | None:
    tm, tn = p["TM"], p["TN"]
    if p["BM"] % tm or p["BN"] % tn:
        return f"BM x BN = {p['BM']} x {p['BN']} is not a whole number of TM x TN = {tm} x {tn} pieces"
    threads = _threads_2d(p)
    if reason := _check_threads(threads):
        return reason
    if vector:
        if (p["BM"] * p["BK"] // 4) % threads or (p["BK"] * p["BN"] // 4) % threads:
            return (
                f"the {p['BM']}x{p['BK']} A tile and {p['BK']}x{p['BN']} B tile must split into whole "
                f"float4s per thread ({threads} threads)"
            )
    pad = 4 if vector else 0
    if 4 * p["BK"] * (p["BM"] + pad + p["BN"]) > SMEM_STATIC_MAX:
        return "the A and B tiles exceed 48 KiB of static shared memory"
    return check_regs(tm * tn + tm + tn + 40, threads)


def _v45_constraints(p: Params, s: Shape | None) -> str | None:
    return _v3_constraints(p, s, vector=True)


def _warp_tiling_reason(p: Params) -> str | None:
    """What v6-v9 need of BM BN BK WM WN WNITER: warp tiles of 16 x 32 sub-tiles (4 x 8 lanes of
    4 x 4 fragments) that tile the block tile."""
    if p["WN"] != 32 * p["WNITER"]:
        return (
            f"WN={p['WN']} must be 32 x WNITER={p['WNITER']}: a sub-tile is 8 lanes x TN=4 columns wide"
        )
    if p["BM"] % p["WM"] or p["BN"] % p["WN"]:
        return f"the {p['BM']}x{p['BN']} block tile is not a whole number of {p['WM']}x{p['WN']} warp tiles"
    if p["TM"] != 4 or p["TN"] != 4:
        return "TM and TN are the 4 x 4 float4 fragment of the zig-zag layout"
    return _check_threads(32 * _warps(p))


def _staged_regs(p: Params, threads: int) -> int:
    """v6-v8, whose tiles pass through registers: fitted to ptxas over the full grid
    (notebook/probes/sgemm_ladder_resources.py --full), a staged float weighs about three registers with
    its address and guard."""
    wmiter, wniter = p["WM"] // 16, p["WNITER"]
    staged = (p["BM"] * p["BK"] + p["BK"] * p["BN"]) // threads
    return 16 * wmiter * wniter + 2 * (wmiter + wniter) + 3 * staged + 26


def _v67_constraints(p: Params, s: Shape | None) -> str | None:
    if reason := _warp_tiling_reason(p):
        return reason
    threads = 32 * _warps(p)
    if (p["BM"] * p["BK"] // 4) % threads or (p["BK"] * p["BN"] // 4) % threads:
        return f"the A and B tiles must split into whole float4s per thread ({threads} threads)"
    tiles = 4 * p["BK"] * (p["BM"] + 4 + p["BN"])
    if max(tiles, 4 * _warps(p) * 16 * 36) > SMEM_STATIC_MAX:
        return "the tiles (or the write-back slices) exceed 48 KiB of static shared memory"
    return check_regs(_staged_regs(p, threads), threads)


def _v8_constraints(p: Params, s: Shape | None) -> str | None:
    if reason := _warp_tiling_reason(p):
        return reason
    threads = 32 * _warps(p)
    a_loads, b_loads = p["BM"] * p["BK"] // 4, p["BK"] * p["BN"] // 4
    if a_loads % threads or b_loads % threads:
        return f"the A and B tiles must split into whole float4s per thread ({threads} threads)"
    smem = 4 * max(2 * p["BK"] * (p["BM"] + 4 + p["BN"]), _warps(p) * 16 * 36)
    if smem > SMEM_STATIC_MAX:
        return f"two tile stages need {smem} B, over 48 KiB of static shared memory"
    if p["MINB"] * (smem + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"MINB={p['MINB']} blocks of {smem} B shared memory do not fit in one SM"
    return check_regs(_staged_regs(p, threads), threads, p["MINB"])


def _v9_constraints(p: Params, s: Shape | None, fragment_regs: int = 0) -> str | None:
    if reason := _warp_tiling_reason(p):
        return reason
    threads = 32 * _warps(p)
    if p["BM"] % (threads // 8):
        return f"the A copies take {threads // 8} rows a pass ({threads} threads / 8 k): BM={p['BM']} must be a multiple"
    if (p["BM"] * p["BK"]) % threads:
        return f"the {p['BM']}x{p['BK']} A tile must split into whole copies per thread"
    for per_row in (p["BN"] // 4, p["BN"]):  # 16-byte and 4-byte copies of B
        if (p["BK"] * per_row) % threads or (per_row % threads and threads % per_row):
            return f"the {p['BK']}x{p['BN']} B tile must split into whole rows of copies per thread ({threads} threads)"
    smem = _v9_smem_bytes(p)
    if smem > SMEM_BLOCK_OPTIN_MAX:
        return f"{p['STAGES']} stages need {smem} B of shared memory, over the 227 KiB a block may have"
    if p["MINB"] * (smem + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"MINB={p['MINB']} blocks of {smem} B shared memory do not fit in one SM"
    # Fitted to ptxas over the full grid (notebook/probes/sgemm_ladder_resources.py --full): fragments for
    # about 1.5 k steps, one register per copy a thread issues per tile, ~30 for the rest.
    wmiter, wniter = p["WM"] // 16, p["WNITER"]
    copies = (p["BM"] * p["BK"] + p["BK"] * p["BN"]) // threads
    # +4 of margin: NVRTC 13.0 (on the H200 machine) spilled 8 bytes at 8 x 8, 256 threads, MINB=2,
    # where 13.5 fitted 128 registers exactly.
    estimate = 16 * wmiter * wniter + 6 * (wmiter + wniter) + copies + 34 + fragment_regs
    return check_regs(estimate, threads, p["MINB"])


def _v10_constraints(p: Params, s: Shape | None) -> str | None:
    """v9's, with registers for the second set of fragments (STAGES >= 2 by its choices)."""
    return _v9_constraints(p, s, fragment_regs=_v10_fragment_regs(p))


def _v10_fragment_regs(p: Params) -> int:
    """v10 holds two whole k-steps of fragments, 4*(WM/16 + WNITER) floats each; v9's estimate already
    counts about 1.5 (ptxas overlapped the next step's loads there too), so half a set more. ptxas
    (NVRTC 13.5) takes what the cap allows anyway: 255 at 64 threads, 236 at 128 x 128 and 128 x 256."""
    return 2 * (p["WM"] // 16 + p["WNITER"])


# -- sk: sliced-K small tiles for few-tile and skinny shapes ---------------------------------------
def _sk_threads(p: Params) -> int:
    return p["KS"] * (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])


def _sk_launch(p: Params, s: Shape) -> Launch:
    # A 1D grid over the tiles, row-major (the kernel splits the block id): M/BM may pass 65535.
    return Launch(grid=(cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"]), 1, 1), block=(_sk_threads(p), 1, 1))


def _sk_constraints(p: Params, s: Shape | None) -> str | None:
    if p["BM"] % p["TM"] or p["BN"] % p["TN"]:
        return f"BM x BN = {p['BM']} x {p['BN']} is not a whole number of TM x TN = {p['TM']} x {p['TN']} pieces"
    if p["BK"] % p["KS"]:
        return f"BK={p['BK']} must split evenly into KS={p['KS']} k groups"
    threads = _sk_threads(p)
    if reason := _check_threads(threads):
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


# The skinny shape classes of the default shapes (M or N <= 64 with K >= 4096, and a 1 x N x K
# product), which sk is tuned on, with 512^3 (32 of v9's 64 x 128 tiles for 132 SMs).
SKINNY_SHAPES = ((4096, 64, 4096), (64, 4096, 4096), (1, 8192, 8192), (8192, 1, 8192))
SK_TUNE_SHAPES = SKINNY_SHAPES + ((512, 512, 512),)
SKINNY_MAX = 64  # M or N at most this: the ladder's 64-128 wide tiles leave the card mostly idle

# The GEMV-class shapes gv and gt are made for (and tuned on), and the few-tile shapes sx is.
GEMV_ROW_SHAPE = (1, 8192, 8192)
GEMV_COL_SHAPE = (8192, 1, 8192)
SX_TUNE_SHAPES = ((4096, 64, 4096), (64, 4096, 4096), (512, 512, 512))

# sk's configs for the best row when nothing is tuned near a skinny shape (gpulab.jobs.best), by class:
# a vector-like side (<= 4) gets one row (or column) per tile and 8 k groups of 32 lanes reading
# 128-byte segments of the long matrix; a few dozen rows or columns get 16 x 64 (or 64 x 16) tiles,
# 256 threads in 2 k groups, 256 blocks at 4096 x 64 x 4096.
SK_DEFAULTS = {
    "one row": {"BM": 1, "BN": 32, "BK": 64, "TM": 1, "TN": 1, "KS": 8, "MINB": 2},
    "one column": {"BM": 32, "BN": 1, "BK": 64, "TM": 1, "TN": 1, "KS": 8, "MINB": 2},
    "few rows": {"BM": 16, "BN": 64, "BK": 32, "TM": 2, "TN": 4, "KS": 2, "MINB": 2},
    "few columns": {"BM": 64, "BN": 16, "BK": 32, "TM": 4, "TN": 2, "KS": 2, "MINB": 2},
}


# -- gv, gt: GEMV-class kernels; sx: split-K across blocks on v9's ring -----------------------------
def _split_buffers(inputs: dict, out, shape: Shape, params: Params, tiles: int) -> tuple:
    """The split-K kernels' extra arguments: a workspace of S planes of M x N floats and one counter
    per output tile, zeroed here once; the kernels leave the counters zero after every launch (the
    last block at a tile resets its own), so a launcher may run any number of times. With S = 1 the
    kernels touch neither: one-element stand-ins."""
    cp = cupy()
    s = params["S"]
    work = cp.zeros(s * shape["M"] * shape["N"] if s > 1 else 1, dtype=cp.float32)
    counters = cp.zeros(tiles if s > 1 else 1, dtype=cp.uint32)
    return work, counters


def _gv_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(s["N"], 4 * p["CT"]), p["S"], cdiv(s["M"], p["BM"])), block=(p["CT"] * p["KT"], 1, 1))


def _gv_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    launch = _gv_launch(params, shape)
    return _split_buffers(inputs, out, shape, params, launch.grid[0] * launch.grid[2])


def _gv_constraints(p: Params, s: Shape | None) -> str | None:
    threads = p["CT"] * p["KT"]
    if reason := _check_threads(threads):
        return reason
    smem = 4 * p["KT"] * p["BM"] * 4 * p["CT"]
    if smem > SMEM_STATIC_MAX:
        return f"the KT x BM x BN partial sums need {smem} B, over 48 KiB of static shared memory"
    if p["MINB"] * (smem + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"MINB={p['MINB']} blocks of {smem} B shared memory do not fit in one SM"
    # Checked against ptxas (NVRTC 13.5, sm_90) on random samples of the space: 4 accumulators per
    # row, U float4s in flight, a value of A per row and step, a 64-bit row pointer per row, the
    # block's sums a thread holds for the store, ~36 for the rest (no spill in 80 random samples).
    sums = cdiv(p["BM"] * 4 * p["CT"], threads)
    if reason := check_regs(4 * p["BM"] + 4 * p["U"] + p["BM"] * (p["U"] + 2) + sums + 36, threads, p["MINB"]):
        return reason
    if s is not None and cdiv(s["M"], p["BM"]) > 65535:
        return f"{cdiv(s['M'], p['BM'])} block-rows of BM={p['BM']} exceed a grid's z (65535): gv is for a few rows"
    return None


def _gt_launch(p: Params, s: Shape) -> Launch:
    rows_per_block = p["WARPS"] * p["RW"]
    return Launch(grid=(cdiv(s["M"], rows_per_block), cdiv(s["N"], p["BN"]), 1), block=(32 * p["WARPS"], 1, 1))


def _gt_constraints(p: Params, s: Shape | None) -> str | None:
    threads = 32 * p["WARPS"]
    if reason := _check_threads(threads):
        return reason
    # Checked against ptxas (NVRTC 13.5, sm_90) on random samples (no spill in 80): U float4s of A
    # and (N == 1) of B in flight, BN accumulators and 4 k of B values per step, ~30 for the rest.
    if reason := check_regs(8 * p["U"] + 10 * p["BN"] + 30, threads, p["MINB"]):
        return reason
    if s is not None and cdiv(s["N"], p["BN"]) > 65535:
        return f"{cdiv(s['N'], p['BN'])} column blocks of BN={p['BN']} exceed a grid's y (65535): gt is for a few columns"
    return None


def _sx_launch(p: Params, s: Shape) -> Launch:
    tiles = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    return Launch(grid=(tiles, p["S"], 1), block=(32 * _warps(p), 1, 1), smem_dynamic_bytes=_v9_smem_bytes(p))


def _sx_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    return _split_buffers(inputs, out, shape, params, _sx_launch(params, shape).grid[0])


def _sx_constraints(p: Params, s: Shape | None) -> str | None:
    # v9's, plus one register for the slice bounds and the workspace pointers.
    return _v9_constraints(p, s, fragment_regs=2)


# -- v12: stream-K on a persistent grid -------------------------------------------------------------
def v12_blocks(p: Params, s: Shape) -> int:
    """v12's grid: MINB blocks on every SM (all resident at once: v12_constraints), or one per
    (tile, k tile) iteration when there are fewer (a block with an empty share would only wait)."""
    iterations = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"]) * cdiv(s["K"], p["BK"])
    return min(p["MINB"] * sm_count(), iterations)


def v12_workspace_floats(p: Params, s: Shape) -> int:
    """One partial tile per block, thread-major (work[block][register][thread]): BM*BN floats each."""
    return v12_blocks(p, s) * p["BM"] * p["BN"]


def _v12_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(v12_blocks(p, s), 1, 1), block=(32 * _warps(p), 1, 1), smem_dynamic_bytes=_v9_smem_bytes(p))


def _v12_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
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
    if reason := _v9_constraints(p, s, fragment_regs=24):
        return reason
    threads = 32 * _warps(p)
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


def _v13_model(p: Params, s: Shape):
    """v13's access model on the plan its launch runs (split_tail_plan: the card's SM count decides it)."""
    plan = split_tail_plan(p, s)
    return v13_access(p, s, plan.whole, plan.splits)


def _v13_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(split_tail_plan(p, s).blocks, 1, 1), block=(32 * _warps(p), 1, 1),
                  smem_dynamic_bytes=_v9_smem_bytes(p))


def _v13_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """A workspace slot of BM x BN floats per slice block and a counter per split tile, zeroed once
    (the kernel leaves every counter zero), then the plan: whole tiles and slices per tail tile."""
    cp = cupy()
    plan = split_tail_plan(params, shape)
    slots = plan.tail * plan.splits
    work = cp.zeros(max(1, slots * params["BM"] * params["BN"]), dtype=cp.float32)
    counters = cp.zeros(max(1, plan.tail), dtype=cp.uint32)
    return work, counters, np.int32(plan.whole), np.int32(plan.splits)


def _v13_constraints(p: Params, s: Shape | None) -> str | None:
    """v9's (v11's loop; the slices' copy of it is a function of its own, with its own registers),
    and a RESIDENT that shared memory and the SM's threads allow (registers are ptxas's to say: the
    bench row's theoretical blocks per SM shows what they allowed)."""
    if reason := _v9_constraints(p, s):
        return reason
    threads = 32 * _warps(p)
    if p["RESIDENT"] * (_v9_smem_bytes(p) + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"RESIDENT={p['RESIDENT']} blocks of {_v9_smem_bytes(p)} B shared memory do not fit in one SM"
    if p["RESIDENT"] * threads > 32 * SM90.max_warps:
        return f"RESIDENT={p['RESIDENT']} blocks of {threads} threads exceed an SM's {32 * SM90.max_warps}"
    return None


# gpulab's best row when nothing is tuned near a shape (gpulab.jobs.best), by class: gv for one row (BM the
# smallest choice that covers M), gt for one column (BN likewise), and sx for a few dozen rows or
# columns and for shapes whose v9 tiles (64 x 128) would leave over half of the H200's 132 SMs idle
# (512^3: 32 tiles): sx's default 64 x 64 tiles of two 32 x 64 warp tiles, in S slices chosen for
# about two blocks per SM with at least 8 k tiles (64 deep) each.
SMS_TARGET = 132  # the H200's SMs: the card these defaults were chosen on
SX_MIN_KTILES = 8


def _smallest_choice(choices: tuple[int, ...], at_least: int) -> int:
    return min((c for c in choices if c >= at_least), default=max(choices))


def _fit_minb(variant: Variant, params: Params, shape: Shape) -> Params:
    """`params` with the largest MINB up to its own that the variant's constraints accept (a wider
    BM or BN needs more registers than the default's blocks per SM leave)."""
    for minb in range(params["MINB"], 0, -1):
        if variant.constraints(params | {"MINB": minb}, shape) is None:
            return params | {"MINB": minb}
    return params


def few_tiles(shape: Shape) -> bool:
    """Whether v9's default 64 x 128 tiles would leave over half of the card's SMs idle."""
    return cdiv(shape["M"], 64) * cdiv(shape["N"], 128) < SMS_TARGET // 2


def sx_slices(shape: Shape, params: Params, choices: tuple[int, ...]) -> int:
    """S for about two blocks per SM, keeping at least SX_MIN_KTILES k tiles per slice."""
    tiles = cdiv(shape["M"], params["BM"]) * cdiv(shape["N"], params["BN"])
    most = max(1, cdiv(shape["K"], params["BK"]) // SX_MIN_KTILES)
    fitting = [c for c in choices if c <= most]
    return _smallest_choice(tuple(fitting) or (1,), cdiv(2 * SMS_TARGET, tiles))


def skinny_class(shape: Shape) -> str | None:
    """Which of SK_DEFAULTS' classes a shape is in, or None for one the ladder's tiles fill."""
    m, n = shape["M"], shape["N"]
    if min(m, n) > SKINNY_MAX:
        return None
    if m <= n:
        return "one row" if m <= 4 else "few rows"
    return "one column" if n <= 4 else "few columns"


def _tile_params(bm=128, bn=128, bk=8) -> tuple[Param, ...]:
    return (
        Param("BM", (64, 128, 256), bm, "block tile rows (of C and A)"),
        Param("BN", (64, 128, 256), bn, "block tile columns (of C and B)"),
        Param("BK", (8, 16, 32), bk, "k depth of one shared-memory tile"),
    )


def _warp_params(wm=32, wn=64, wniter=2) -> tuple[Param, ...]:
    return (
        Param("WM", (16, 32, 64, 128), wm, "warp tile rows: WM/16 sub-tiles of 4 lanes x TM"),
        Param("WN", (32, 64, 128), wn, "warp tile columns: WNITER sub-tiles of 8 lanes x TN"),
        Param("WNITER", (1, 2, 4), wniter, "sub-tiles along N per warp tile (WN = 32*WNITER)"),
        Param("TM", (4,), 4, "rows of a thread's float4 fragment (fixed: one LDS.128)"),
        Param("TN", (4,), 4, "columns of a thread's float4 fragment (fixed: one LDS.128)"),
    )


def _ring_params(stages: Param) -> tuple[Param, ...]:
    """v9 and the rungs on its cp.async ring: a 64 x 128 block tile of two 64 x 64 warp tiles."""
    return _tile_params(bm=64) + _warp_params(wm=64, wn=64, wniter=2) + (
        stages,
        Param("MINB", (1, 2, 3, 4), 2, "blocks per SM the registers are sized for"),
        Param("GROUP_M", (1, 4, 8, 16), 8, "block-rows per rasterization group (1: row order)"),
    )


def _v11_tuned_params(minb: Param, *extra: Param) -> tuple[Param, ...]:
    """The params of the rungs that keep v11's loop and change its schedule (v12, v13), at v11's
    config tuned on the H200 (64 x 128 x 16, four 32 x 64 warps, STAGES=2, GROUP_M=8): `minb` (each
    says what MINB also sizes) and their own after."""
    return _tile_params(bm=64, bn=128, bk=16) + _warp_params(wm=32, wn=64, wniter=2) + (
        Param("STAGES", (2, 3, 4, 5), 2, "tiles in the cp.async ring"),
        minb,
        Param("GROUP_M", (1, 4, 8, 16), 8, "block-rows per rasterization group of the tile order (1: row order)"),
        *extra,
    )


# -- v14: 3xTF32 on gemm_bf16's t4 --------------------------------------------------------------
# t4's params less PINGPONG (its two accumulator sets leave no registers for FLUSH's sums), EDGE (its
# dots read BF16, v14's operands are TF32 parts) and BN = 256 (128 accumulators and 128 sums would not
# fit the consumers' 232 registers), plus FLUSH.
# t4's params but PINGPONG and EDGE; BN 128 and 192 and clusters of one and two, those tuned and tested here.
_V14_CHOICES = {"BN": ((128, 192), 192), "CLUSTER": ((1, 2), 2)}
_V14_PARAMS = tuple(Param(p.name, *_V14_CHOICES[p.name], p.help) if p.name in _V14_CHOICES else p
                    for p in T4.params if p.name not in ("PINGPONG", "EDGE")) + (
    Param("FLUSH", (1, 2, 4, 8), 2, "k-tiles (32 TF32 deep) per block the tensor cores sum before an FP32 add"),
)


def _v14_stage(inputs: dict, shape: Shape, params: Params, arch: str):
    """The split into TF32 parts (tf32_split.py), with the GEMM launched behind it where all of t4's
    work starts at once (as gemm_bf16's staged t4)."""
    return split_tf32(inputs, shape, params, arch, dependent_launch=t4_one_round(params, shape))


def _v14_model(params: Params, shape: Shape):
    """t4's access model on what v14's t4 reads: the staged A3 and Bt3, whose rows its tensor maps see
    as 2 x PARTS x KP 16-bit elements (RING_K in v14_tf32x3.cu), so t4's TMA boxes, wgmma and
    epilogue are counted over that K. The split launch before it is another kernel, not counted, as
    gemm_bf16's staging. The work is the problem's 2 M N K FLOPs (v14's ceiling, a third of the TF32
    rate, holds each to its three products); the DRAM floor stays t4's: the staged copies and C."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    staged = Shape(shape.names, (m, n, 2 * PARTS * padded_k(k)))
    return dataclasses.replace(t4_model(params, staged), flops=2.0 * m * n * k)


def _v14_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """t4's: tensor maps of the staged A3 and Bt3 (t4 names B's "Bt"), C's, the stream-K workspace."""
    return t4_extra_args({"A": inputs["A"], "Bt": inputs["B"]}, out, shape, params)


class Sgemm(Experiment):
    name = "sgemm"
    title = "FP32 matrix multiply C = A*B (row-major)"
    dims = ("M", "N", "K")
    entry = "sgemm"
    baseline = "v0"
    bound = "compute"
    # The Shared Memory Tiling wiki page's sweep (512..4096, docs/SOURCES.md), the large size, the
    # ragged shapes the ladder must also be fast on, and the skinny classes whose few output tiles
    # cannot fill the card with the ladder's tiles: tall (N = 64), wide (M = 64), and a 1 x N x K
    # product (GEMV-like, bound by reading B: 256 MB, ~60 us at the copy ceiling).
    default_shapes = ((512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
                      (8192, 8192, 8192), (4000, 4000, 4000), (1000, 3000, 777), (4097, 4097, 4097),
                      *SKINNY_SHAPES)
    test_shapes = ((1, 1, 1), (17, 33, 65), (1000, 1531, 777), (4096, 4096, 4096), (4097, 4097, 4097),
                   (1, 1531, 777), (1531, 3, 1029))
    # Small, mid and large, aligned and ragged: the tune keeps the fastest config of each (bench
    # then uses the one tuned at the nearest size), and an overall best by geometric mean.
    tune_shapes = ((1024, 1024, 1024), (1000, 3000, 777), (2048, 2048, 2048), (4096, 4096, 4096),
                   (4097, 4097, 4097), (8192, 8192, 8192))
    readme_variants = ("v0", "v1", "cublas")  # the wiki page's V0-vs-V1 table; the ladder has its own
    headline_shape = (4096, 4096, 4096)
    # Grids are computed in int32 on the device; 2^20 keeps every index product inside size_t math.
    max_dim = 1 << 20

    variants = (
        Variant(
            name="v0",
            file="v0_naive.cu",
            summary="naive: one thread per element of C",
            launch=_v0_launch,
            params=(Param("BLOCK", (16, 32), 16, "block side; the block is BLOCK x BLOCK threads"),),
            access=v0_access,
        ),
        Variant(
            name="v1",
            file="v1_smem_tiling.cu",
            summary="shared-memory tiling: TILE x TILE tiles of A and B staged in shared memory",
            launch=_v1_launch,
            params=(Param("TILE", (8, 16, 32), 32, "tile side; the block is TILE x TILE threads"),),
            sweep={"TILE": (8, 16, 32)},
            access=v1_access,
        ),
        Variant(
            name="v2",
            file="v2_1d_blocktiling.cu",
            summary="1D register blocking: each thread computes TM outputs of a column",
            launch=_grid_2d_launch,
            access=v2_access,
            params=(
                Param("BM", (32, 64, 128), 64, "block tile rows"),
                Param("BN", (32, 64, 128), 64, "block tile columns"),
                Param("BK", (4, 8, 16), 8, "k depth of one shared-memory tile"),
                Param("TM", (4, 8, 16), 8, "outputs per thread, along M"),
            ),
            constraints=_v2_constraints,
        ),
        Variant(
            name="v3",
            file="v3_2d_blocktiling.cu",
            summary="2D register blocking: a TM x TN outer product per thread",
            launch=_grid_2d_launch,
            access=v3_access,
            params=_tile_params() + (
                Param("TM", (4, 8, 16), 8, "thread tile rows"),
                Param("TN", (4, 8, 16), 8, "thread tile columns"),
            ),
            constraints=_v3_constraints,
        ),
        Variant(
            name="v4",
            file="v4_vectorized.cu",
            summary="float4 global loads, A transposed in shared memory, LDS.128 fragments",
            launch=_grid_2d_launch,
            access=v4_access,
            params=_tile_params() + (
                Param("TM", (4, 8, 16), 8, "thread tile rows (float4 fragments)"),
                Param("TN", (4, 8, 16), 8, "thread tile columns (float4 fragments)"),
            ),
            constraints=_v45_constraints,
        ),
        Variant(
            name="v5",
            file="v5_conflict_free.cu",
            summary="bank-conflict-free shared memory: padded A tile, interleaved fragments",
            launch=_grid_2d_launch,
            access=v5_access,
            params=_tile_params() + (
                Param("TM", (4, 8, 16), 8, "thread tile rows (TM/4 float4 fragments, 4*BM/TM apart)"),
                Param("TN", (4, 8, 16), 8, "thread tile columns (TN/4 float4 fragments, 4*BN/TN apart)"),
            ),
            constraints=_v45_constraints,
        ),
        Variant(
            name="v6",
            file="v6_warptiling.cu",
            summary="warp tiling with the zig-zag lane map: LDS.128 merged to 2 wavefronts",
            launch=_grid_2d_launch,
            access=v6_access,
            params=_tile_params() + _warp_params(wm=64, wn=64, wniter=2),
            constraints=_v67_constraints,
        ),
        Variant(
            name="v7",
            file="v7_coalesced_store.cu",
            summary="C written back through a per-warp shared buffer, whole rows per instruction",
            launch=_grid_2d_launch,
            access=v7_access,
            params=_tile_params() + _warp_params(wm=64, wn=64, wniter=2),
            constraints=_v67_constraints,
        ),
        Variant(
            name="v8",
            file="v8_double_buffer.cu",
            summary="double buffering: next tile's loads in registers while this one computes",
            launch=_grid_2d_launch,
            access=v8_access,
            params=_tile_params() + _warp_params(wm=64, wn=64, wniter=2) + (
                Param("MINB", (1, 2, 3, 4), 2, "blocks per SM the registers are sized for"),
            ),
            constraints=_v8_constraints,
        ),
        Variant(
            name="v9",
            file="v9_cp_async.cu",
            summary="cp.async ring of STAGES tiles in dynamic shared memory, grouped rasterization",
            min_sm=80, min_sm_for="cp.async",
            launch=_v9_launch,
            access=v9_access,
            params=_ring_params(Param("STAGES", (2, 3, 4, 5), 3, "tiles in the cp.async ring")),
            constraints=_v9_constraints,
        ),
        Variant(
            name="v10",
            file="v10_fragment_pipeline.cu",
            summary="register-fragment double buffering: next k-step's LDS.128 (and the next tile's) under the FFMAs",
            min_sm=80, min_sm_for="cp.async",
            launch=_v9_launch,
            access=v10_access,
            params=_ring_params(Param("STAGES", (2, 3, 4, 5), 2, "tiles in the cp.async ring (all in flight in the prologue)")),
            constraints=_v10_constraints,
        ),
        Variant(
            name="v11",
            file="v11_register_banks.cu",
            summary="serpentine column-order outer product at a 255-register budget: FFMA reads in distinct register banks",
            min_sm=80, min_sm_for="cp.async",
            launch=_v9_launch,
            access=v11_access,
            # 64 x 256 x 8, four 64 x 64 warps, MINB=1: the config whose SASS (NVRTC 13.0) has the fewest
            # FFMA bank collisions (v11's header); v9's ring, copies and registers otherwise.
            params=_tile_params(bm=64, bn=256) + _warp_params(wm=64, wn=64, wniter=2) + (
                Param("STAGES", (2, 3, 4, 5), 2, "tiles in the cp.async ring"),
                Param("MINB", (1, 2, 3, 4), 1, "blocks per SM the registers are sized for (1: 255 per thread)"),
                Param("GROUP_M", (1, 4, 8, 16), 8, "block-rows per rasterization group (1: row order)"),
            ),
            constraints=_v9_constraints,
        ),
        Variant(
            name="v12",
            file="v12_stream_k.cu",
            summary="stream-K on a persistent grid of MINB x SMs blocks: even shares of (tile, k tile) iterations, ordered fixup",
            min_sm=80, min_sm_for="cp.async",
            launch=_v12_launch,
            # v11 tuned, MINB=2: the grid is 2 x SMs, as many blocks as v11 ran per wave there.
            params=_v11_tuned_params(
                Param("MINB", (1, 2, 3, 4), 2, "blocks per SM: the registers are sized for it and the grid is MINB x SMs"),
                Param("SK_ROUNDS", (0, 1, 2, 99), 1,
                      "full rounds of MINB x SMs tiles shared stream-K beside the partial one (99: all of them)"),
            ),
            constraints=v12_constraints,
            extra_args=_v12_extra_args,
        ),
        Variant(
            name="v13",
            file="v13_split_tail.cu",
            summary="v11's tiles in whole waves; the last, partial wave's tiles split along K, added in slice order",
            min_sm=80, min_sm_for="cp.async",
            launch=_v13_launch,
            # v11 tuned at MINB=1 (161 registers under NVRTC 13.0: three blocks per SM), and a wave of
            # three blocks per SM.
            params=_v11_tuned_params(
                Param("MINB", (1, 2, 3, 4), 1, "blocks per SM the registers are sized for (1: up to 255 per thread)"),
                Param("RESIDENT", (1, 2, 3, 4), 3,
                      "blocks per SM the tail is planned for (the wave is RESIDENT x SMs): the occupancy ptxas's registers allow"),
                Param("S", (1, 2, 4, 8, 16), 8, "the most k slices a tail tile is cut into (the plan picks 1..S)"),
            ),
            constraints=_v13_constraints,
            extra_args=_v13_extra_args,
            resident_param="RESIDENT",
            access=_v13_model,
        ),
        Variant(
            name="v14",
            file="v14_tf32x3.cu",
            summary="3xTF32: A and B split into TF32 high and low parts, gemm_bf16's t4 (wgmma, TMA) summing three products",
            launch=t4_launch,
            params=_V14_PARAMS,
            constraints=t4_constraints,
            min_sm=90,
            min_sm_for="wgmma, setmaxnreg, clusters",
            arch_specific=True,
            extra_args=_v14_extra_args,
            stage=_v14_stage,
            access=_v14_model,
            # Three TF32 products per FLOP of the problem: held to a third of the TF32 tensor rate.
            compute_ceiling="tensor_tf32",
            ceiling_ops=PARTS,
        ),
        Variant(
            name="sk",
            file="sk_sliced_k.cu",
            summary="sliced K, small tiles: KS thread groups split each k tile, partial sums added in order",
            launch=_sk_launch,
            params=(
                Param("BM", (1, 2, 4, 8, 16, 32, 64, 128), 16, "block tile rows"),
                Param("BN", (1, 2, 4, 8, 16, 32, 64, 128), 64, "block tile columns"),
                Param("BK", (8, 16, 32, 64, 128), 32, "k depth of one shared-memory tile"),
                Param("TM", (1, 2, 4, 8), 2, "rows of C per thread (BM/TM rows apart)"),
                Param("TN", (1, 2, 4, 8), 4, "columns of C per thread (BN/TN columns apart)"),
                Param("KS", (1, 2, 4, 8, 16, 32), 2, "k groups per block; their partial sums are added in order"),
                Param("MINB", (1, 2, 3, 4), 2, "blocks per SM the registers are sized for"),
            ),
            constraints=_sk_constraints,
            access=sk_access,
            tune_shapes=SK_TUNE_SHAPES,
            rung=False,
        ),
        Variant(
            name="gv",
            file="gv_gemv_rows.cu",
            summary="GEMV-class, a few rows: float4 rows of B streamed once, K split across blocks, ordered fixup",
            launch=_gv_launch,
            params=(
                Param("BM", (1, 2, 4), 1, "rows of C per block (each float4 of B serves BM rows)"),
                Param("CT", (16, 32, 64, 128), 64, "threads along N; the block is BN = 4*CT columns"),
                Param("KT", (1, 2, 4, 8, 16), 4, "thread rows along k; their partial sums are added in order"),
                Param("U", (1, 2, 4, 8), 4, "k rows per thread per step: float4 loads of B in flight"),
                Param("S", (1, 2, 4, 8, 16, 32), 16, "k slices across blocks (grid.y), added in slice order"),
                # 4 x 256 threads at <= 64 registers: 528 resident blocks on 132 SMs hold 1 x 8192's 512 in one wave
                Param("MINB", (1, 2, 3, 4), 4, "blocks per SM the registers are sized for"),
            ),
            constraints=_gv_constraints,
            extra_args=_gv_extra_args,
            access=gv_access,
            tune_shapes=(GEMV_ROW_SHAPE,),
            rung=False,
        ),
        Variant(
            name="gt",
            file="gt_gemv_cols.cu",
            summary="GEMV-class, a few columns: a warp per row of A, float4 loads, shuffle-tree sums",
            launch=_gt_launch,
            params=(
                Param("BN", (1, 2, 4, 8), 1, "columns of C per warp (each float4 of A serves BN columns)"),
                Param("WARPS", (2, 4, 8, 16), 8, "warps per block"),
                Param("RW", (1, 2, 4), 1, "rows of A per warp, one after the other"),
                Param("U", (1, 2, 4, 8), 4, "float4s of A per lane per step, all in flight"),
                Param("MINB", (1, 2, 3, 4), 3, "blocks per SM the registers are sized for (3 x 256 threads: 80 each)"),
            ),
            constraints=_gt_constraints,
            access=gt_access,
            tune_shapes=(GEMV_COL_SHAPE,),
            rung=False,
        ),
        Variant(
            name="sx",
            file="sx_split_k.cu",
            summary="split-K across blocks on v9's ring: S k slices, partial tiles added in slice order by the last block",
            min_sm=80, min_sm_for="cp.async",
            launch=_sx_launch,
            # v9's params, at 64 x 64 tiles of two 32 x 64 warp tiles (64 of them at 512^3 and at
            # 4096 x 64: 4096 x 64 has no 128-wide tile), and S.
            params=_tile_params(bm=64, bn=64) + _warp_params(wm=32, wn=64, wniter=2) + (
                Param("STAGES", (2, 3, 4, 5), 3, "tiles in the cp.async ring"),
                Param("MINB", (1, 2, 3, 4), 2, "blocks per SM the registers are sized for"),
                Param("GROUP_M", (1, 4, 8, 16), 8, "block-rows per rasterization group (1: row order)"),
                Param("S", (1, 2, 3, 4, 6, 8, 16), 4, "k slices across blocks (grid.y), added in slice order"),
            ),
            constraints=_sx_constraints,
            extra_args=_sx_extra_args,
            access=sx_access,
            tune_shapes=SX_TUNE_SHAPES,
            rung=False,
        ),
    )

    def best_default(self, shape: Shape) -> tuple[str, Params, str] | None:
        """Untuned: gv for one row, gt for one column, sx for a few rows or columns and for shapes
        v9's tiles leave the card half idle on (see few_tiles, sx_slices), else v9 at its defaults."""
        kind = skinny_class(shape)
        if kind == "one row":
            gv = self.variant("gv")
            params = _fit_minb(gv, gv.default_params() | {"BM": _smallest_choice(gv.param("BM").choices, shape["M"])}, shape)
            return "gv", params, "nothing tuned near: gv for one row"
        if kind == "one column":
            gt = self.variant("gt")
            params = _fit_minb(gt, gt.default_params() | {"BN": _smallest_choice(gt.param("BN").choices, shape["N"])}, shape)
            return "gt", params, "nothing tuned near: gt for one column"
        if kind is not None or few_tiles(shape):
            sx = self.variant("sx")
            params = sx.default_params()
            params["S"] = sx_slices(shape, params, sx.param("S").choices)
            return "sx", params, f"nothing tuned near: sx for {kind or 'few tiles'}"
        return "v9", self.variant("v9").default_params(), "nothing tuned near: v9's defaults"

    def flops(self, shape: Shape) -> float:
        return 2.0 * shape["M"] * shape["N"] * shape["K"]

    def bytes_moved(self, shape: Shape) -> int:
        m, n, k = shape.values
        return 4 * (m * k + k * n + m * n)

    def device_bytes(self, shape: Shape) -> int:
        m, n, k = shape.values
        total = 4 * (m * k + k * n + m * n)
        total += 4 * PARTS * (m + n) * padded_k(k)  # v14's split copies of A and B (tf32_split.py)
        if m * n * k > CPU_REFERENCE_MAX_MACS:
            total += 8 * (m * k + k * n + m * n)  # the float64 copies for the GPU reference
        return total

    def make_inputs(self, shape: Shape, rng: np.random.Generator, exact: bool) -> dict:
        m, n, k = shape.values
        if exact:
            # Small integers: |a*b| <= 6, so every partial sum stays an exact float32 integer while
            # K <= 2^24 / 6. Periods 7 and 5 divide no tile size, so a transposed or shifted index
            # reads a different value instead of the same one back.
            if k > (1 << 24) // 6:
                raise GpulabError(f"--exact needs K <= {(1 << 24) // 6} so that sums stay exact")
            a = (rng.integers(-3, 4, size=(m, k))).astype(np.float32)
            b = (rng.integers(-2, 3, size=(k, n))).astype(np.float32)
        else:
            a = rng.uniform(-1.0, 1.0, size=(m, k)).astype(np.float32)
            b = rng.uniform(-1.0, 1.0, size=(k, n)).astype(np.float32)
        return {"A": a, "B": b}

    def output(self, shape: Shape, xp):
        return xp.full((shape["M"], shape["N"]), xp.nan, dtype=xp.float32)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        m, n, k = shape.values
        return (np.int32(m), np.int32(n), np.int32(k), inputs["A"], inputs["B"], out)

    def reference(self, inputs: dict, shape: Shape, xp):
        """float64 A*B, on the CPU for small shapes, else on the GPU; returned in `xp`."""
        m, n, k = shape.values
        if m * n * k <= CPU_REFERENCE_MAX_MACS:
            a = to_host(inputs["A"]).astype(np.float64)
            b = to_host(inputs["B"]).astype(np.float64)
            ref = a @ b
            return xp.asarray(ref)
        return inputs["A"].astype(xp.float64) @ inputs["B"].astype(xp.float64)

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        ref = self.reference(inputs, shape, xp)
        return compare_exact(out, ref, xp) if exact else compare_float(out, ref, xp)

    def vendor_baselines(self) -> dict:
        return {"cublas": _cublas_sgemm}


def _cublas_sgemm(inputs: dict, out, shape: Shape) -> None:
    """cuBLAS FP32 through CuPy, TF32 off: CuPy uses TF32 only when CUPY_TF32=1 is set (the lab
    refuses to run with it set), so this is the honest FP32 baseline."""
    cupy().matmul(inputs["A"], inputs["B"], out=out)


EXPERIMENT = Sgemm()
