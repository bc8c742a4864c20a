"""The GEMV-class kernels, for products with one row or one column (or a few): gv streams float4
rows of B once for a few rows of A, K split across blocks; gt gives a warp to each row of A for a
few columns. skinny.policy says which shapes are skinny and what the best row runs on them."""

from __future__ import annotations

from gpulab.experiments.base import Param, Variant
from gpulab.experiments.sgemm.skinny.access import gt_access, gv_access
from gpulab.experiments.sgemm.skinny.launch import gt_constraints, gt_launch, gv_constraints, gv_extra_args, gv_launch
from gpulab.experiments.sgemm.skinny.policy import GEMV_COL_SHAPE, GEMV_ROW_SHAPE, gv_best_refusal


GV = Variant(
    name="gv",
    file="gv_gemv_rows.cu",
    summary="GEMV-class, a few rows: float4 rows of B streamed once, K split across blocks, ordered fixup",
    launch=gv_launch,
    params=(
        Param("BM", (1, 2, 4), 1, "rows of C per block (each float4 of B serves BM rows)"),
        Param("CT", (16, 32, 64, 128), 64, "threads along N; the block is BN = 4*CT columns"),
        Param("KT", (1, 2, 4, 8, 16), 4, "thread rows along k; their partial sums are added in order"),
        Param("U", (1, 2, 4, 8), 4, "k rows per thread per step: float4 loads of B in flight"),
        Param("S", (1, 2, 4, 8, 16, 32), 16, "k slices across blocks (grid.y), added in slice order"),
        # 4 x 256 threads at <= 64 registers: 528 resident blocks on 132 SMs hold 1 x 8192's 512 in one wave
        Param("MINB", (1, 2, 3, 4), 4, "blocks per SM the registers are sized for"),
    ),
    constraints=gv_constraints,
    extra_args=gv_extra_args,
    access=gv_access,
    best_refusal=gv_best_refusal,
    tune_shapes=(GEMV_ROW_SHAPE,),
    rung=False,
)

GT = Variant(
    name="gt",
    file="gt_gemv_cols.cu",
    summary="GEMV-class, a few columns: a warp per row of A, float4 loads, shuffle-tree sums",
    launch=gt_launch,
    params=(
        Param("BN", (1, 2, 4, 8), 1, "columns of C per warp (each float4 of A serves BN columns)"),
        Param("WARPS", (2, 4, 8, 16), 8, "warps per block"),
        Param("RW", (1, 2, 4), 1, "rows of A per warp, one after the other"),
        Param("U", (1, 2, 4, 8), 4, "float4s of A per lane per step, all in flight"),
        Param("MINB", (1, 2, 3, 4), 3, "blocks per SM the registers are sized for (3 x 256 threads: 80 each)"),
    ),
    constraints=gt_constraints,
    access=gt_access,
    tune_shapes=(GEMV_COL_SHAPE,),
    rung=False,
)
