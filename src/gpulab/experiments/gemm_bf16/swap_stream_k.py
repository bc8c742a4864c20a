"""ks, gemm_bf16's stream-K kernel with the operands swapped (ks_stream_k_swap.cu), as data: its
single wave of blocks, the constraints it states up front, and its arguments (Bt's and A's tensor
maps, the partials' workspace and a counter per tile; the staged copies of A and Bt where K is not a
multiple of 8, as every TMA rung).

For a language model's linear layers at a few tokens (M of 1-128 against N x K weights): the wgmma's
M side takes 128 rows of the weights Bt, its N side the TN tokens, and the k-tiles of all tiles are
shared evenly by SMs x BPS blocks. The kernel's header has the schedule and its napkin math.
"""

from __future__ import annotations

from gpulab.arith import cdiv
from gpulab.experiments.base import Launch, Param, Params, Shape, Variant
from gpulab.experiments.gemm_bf16.access_small import KS_BW, KS_CONSUMERS, ks_access
from gpulab.experiments.gemm_bf16.decode import LLAMA_NK
from gpulab.experiments.gemm_bf16.staging import pad_k_bytes
from gpulab.experiments.gemm_bf16.tma_rungs import BK, one_wave, ring_smem_bytes, staged_in
from gpulab.experiments.gemm_common import (
    SMEM_BLOCK_OPTIN_MAX, SMEM_PER_BLOCK_RESERVED, SMEM_SM_MAX, check_regs,
)
from gpulab.gpu.device import sm_count
from gpulab.gpu.launch import by_value
from gpulab.gpu.seam import cupy
from gpulab.gpu.tma import bf16_matrix_map, encode

# Rows of Bt per tile (two consumer warpgroups of 64: the wgmma's M side) and the consumer threads:
# stated once, beside the access model that needs them too (this module imports it).
BW, CONSUMER_THREADS = KS_BW, KS_CONSUMERS
THREADS = CONSUMER_THREADS + 32  # and one producer warp
# The consumers' registers beside their TN / 2 accumulators and the fixup's TN / 2 sums: descriptors,
# ring position, the range and the fixup's addresses (ptxas under NVRTC 13.5, sm_90a, BPS = 1: 168 at
# TN = 128, 96 at TN = 64).
REGS_OVER_ACC = 40

# The Llama-3-8B and -70B linear layers (N x K) at 1, 16 and 128 tokens: what `gpulab tune gemm_bf16
# ks` scores on.
KS_TUNE_SHAPES = tuple((m, n, k) for m in (1, 16, 128) for n, k in LLAMA_NK)


def tiles(p: Params, s: Shape) -> int:
    """128 rows of Bt by TN tokens each."""
    return cdiv(s["N"], BW) * cdiv(s["M"], p["TN"])


def units(p: Params, s: Shape) -> int:
    """The stream-K units: every tile's k-tiles of 64."""
    return tiles(p, s) * cdiv(s["K"], BK)


def ks_blocks(p: Params, s: Shape) -> int:
    """One wave: BPS blocks on every SM, never more than there are units (each block gets one or more)."""
    return min(units(p, s), sm_count() * p["BPS"])


def ks_smem_bytes(p: Params) -> int:
    """The TMA rungs' ring (tma_rungs.ring_smem_bytes) with Bt's 128 rows where they have A's BM and
    A's TN rows where they have Bt's BN."""
    return ring_smem_bytes({"STAGES": p["STAGES"], "BM": BW, "BN": p["TN"]})


def ks_launch(p: Params, s: Shape) -> Launch:
    return Launch(grid=(ks_blocks(p, s), 1, 1), block=(THREADS, 1, 1), smem_dynamic_bytes=ks_smem_bytes(p))


def ks_constraints(p: Params, s: Shape | None) -> str | None:
    smem = ks_smem_bytes(p)
    if smem > SMEM_BLOCK_OPTIN_MAX:
        return (f"{p['STAGES']} stages of {BW}+{p['TN']} rows x 128 bytes need {smem} B of shared memory, "
                f"over {SMEM_BLOCK_OPTIN_MAX}")
    if p["BPS"] * (smem + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"BPS={p['BPS']} blocks of {smem} B shared memory do not fit in one SM: take fewer STAGES"
    return check_regs(p["TN"] + REGS_OVER_ACC, THREADS, p["BPS"])


def ks_workspace_sizes(p: Params, s: Shape) -> tuple[int, int]:
    """(FP32 elements of the workspace, counters): a first and a last 128 x TN partial per block, one
    counter per tile."""
    return 2 * ks_blocks(p, s) * BW * p["TN"], tiles(p, s)


def ks_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """Bt's tensor map (boxes of 128 rows x 64 k) and A's (TN rows), at the arrays' own row pitch (K,
    or the staged copies'); the workspace, and the counters zeroed once (each tile's last block
    resets its counter, so a launcher may run any number of times)."""
    cp = cupy()
    a, bt = inputs["A"], inputs["Bt"]
    bt_map = bf16_matrix_map(bt.data.ptr, shape["N"], bt.shape[1], box_rows=BW, box_cols=BK)
    a_map = bf16_matrix_map(a.data.ptr, shape["M"], a.shape[1], box_rows=params["TN"], box_cols=BK)
    work, counters = ks_workspace_sizes(params, shape)
    return (by_value(encode(bt_map)), by_value(encode(a_map)), cp.empty(work, dtype=cp.float32),
            cp.zeros(counters, dtype=cp.uint32))


KS = Variant(
    name="ks",
    file="ks_stream_k_swap.cu",
    summary="Bt's rows on the wgmma's M side, the tokens on its N (8-128): stream-K over one balanced wave, "
            "partials added in k order",
    launch=ks_launch,
    access=lambda p, s: ks_access(p, s, ks_blocks(p, s)),  # on the wave ks_launch gives it
    params=(
        Param("TN", (8, 16, 32, 64, 128), 16, "tokens per tile: the wgmma's N"),
        Param("STAGES", (2, 3, 4, 5, 6, 8, 10, 12), 8, "TMA ring slots of 128 + TN rows x 128 bytes"),
        Param("BPS", (1, 2), 1, "blocks per SM: the wave is SMs x BPS blocks"),
    ),
    constraints=ks_constraints,
    min_sm=90,
    min_sm_for="wgmma, TMA",
    arch_specific=True,
    extra_args=ks_extra_args,
    stage=staged_in(one_wave(ks_launch)),
    stage_bytes=pad_k_bytes,
    tune_shapes=KS_TUNE_SHAPES,
    rung=False,
    tile_params=("TN",),
)
