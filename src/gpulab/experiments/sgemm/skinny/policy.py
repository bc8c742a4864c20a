"""The skinny-shape policy: which shapes the ladder's tiles cannot fill (skinny_class, few_tiles),
and what gpulab's best row runs at a shape when nothing is tuned near it (best_default)."""

from __future__ import annotations

from gpulab.arith import cdiv
from gpulab.experiments.base import Experiment, Params, Shape, Variant


# The skinny shape classes of the default shapes (M or N <= 64 with K >= 4096, and a 1 x N x K
# product), which sk is tuned on (with 512^3: gpulab.experiments.sgemm.splitk.SK_TUNE_SHAPES).
SKINNY_SHAPES = ((4096, 64, 4096), (64, 4096, 4096), (1, 8192, 8192), (8192, 1, 8192))
SKINNY_MAX = 64  # M or N at most this: the ladder's 64-128 wide tiles leave the card mostly idle

# The GEMV-class shapes gv and gt are made for (and tuned on).
GEMV_ROW_SHAPE = (1, 8192, 8192)
GEMV_COL_SHAPE = (8192, 1, 8192)


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


# sx for a decode batch (M <= 16 tokens x a layer's weights): 16 x 256 tiles of four 16 x 64 warps,
# 16-deep k tiles in a ring of 4 (48 KiB of B in flight a block, 3 blocks an SM by shared memory);
# S as the shape needs (16 at 16 x 6144 x 4096: 24 tiles x 16 = 384 blocks, one wave of 3 an SM).
SX_DECODE = {"BM": 16, "BN": 256, "BK": 16, "WM": 16, "WN": 64, "WNITER": 2, "STAGES": 4}
DECODE_ROWS = 16  # M at most this: a decode batch, SX_DECODE's one row of 16-row tiles

# sx for a few columns (N <= 32), the mirror of the decode tiles: 64 x 32 tiles of four 16 x 32 warp
# tiles (one sub-tile of 8 lanes x 4 columns each, WNITER = 1), so an N of 31 computes one column
# of padding where sx's default 64-wide tiles compute 33 (2.06x the product's FFMAs). Four warps
# and a ring of 4: sx tuned over the 32-wide tiles on an H100 (2026-12-05, notebook/device/
# device_call27.sh) ran 2048x31x4096 in 32.6 us so (0.92x cuBLAS FP32 there, 29.9 us), two 32-row
# warps in a ring of 3 in 40.0-40.6 us; the 64-wide default took 97.6.
SX_NARROW = {"BN": 32, "WN": 32, "WNITER": 1, "BK": 16, "WM": 16, "STAGES": 4}
NARROW_COLS = 32  # N at most this: SX_NARROW's one column of 32-wide tiles


def gv_best_refusal(shape: Shape) -> str | None:
    """gv is a GEMV for a decode batch: every block of BM <= 4 rows reads all of B, so at a few hundred
    rows its blocks are many and short, bound by the instructions and latency of its loop, not by the
    bytes its model counts. Its runs at 1 to 16 rows, lent there, put it at 3-5 us at 300x31x1000 and
    300x31x2048; it ran 24-74 us in every row block and slice count tried, cuBLAS FP32 12-13 (an H100,
    2026-12-07, notebook/probes/gv_rows/), and at 8192x1x8192 it ran 0.10 of its model (H200)."""
    if shape["M"] > DECODE_ROWS:
        return f"gv is weighed for at most {DECODE_ROWS} rows (a GEMV for a decode batch)"
    return None


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
    """Which skinny class a shape is in ("one row", "few rows", "one column", "few columns"), or
    None for one the ladder's tiles fill."""
    m, n = shape["M"], shape["N"]
    if min(m, n) > SKINNY_MAX:
        return None
    if m <= n:
        return "one row" if m <= 4 else "few rows"
    return "one column" if n <= 4 else "few columns"


def best_default(experiment: Experiment, shape: Shape) -> tuple[str, Params, str]:
    """Untuned: gv for one row, gt for one column, sx for a few rows or columns (with its 16-row
    decode tiles, SX_DECODE, at M <= 16) and for shapes v9's tiles leave the card half idle on (see
    few_tiles, sx_slices), else v9 at its defaults."""
    kind = skinny_class(shape)
    if kind == "one row":
        gv = experiment.variant("gv")
        params = _fit_minb(gv, gv.default_params() | {"BM": _smallest_choice(gv.param("BM").choices, shape["M"])}, shape)
        return "gv", params, "nothing tuned near: gv for one row"
    if kind == "one column":
        gt = experiment.variant("gt")
        params = _fit_minb(gt, gt.default_params() | {"BN": _smallest_choice(gt.param("BN").choices, shape["N"])}, shape)
        return "gt", params, "nothing tuned near: gt for one column"
    if kind is not None or few_tiles(shape):
        sx = experiment.variant("sx")
        decode = kind == "few rows" and shape["M"] <= DECODE_ROWS
        narrow = kind == "few columns" and shape["N"] <= NARROW_COLS
        params = sx.default_params() | (SX_DECODE if decode else SX_NARROW if narrow else {})
        params["S"] = sx_slices(shape, params, sx.param("S").choices)
        why = "a decode batch" if decode else "32-wide tiles" if narrow else kind or "few tiles"
        return "sx", params, f"nothing tuned near: sx for {why}"
    return "v9", experiment.variant("v9").default_params(), "nothing tuned near: v9's defaults"
