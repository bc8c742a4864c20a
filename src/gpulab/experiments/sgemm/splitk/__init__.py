"""The kernels that split K, for shapes whose output tiles cannot fill the card: sk (sliced K inside
a block, small tiles), sx (split-K across blocks on v9's ring, the ordered fixup), v12 (stream-K on a
persistent grid) and v13 (whole waves, the last partial wave's tiles split along K). v12 and v13
keep v11's loop and change its schedule: rungs of the ladder; sk and sx are made for skinny and
few-tile shapes."""

from __future__ import annotations

from gpulab.experiments.base import Param, Params, Shape, Variant
from gpulab.experiments.sgemm.ladder import tile_params, v11_tuned_params, warp_params
from gpulab.experiments.sgemm.skinny.policy import SKINNY_SHAPES, SX_DECODE  # noqa: F401  (sx's decode tiles)
from gpulab.experiments.sgemm.splitk.access import sk_access, sx_access, v13_access
from gpulab.experiments.sgemm.splitk.launch import (
    sk_constraints, sk_launch, split_tail_plan, sx_constraints, sx_extra_args, sx_launch, v12_constraints,
    v12_extra_args, v12_launch, v13_constraints, v13_extra_args, v13_launch,
)

# sk is tuned on the skinny classes of the default shapes with 512^3 (32 of v9's 64 x 128 tiles for
# 132 SMs); sx on the few-tile shapes.
SK_TUNE_SHAPES = SKINNY_SHAPES + ((512, 512, 512),)
SX_TUNE_SHAPES = ((4096, 64, 4096), (64, 4096, 4096), (512, 512, 512))
SX_BM = (16, 32, 64, 128, 256)  # v9's tile rows and two narrower, for a few rows (M = 16: decode)
SX_BN = (32, 64, 128, 256)  # and one narrower column: a warp tile of 32 (WNITER = 1) for a few columns

# sk's configs by skinny class (skinny.policy.skinny_class): what the best row ran where nothing
# was tuned near a skinny shape until gv, gt and sx took that over (skinny.policy.best_default), kept
# as sk's reference configs, which the tests compile and run. A vector-like side (<= 4) gets one
# row (or column) per tile and 8 k groups of 32 lanes reading 128-byte segments of the long matrix;
# a few dozen rows or columns get 16 x 64 (or 64 x 16) tiles, 256 threads in 2 k groups, 256 blocks
# at 4096 x 64 x 4096.
SK_DEFAULTS = {
    "one row": {"BM": 1, "BN": 32, "BK": 64, "TM": 1, "TN": 1, "KS": 8, "MINB": 2},
    "one column": {"BM": 32, "BN": 1, "BK": 64, "TM": 1, "TN": 1, "KS": 8, "MINB": 2},
    "few rows": {"BM": 16, "BN": 64, "BK": 32, "TM": 2, "TN": 4, "KS": 2, "MINB": 2},
    "few columns": {"BM": 64, "BN": 16, "BK": 32, "TM": 4, "TN": 2, "KS": 2, "MINB": 2},
}


def _v13_model(p: Params, s: Shape):
    """v13's access model on the plan its launch runs (split_tail_plan: the card's SM count decides it)."""
    plan = split_tail_plan(p, s)
    return v13_access(p, s, plan.whole, plan.splits)


V12 = Variant(
    name="v12",
    file="v12_stream_k.cu",
    summary="stream-K on a persistent grid of MINB x SMs blocks: even shares of (tile, k tile) iterations, ordered fixup",
    min_sm=80, min_sm_for="cp.async",
    launch=v12_launch,
    # v11 tuned, MINB=2: the grid is 2 x SMs, as many blocks as v11 ran per wave there.
    params=v11_tuned_params(
        Param("MINB", (1, 2, 3, 4), 2, "blocks per SM: the registers are sized for it and the grid is MINB x SMs"),
        Param("SK_ROUNDS", (0, 1, 2, 99), 1,
              "full rounds of MINB x SMs tiles shared stream-K beside the partial one (99: all of them)"),
    ),
    constraints=v12_constraints,
    extra_args=v12_extra_args,
    serial_fixup=True,
)

V13 = Variant(
    name="v13",
    file="v13_split_tail.cu",
    summary="v11's tiles in whole waves; the last, partial wave's tiles split along K, added in slice order",
    min_sm=80, min_sm_for="cp.async",
    launch=v13_launch,
    # v11 tuned at MINB=1 (161 registers under NVRTC 13.0: three blocks per SM), and a wave of
    # three blocks per SM.
    params=v11_tuned_params(
        Param("MINB", (1, 2, 3, 4), 1, "blocks per SM the registers are sized for (1: up to 255 per thread)"),
        Param("RESIDENT", (1, 2, 3, 4), 3,
              "blocks per SM the tail is planned for (the wave is RESIDENT x SMs): the occupancy ptxas's registers allow"),
        Param("S", (1, 2, 4, 8, 16), 8, "the most k slices a tail tile is cut into (the plan picks 1..S)"),
    ),
    constraints=v13_constraints,
    extra_args=v13_extra_args,
    resident_param="RESIDENT",
    access=_v13_model,
    serial_fixup=True,
)

SK = Variant(
    name="sk",
    file="sk_sliced_k.cu",
    summary="sliced K, small tiles: KS thread groups split each k tile, partial sums added in order",
    launch=sk_launch,
    params=(
        Param("BM", (1, 2, 4, 8, 16, 32, 64, 128), 16, "block tile rows"),
        Param("BN", (1, 2, 4, 8, 16, 32, 64, 128), 64, "block tile columns"),
        Param("BK", (8, 16, 32, 64, 128), 32, "k depth of one shared-memory tile"),
        Param("TM", (1, 2, 4, 8), 2, "rows of C per thread (BM/TM rows apart)"),
        Param("TN", (1, 2, 4, 8), 4, "columns of C per thread (BN/TN columns apart)"),
        Param("KS", (1, 2, 4, 8, 16, 32), 2, "k groups per block; their partial sums are added in order"),
        Param("MINB", (1, 2, 3, 4), 2, "blocks per SM the registers are sized for"),
    ),
    constraints=sk_constraints,
    access=sk_access,
    # One k tile in flight in registers, then a barrier: each step waits on loads issued one step before
    k_step_param="BK",
    tune_shapes=SK_TUNE_SHAPES,
    rung=False,
)

SX = Variant(
    name="sx",
    file="sx_split_k.cu",
    summary="split-K across blocks on v9's ring: S k slices, partial tiles added in slice order by the last block",
    min_sm=80, min_sm_for="cp.async",
    launch=sx_launch,
    # v9's params, at 64 x 64 tiles of two 32 x 64 warp tiles (64 of them at 512^3 and at
    # 4096 x 64: 4096 x 64 has no 128-wide tile), and S. BM 16 and 32 (one warp tile of 16 or 32
    # rows, WM = BM): a decode batch of 16 tokens against a layer's weights in tiles with no row of
    # padding (at BM = 64, 48 of every 64 rows' FMAs are thrown away), sx_split_k.cu's header. BN
    # 32 (one warp tile of 32 columns, WN = 32, WNITER = 1) is the mirror for a few columns.
    params=tile_params(bm=64, bn=64, bm_choices=SX_BM, bn_choices=SX_BN) + warp_params(wm=32, wn=64, wniter=2) + (
        Param("STAGES", (2, 3, 4, 5), 3, "tiles in the cp.async ring"),
        Param("MINB", (1, 2, 3, 4), 2, "blocks per SM the registers are sized for"),
        Param("GROUP_M", (1, 4, 8, 16), 8, "block-rows per rasterization group (1: row order)"),
        Param("S", (1, 2, 3, 4, 6, 8, 16), 4, "k slices across blocks (grid.y), added in slice order"),
    ),
    constraints=sx_constraints,
    extra_args=sx_extra_args,
    access=sx_access,
    tune_shapes=SX_TUNE_SHAPES,
    rung=False,
)
