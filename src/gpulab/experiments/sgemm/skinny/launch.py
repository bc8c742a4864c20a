"""Launch geometry, constraints and extra arguments of the GEMV-class kernels gv and gt."""

from __future__ import annotations

from gpulab.arith import cdiv
from gpulab.experiments.base import Launch, Params, Shape
from gpulab.experiments.gemm_common import SMEM_PER_BLOCK_RESERVED, SMEM_SM_MAX, SMEM_STATIC_MAX, check_regs
from gpulab.experiments.sgemm.ladder.launch import check_threads
from gpulab.experiments.sgemm.split_workspace import split_buffers


def gv_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(cdiv(s["N"], 4 * p["CT"]), p["S"], cdiv(s["M"], p["BM"])), block=(p["CT"] * p["KT"], 1, 1))


def gv_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    launch = gv_launch(params, shape)
    return split_buffers(inputs, out, shape, params, launch.grid[0] * launch.grid[2])


def gv_constraints(p: Params, s: Shape | None) -> str | None:
    threads = p["CT"] * p["KT"]
    if reason := check_threads(threads):
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


def gt_launch(p: Params, s: Shape) -> Launch:
    rows_per_block = p["WARPS"] * p["RW"]
    return Launch(grid=(cdiv(s["M"], rows_per_block), cdiv(s["N"], p["BN"]), 1), block=(32 * p["WARPS"], 1, 1))


def gt_constraints(p: Params, s: Shape | None) -> str | None:
    threads = 32 * p["WARPS"]
    if reason := check_threads(threads):
        return reason
    # Checked against ptxas (NVRTC 13.5, sm_90) on random samples (no spill in 80): U float4s of A
    # and (N == 1) of B in flight, BN accumulators and 4 k of B values per step, ~30 for the rest.
    if reason := check_regs(8 * p["U"] + 10 * p["BN"] + 30, threads, p["MINB"]):
        return reason
    if s is not None and cdiv(s["N"], p["BN"]) > 65535:
        return f"{cdiv(s['N'], p['BN'])} column blocks of BN={p['BN']} exceed a grid's y (65535): gt is for a few columns"
    return None
