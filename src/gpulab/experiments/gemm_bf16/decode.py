"""d0, gemm_bf16's decode kernel (d0_decode.cu) as data: up to 16 rows of A against a weight matrix
Bt streamed once (each further 16 rows one more pass), its launch, the k slices chosen on the host and
the split-K workspace.

The shapes it is for are a language model's linear layers at decode time: a batch of 1 to 16 tokens
(M) times the layer's N x K weights (Llama-3-8B's and -70B's, N 4096-57344, K 4096-28672), where the
time is one read of Bt's N*K*2 bytes. The kernel's header has the napkin math.
"""

from __future__ import annotations

from gpulab.arith import cdiv
from gpulab.experiments.base import Launch, Param, Params, Shape, Variant
from gpulab.experiments.gemm_bf16.access_small import d0_access
from gpulab.experiments.gemm_common import (
    SMEM_BLOCK_OPTIN_MAX, SMEM_PER_BLOCK_RESERVED, SMEM_SM_MAX, check_regs,
)
from gpulab.gpu.device import sm_count
from gpulab.gpu.seam import cupy

M_GROUP = 16  # rows of A per block row (grid.z): two n8 tiles of the mma's B operand
GRID_Z_MAX = 65535
F32 = 4
# The largest k split across blocks the host picks by itself (S = 0): past it the fixup's S planes
# cost more than the blocks they fill (and every N of the Llama shapes needs at most 2).
AUTO_SLICES_MAX = 8
# At least this many steps of 32 U k per warp where the host picks S: a warp that runs one or two
# steps spends most of its life on its start and its partial's reduction.
AUTO_MIN_STEPS = 2

# The Llama-3-8B and -70B linear layers (N x K) at decode batches of 1 and 16 tokens: what
# `gpulab tune gemm_bf16 d0` scores on.
LLAMA_NK = ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336),
            (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672))
DECODE_TUNE_SHAPES = tuple((m, n, k) for m in (1, 16) for n, k in LLAMA_NK)


def rows_per_block(p: Params) -> int:
    """Rows of Bt (columns of C) per block: G groups of 16, the mma's M."""
    return 16 * p["G"]


def step_k(p: Params) -> int:
    """k per warp step: 4 lanes of a row x U chunks of 8."""
    return 32 * p["U"]


def block_columns(p: Params, s: Shape) -> int:
    return cdiv(s["N"], rows_per_block(p))


def row_groups(s: Shape) -> int:
    """Block rows along grid.z: 16 rows of A each (one for a decode batch)."""
    return cdiv(s["M"], M_GROUP)


def auto_slices(p: Params, s: Shape) -> int:
    """The k slices across blocks (grid.y): S where it is given, else (S = 0) as many as fit MINB x
    SMs blocks where N alone gives fewer (at the defaults' 396 on the H200: N = 4096 at G = 2 is 128
    block columns, 3 slices; N = 6144 192, 2), at most AUTO_SLICES_MAX and no more than leave
    AUTO_MIN_STEPS steps to each warp."""
    if p["S"]:
        return p["S"]
    want = (p["MINB"] * sm_count()) // (block_columns(p, s) * row_groups(s))
    most = cdiv(s["K"], step_k(p)) // (AUTO_MIN_STEPS * p["KW"])
    return max(1, min(want, most, AUTO_SLICES_MAX))


def d0_warp_steps(p: Params, s: Shape) -> int:
    """The steps of 32 U k the busiest warp runs (its k range of its block's slice), and where the
    host splits K over blocks, the slices the fixup then reads one after another (Variant.
    serial_fixup): at 16x1024x4096, KW = 4 in 4 slices and KW = 8 in 2 both run 2 steps a warp, but
    KW = 4's fixup reads twice the slices, and ran 1.11x KW = 8's time (H200)."""
    slices = auto_slices(p, s)
    return cdiv(cdiv(s["K"], step_k(p)), slices * p["KW"]) + (slices if slices > 1 else 0)


def d0_smem_bytes(p: Params) -> int:
    """Each warp's partial tile, 16 rows of A by 16G + 4 floats (the pad: conflict-free stores)."""
    return p["KW"] * M_GROUP * (rows_per_block(p) + 4) * F32


def d0_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(block_columns(p, s), auto_slices(p, s), row_groups(s)), block=(32 * p["KW"], 1, 1),
                  smem_dynamic_bytes=d0_smem_bytes(p))


# ptxas's registers per thread by (G, U, DEPTH), under the tightest launch-bound cap (of 255, 168,
# 128, 80, 64: what 32 KW threads x MINB blocks give) at which neither NVRTC 13.0 (the H200's) nor
# 13.5 spilled, the larger of the two counts there (sm_90, 2026-12-05). check_regs then admits exactly
# the caps at or above it, each compiled without a spill. What they hold: the step's Bt chunks (2 U G
# uint4) and A's (U NM), twice with DEPTH = 2; the accumulators (8 G); the row pointers and the rest.
# (4, 4, 2) spilled at 255: no cap admits it.
D0_REGISTERS = {(1, 1, 1): 64, (1, 2, 1): 64, (1, 4, 1): 119, (2, 1, 1): 64, (2, 2, 1): 122, (2, 4, 1): 160,
                (4, 1, 1): 128, (4, 2, 1): 153, (4, 4, 1): 240,
                (1, 1, 2): 79, (1, 2, 2): 126, (1, 4, 2): 194, (2, 1, 2): 126, (2, 2, 2): 167, (2, 4, 2): 255,
                (4, 1, 2): 206, (4, 2, 2): 254, (4, 4, 2): 256}


def d0_constraints(p: Params, s: Shape | None) -> str | None:
    if s is not None and row_groups(s) > GRID_Z_MAX:
        return (f"M = {s['M']} makes {row_groups(s)} block rows of 16, over grid.z's {GRID_Z_MAX}: "
                "d0 is for decode batches")
    smem = d0_smem_bytes(p)
    if smem > SMEM_BLOCK_OPTIN_MAX:
        return f"KW={p['KW']} warps' partial tiles need {smem} B of shared memory, over {SMEM_BLOCK_OPTIN_MAX}"
    if p["MINB"] * (smem + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"MINB={p['MINB']} blocks of {smem} B shared memory do not fit in one SM"
    return check_regs(D0_REGISTERS[p["G"], p["U"], p["DEPTH"]], 32 * p["KW"], p["MINB"])


def d0_workspace_sizes(p: Params, s: Shape) -> tuple[int, int]:
    """(FP32 elements of the workspace, counters): a 16 x 16G plane per block, one counter per tile
    (block column and row), where S > 1; one-element stand-ins where it is 1 (the kernel touches neither)."""
    slices, tiles = auto_slices(p, s), block_columns(p, s) * row_groups(s)
    if slices == 1:
        return 1, 1
    return slices * tiles * M_GROUP * rows_per_block(p), tiles


def d0_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """The workspace and the counters, zeroed once: the last block at a column resets its counter, so
    a launcher may run any number of times (sgemm/split_k.cuh)."""
    cp = cupy()
    work, counters = d0_workspace_sizes(params, shape)
    return cp.empty(work, dtype=cp.float32), cp.zeros(counters, dtype=cp.uint32)


def d0_model(p: Params, s: Shape):
    """d0's access model with the k slices the host gives the launch."""
    return d0_access(p, s, auto_slices(p, s))


D0 = Variant(
    name="d0",
    file="d0_decode.cu",
    summary="decode (M <= 16): Bt streamed once into mma.sync fragments (k permuted), K split over warps and blocks",
    launch=d0_launch,
    params=(
        Param("G", (1, 2, 4), 2, "row groups of 16 per warp (16G rows of Bt per block; A reused G times)"),
        Param("U", (1, 2, 4), 2, "chunks of 8 k per lane per step: 2 U G LDG.128 of Bt in flight"),
        Param("KW", (2, 4, 8, 16), 8, "warps per block, each a k range; partials added in warp order"),
        Param("S", (0, 1, 2, 3, 4, 6, 8), 0,
              "k slices across blocks (grid.y), added in slice order; 0: chosen on the host"),
        Param("MINB", (1, 2, 3, 4), 2, "blocks per SM the registers are sized for"),
        # DEPTH 1 by default: on the H200 (2026-12-04, notebook/device/device_call2.sh) KW 4, MINB 3,
        # DEPTH 2 ran 16 x 6144 x 4096 in 24.6 us and 1 x 6144 x 4096 in 22.0 against KW 8, MINB 2,
        # DEPTH 1's 21.4 and 19.3 (cuBLAS 17.7 and 18.5): the second pass's defaults lost
        Param("DEPTH", (1, 2), 1, "steps in flight per warp: 2 issues the next step's loads before this step's mma"),
    ),
    constraints=d0_constraints,
    min_sm=80,
    min_sm_for="BF16 mma.sync",
    extra_args=d0_extra_args,
    access=d0_model,
    tune_shapes=DECODE_TUNE_SHAPES,
    rung=False,
    serial_fixup=True,
    warp_k_steps=d0_warp_steps,
)
