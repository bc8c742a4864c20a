"""The ladder's launch geometry and the constraints each rung states (v0-v11), checked in Python
before anything compiles. The card limits they check against: gpulab.experiments.gemm_common."""

from __future__ import annotations

from gpulab.arith import cdiv
from gpulab.experiments.base import Launch, Params, Shape
from gpulab.experiments.gemm_common import (
    SMEM_BLOCK_OPTIN_MAX, SMEM_PER_BLOCK_RESERVED, SMEM_SM_MAX, SMEM_STATIC_MAX, check_regs,
)


def v0_launch(p: Params, s: Shape) -> Launch:
    b = p["BLOCK"]
    return Launch(grid=(cdiv(s["N"], b), cdiv(s["M"], b), 1), block=(b, b, 1))


def v1_launch(p: Params, s: Shape) -> Launch:
    t = p["TILE"]
    return Launch(grid=(cdiv(s["N"], t), cdiv(s["M"], t), 1), block=(t, t, 1))


# -- the ladder above v1 --------------------------------------------------------------------------
def _threads_2d(p: Params) -> int:
    """v3-v5: one thread per TM x TN piece of the BM x BN block tile."""
    return (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])


def warps(p: Params) -> int:
    """v6-v9: one warp per WM x WN warp tile."""
    return (p["BM"] // p["WM"]) * (p["BN"] // p["WN"])


def _block_threads(p: Params) -> int:
    if "WM" in p:
        return 32 * warps(p)
    if "TN" in p:
        return _threads_2d(p)
    return p["BM"] * p["BN"] // p["TM"]


def grid_2d_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(s["N"], p["BN"]), cdiv(s["M"], p["BM"]), 1), block=(_block_threads(p), 1, 1))


def v9_smem_bytes(p: Params) -> int:
    """The ring of STAGES tiles (transposed A padded to BM+4, then B), or the write-back slices of
    16 x 36 floats per warp, whichever is larger: they share the dynamic allocation."""
    tile = p["BK"] * (p["BM"] + 4) + p["BK"] * p["BN"]
    return 4 * max(p["STAGES"] * tile, warps(p) * 16 * 36)


def v9_launch(p: Params, s: Shape) -> Launch:
    # A 1D grid: the kernel maps block ids to tiles in groups of GROUP_M block-rows.
    blocks = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    return Launch(grid=(blocks, 1, 1), block=(32 * warps(p), 1, 1), smem_dynamic_bytes=v9_smem_bytes(p))


def check_threads(threads: int) -> str | None:
    if threads % 32 or not 64 <= threads <= 1024:
        return f"{threads} threads per block: need a multiple of 32 between 64 and 1024"
    return None


def v2_constraints(p: Params, s: Shape | None) -> str | None:
    threads = p["BM"] * p["BN"] // p["TM"]
    if p["BM"] % p["TM"]:
        return f"BM={p['BM']} is not a multiple of TM={p['TM']}"
    if reason := check_threads(threads):
        return reason
    if 4 * p["BK"] * (p["BM"] + p["BN"]) > SMEM_STATIC_MAX:
        return "the A and B tiles exceed 48 KiB of static shared memory"
    return check_regs(p["TM"] + 40, threads)


def v3_constraints(p: Params, s: Shape | None, vector: bool = False) -> str | None:
    tm, tn = p["TM"], p["TN"]
    if p["BM"] % tm or p["BN"] % tn:
        return f"BM x BN = {p['BM']} x {p['BN']} is not a whole number of TM x TN = {tm} x {tn} pieces"
    threads = _threads_2d(p)
    if reason := check_threads(threads):
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


def v45_constraints(p: Params, s: Shape | None) -> str | None:
    return v3_constraints(p, s, vector=True)


def _warp_tiling_reason(p: Params) -> str | None:
    """What v6-v9 need of BM BN BK WM WN WNITER: warp tiles of 16 x 32 sub-tiles (4 x 8 lanes of
    4 x 4 fragments) that tile the block tile."""
    if p["WN"] != 32 * p["WNITER"]:
        return (
            f"WN={p['WN']} must be 32 x WNITER={p['WNITER']}: a sub-tile is 8 lanes x TN=4 columns wide"
        )
    if p["BM"] % p["WM"] or p["BN"] % p["WN"]:
        hint = (f" (WN={p['BN']} WNITER={p['BN'] // 32} fits its width)" if p["BN"] < p["WN"] and p["BN"] % 32 == 0
                else f" (WM={p['BM']} fits its height)" if p["BM"] < p["WM"] and p["BM"] % 16 == 0 else "")
        return f"the {p['BM']}x{p['BN']} block tile is not a whole number of {p['WM']}x{p['WN']} warp tiles{hint}"
    if p["TM"] != 4 or p["TN"] != 4:
        return "TM and TN are the 4 x 4 float4 fragment of the zig-zag layout"
    return check_threads(32 * warps(p))


def _staged_regs(p: Params, threads: int) -> int:
    """v6-v8, whose tiles pass through registers: fitted to ptxas over the full grid
    (notebook/probes/sgemm_ladder_resources.py --full), a staged float weighs about three registers with
    its address and guard."""
    wmiter, wniter = p["WM"] // 16, p["WNITER"]
    staged = (p["BM"] * p["BK"] + p["BK"] * p["BN"]) // threads
    return 16 * wmiter * wniter + 2 * (wmiter + wniter) + 3 * staged + 26


def v67_constraints(p: Params, s: Shape | None) -> str | None:
    if reason := _warp_tiling_reason(p):
        return reason
    threads = 32 * warps(p)
    if (p["BM"] * p["BK"] // 4) % threads or (p["BK"] * p["BN"] // 4) % threads:
        return f"the A and B tiles must split into whole float4s per thread ({threads} threads)"
    tiles = 4 * p["BK"] * (p["BM"] + 4 + p["BN"])
    if max(tiles, 4 * warps(p) * 16 * 36) > SMEM_STATIC_MAX:
        return "the tiles (or the write-back slices) exceed 48 KiB of static shared memory"
    return check_regs(_staged_regs(p, threads), threads)


def v8_constraints(p: Params, s: Shape | None) -> str | None:
    if reason := _warp_tiling_reason(p):
        return reason
    threads = 32 * warps(p)
    a_loads, b_loads = p["BM"] * p["BK"] // 4, p["BK"] * p["BN"] // 4
    if a_loads % threads or b_loads % threads:
        return f"the A and B tiles must split into whole float4s per thread ({threads} threads)"
    smem = 4 * max(2 * p["BK"] * (p["BM"] + 4 + p["BN"]), warps(p) * 16 * 36)
    if smem > SMEM_STATIC_MAX:
        return f"two tile stages need {smem} B, over 48 KiB of static shared memory"
    if p["MINB"] * (smem + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"MINB={p['MINB']} blocks of {smem} B shared memory do not fit in one SM"
    return check_regs(_staged_regs(p, threads), threads, p["MINB"])


def v9_constraints(p: Params, s: Shape | None, fragment_regs: int = 0) -> str | None:
    if reason := _warp_tiling_reason(p):
        return reason
    threads = 32 * warps(p)
    if p["BM"] % (threads // 8):
        return f"the A copies take {threads // 8} rows a pass ({threads} threads / 8 k): BM={p['BM']} must be a multiple"
    if (p["BM"] * p["BK"]) % threads:
        return f"the {p['BM']}x{p['BK']} A tile must split into whole copies per thread"
    for per_row in (p["BN"] // 4, p["BN"]):  # 16-byte and 4-byte copies of B
        if (p["BK"] * per_row) % threads or (per_row % threads and threads % per_row):
            return f"the {p['BK']}x{p['BN']} B tile must split into whole rows of copies per thread ({threads} threads)"
    smem = v9_smem_bytes(p)
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


def v10_constraints(p: Params, s: Shape | None) -> str | None:
    """v9's, with registers for the second set of fragments (STAGES >= 2 by its choices)."""
    return v9_constraints(p, s, fragment_regs=_v10_fragment_regs(p))


def _v10_fragment_regs(p: Params) -> int:
    """v10 holds two whole k-steps of fragments, 4*(WM/16 + WNITER) floats each; v9's estimate already
    counts about 1.5 (ptxas overlapped the next step's loads there too), so half a set more. ptxas
    (NVRTC 13.5) takes what the cap allows anyway: 255 at 64 threads, 236 at 128 x 128 and 128 x 256."""
    return 2 * (p["WM"] // 16 + p["WNITER"])
