"""The Hopper rungs of gemm_bf16 (t2 and up) as data: launch geometry, the constraints each states
up front, and the TMA tensor maps their entries take after the experiment's common arguments.

The tensor maps are built per launch configuration from the inputs' device pointers (A M x K and
Bt N x K, both row-major BF16 bits: K-major, which is what wgmma's descriptors read without a
transpose) and the block tile: A's box is 64 x BM, Bt's 64 x BN (64 BF16 = one 128-byte swizzled row).

Ragged rows: ragged M and N need nothing (TMA zero fill on loads, masked stores). TMA describes a
matrix only when its row pitch is a multiple of 16 bytes, so for K not a multiple of 8 the rungs
stage padded copies of A and Bt (gemm_bf16.staging: row pitch K rounded up to 64, i.e. 128 bytes,
zero pad, refilled before every launch inside the timed work) and the tensor maps describe those.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from gpulab.arith import cdiv
from gpulab.errors import GpulabError
from gpulab.experiments.base import Launch, Param, Params, Shape, Staged, Variant
from gpulab.experiments.gemm_common import REGS_PER_SM, REGS_PER_THREAD_MAX, SMEM_BLOCK_OPTIN_MAX
from gpulab.experiments.gemm_bf16.access import t2_access, t3_access, t4_access
from gpulab.experiments.gemm_bf16.edge import t4_canonical, t4_main_dims
from gpulab.experiments.gemm_bf16.staging import pad_k, pad_k_bytes
from gpulab.gpu.clusters import blocks_at_once, resident_clusters
from gpulab.gpu.launch import by_value
from gpulab.gpu.seam import cupy
from gpulab.gpu.tma import (
    ELEMENT_BYTES, F32_BYTES, STRIDE_ALIGN_BYTES, SWIZZLE_128B_BYTES, TENSOR_MAP_BYTES, bf16_matrix_map, encode,
    f32_matrix_map,
)

BK = 64  # one 128-byte swizzled row of BF16
WARPGROUP = 128
# ptxas, sm_90a, t2: 58 / 90 / 154 registers at BN = 64 / 128 / 256, i.e. BN/2 accumulators plus ~26.
T2_REGS_OVER_ACC = 32


# The params t2 and t3 share (t2 adds BM's choices and BN = 64; t3 fixes BM at two consumers).
STAGES = Param("STAGES", (2, 3, 4, 5, 6), 4, "TMA ring slots")
GROUP_M = Param("GROUP_M", (1, 4, 8, 16), 8, "block-rows per rasterization group")
BN_HELP = "block columns: the wgmma's N"
# The warp-specialized rungs (t3, t4): two consumer warpgroups of 64 rows, the wgmma's N up to 256.
TWO_CONSUMERS_BM = Param("BM", (128,), 128, "two consumer warpgroups of 64 rows")
CONSUMER_BN = Param("BN", (128, 256), 256, BN_HELP)
# t4 adds 192: at 1000x3000x776 its 256 x 256 cluster tiles are 48 for 66 clusters, 256 x 192 are 64.
T4_BN = Param("BN", (128, 192, 200, 256), 256, BN_HELP)


def smem_reason(p: Params, smem_bytes=None) -> str | None:
    """Why the ring (plus what else `smem_bytes(p)` counts) cannot fit a block's shared memory."""
    if (smem := (smem_bytes or ring_smem_bytes)(p)) > SMEM_BLOCK_OPTIN_MAX:
        extra = " and the epilogue's buffers" if smem_bytes else ""
        return (f"{p['STAGES']} stages of {p['BM']}+{p['BN']} rows x 128 bytes{extra} need {smem} B of shared memory, "
                f"over {SMEM_BLOCK_OPTIN_MAX}")
    return None


def ring_smem_bytes(p: Params) -> int:
    """The ring of STAGES (A, B) tile pairs, plus 1024 bytes to align it to the swizzle's period."""
    return p["STAGES"] * (p["BM"] + p["BN"]) * BK * ELEMENT_BYTES + 1024


def t2_threads(p: Params) -> int:
    return WARPGROUP * (p["BM"] // 64)


def staged_in(one_round: Callable[[Params, Shape], bool]) -> Callable[..., Staged | None]:
    """A rung's `stage` step: staging.pad_k, with the GEMM launched as the copy's programmatic
    dependent where `one_round(params, shape)` says all of its work starts at once (staging.py: why
    only there)."""
    def stage(inputs: dict, shape: Shape, params: Params, arch: str) -> Staged | None:
        return pad_k(inputs, shape, params, arch, dependent_launch=one_round(params, shape))
    return stage


def one_wave(launch: Callable[[Params, Shape], Launch]) -> Callable[[Params, Shape], bool]:
    """One block per tile: all of them start at once when there are no more blocks than the card runs
    at once (its SMs, or in clusters the SMs that hold whole clusters: gpulab.gpu.clusters)."""
    def all_at_once(p: Params, s: Shape) -> bool:
        planned = launch(p, s)
        return planned.grid[0] <= blocks_at_once(planned.cluster)
    return all_at_once


def t2_launch(p: Params, s: Shape) -> Launch:
    blocks = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    return Launch(grid=(blocks, 1, 1), block=(t2_threads(p), 1, 1), smem_dynamic_bytes=ring_smem_bytes(p))


def t2_constraints(p: Params, s: Shape | None) -> str | None:
    if reason := smem_reason(p):
        return reason
    threads = t2_threads(p)
    cap = min(REGS_PER_THREAD_MAX, REGS_PER_SM // threads // 8 * 8)
    if p["BN"] // 2 + T2_REGS_OVER_ACC > cap:
        return (f"{p['BN'] // 2} accumulators per thread plus addressing need about "
                f"{p['BN'] // 2 + T2_REGS_OVER_ACC} registers, over the {cap} that {threads} threads leave")
    return None


def bt_box_rows(p: Params) -> int:
    """The rows of Bt one TMA copy brings: the whole BN tile, or (t4) each cluster block's share of
    it, multicast to all the blocks of the cluster."""
    return p["BN"] // p.get("CLUSTER", 1)


def tensor_maps(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """The entry's arguments after the experiment's: A's and Bt's tensor maps, by value. The row pitch
    is the arrays' own: K, or staging.padded_k(K) where the rung staged padded copies (Variant.stage);
    the kernel's k loop still runs over the logical K."""
    a, bt = inputs["A"], inputs["Bt"]
    a_map = bf16_matrix_map(a.data.ptr, shape["M"], a.shape[1], box_rows=params["BM"], box_cols=BK)
    b_map = bf16_matrix_map(bt.data.ptr, shape["N"], bt.shape[1], box_rows=bt_box_rows(params), box_cols=BK)
    return by_value(encode(a_map)), by_value(encode(b_map))


T2 = Variant(
    name="t2",
    file="t2_wgmma_tma.cu",
    summary="wgmma m64nBNk16 on TMA-written 128B-swizzled shared tiles, mbarrier ring",
    launch=t2_launch,
    params=(
        Param("BM", (64, 128, 256), 128, "block rows: one warpgroup per 64"),
        Param("BN", (64, 128, 256), 256, BN_HELP),
        STAGES,
        GROUP_M,
    ),
    constraints=t2_constraints,
    min_sm=90,
    min_sm_for="wgmma",
    arch_specific=True,
    extra_args=tensor_maps,
    stage=staged_in(one_wave(t2_launch)),
    stage_bytes=pad_k_bytes,
    access=t2_access,
)


def t3_launch(p: Params, s: Shape) -> Launch:
    """One producer warpgroup and two consumer warpgroups per 128 x BN tile."""
    blocks = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    return Launch(grid=(blocks, 1, 1), block=(3 * WARPGROUP, 1, 1), smem_dynamic_bytes=ring_smem_bytes(p))


def t3_constraints(p: Params, s: Shape | None) -> str | None:
    # Registers are not a constraint: the consumers take 232 each through setmaxnreg (the kernel's
    # header has the budget), enough for the 128 accumulators of BN = 256.
    return smem_reason(p)


T3 = Variant(
    name="t3",
    file="t3_warp_specialized.cu",
    summary="t2 warp-specialized: a TMA producer warpgroup, two wgmma consumers, setmaxnreg",
    launch=t3_launch,
    params=(
        TWO_CONSUMERS_BM,
        CONSUMER_BN,
        STAGES,
        GROUP_M,
    ),
    constraints=t3_constraints,
    min_sm=90,
    min_sm_for="wgmma, setmaxnreg",
    arch_specific=True,
    extra_args=tensor_maps,
    stage=staged_in(one_wave(t3_launch)),
    stage_bytes=pad_k_bytes,
    access=t3_access,
)


# t4's persistent grid: one block per SM (gpulab.gpu.device.sm_count: 132 without a GPU to ask);
# the kernel loops over its tiles, so any grid is correct.
# t4's epilogue with STORE = 1: per consumer warpgroup, two buffers of 64 rows x 32 FP32 (one TMA
# store box, a 128-byte swizzled row each).
C_CHUNK_COLS = SWIZZLE_128B_BYTES // F32_BYTES
C_BUFFER_BYTES = 2 * 2 * 64 * SWIZZLE_128B_BYTES  # 2 consumers x 2 buffers x 8 KiB


def t4_smem_bytes(p: Params) -> int:
    return ring_smem_bytes(p) + (C_BUFFER_BYTES if p["STORE"] else 0)


def t4_tensor_maps(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """t2/t3's maps of A and Bt, then C's for the TMA-store epilogue: FP32 M x N in boxes of 64 rows x
    32 columns; zeros (the kernel stores from registers) when STORE = 0 or N is not a multiple of 4
    (a row pitch TMA cannot take)."""
    m, n = shape["M"], shape["N"]
    if params["STORE"] and (n * F32_BYTES) % STRIDE_ALIGN_BYTES == 0:
        c = by_value(encode(f32_matrix_map(out.data.ptr, m, n, box_rows=64, box_cols=C_CHUNK_COLS)))
    else:
        c = by_value(bytes(TENSOR_MAP_BYTES))
    return (*tensor_maps(inputs, out, shape, params), c)


def t4_cluster_tiles(p: Params, s: Shape) -> int:
    """Output tiles of CLUSTER x 128 rows by BN columns over what the tiles cover: one cluster's unit
    of work."""
    m_main, n_main = t4_main_dims(p, s)
    return cdiv(m_main, p["BM"] * p["CLUSTER"]) * cdiv(n_main, p["BN"])


def t4_launch(p: Params, s: Shape) -> Launch:
    """A persistent grid of whole clusters, one block per SM, as many clusters as the card runs at
    once (gpulab.gpu.clusters: 66 of two on the H200, but 30 of four) and never more than cluster
    tiles (CLUSTER x 128 rows by BN columns): each loops over its share of the tiles."""
    cluster = p["CLUSTER"]
    blocks = min(resident_clusters(cluster), t4_cluster_tiles(p, s)) * cluster
    return Launch(grid=(blocks, 1, 1), block=(3 * WARPGROUP, 1, 1), smem_dynamic_bytes=t4_smem_bytes(p),
                  cluster=cluster)


def t4_one_round(p: Params, s: Shape) -> bool:
    """Every cluster of the launch has at most one tile: all of the work starts at once."""
    return t4_cluster_tiles(p, s) <= resident_clusters(p["CLUSTER"])


def t4_stream_k_tiles(p: Params, s: Shape, clusters: int) -> int:
    """How many cluster tiles at the end of the order SCHEDULE = 1 splits by k-tiles over all the
    clusters (the rest go whole, round by round, as with SCHEDULE = 0); 0: none.

    The last partial round plus one full round: at least `clusters` tiles, so each cluster's share
    of their k-tiles is at least one tile's and no tile is split over more than two clusters (the
    kernel's fixup pairs a cluster with the next one only). None where the tiles fill whole rounds
    (nothing idles), where there are no more tiles than clusters (the launch then has one cluster per
    tile; splitting 64 tiles over 66 clusters at 2048^3 would gain at most 3% and split tiles three
    ways) or where K is a single k-tile (nothing to split)."""
    if not p.get("SCHEDULE"):
        return 0
    rounds, rem = divmod(t4_cluster_tiles(p, s), clusters)
    if cdiv(s["K"], BK) < 2 or rem == 0 or rounds == 0:
        return 0
    return rem + clusters


# The stream-K partial of one consumer warpgroup: 64 rows x BN FP32, one slot per block.
def t4_workspace_sizes(p: Params, s: Shape) -> tuple[int, int]:
    """(FP32 elements of the stream-K workspace, flags): one BM x BN partial and one flag per consumer
    warpgroup for every block of the launch (a cluster's blocks each hand over their own rows), or
    one-element stand-ins where the schedule splits nothing."""
    blocks = t4_launch(p, s).grid[0]
    if not t4_stream_k_tiles(p, s, blocks // p["CLUSTER"]):
        return 1, 1
    return blocks * p["BM"] * p["BN"], blocks * (p["BM"] // 64)


def t4_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """The tensor maps (t4_tensor_maps), then the stream-K workspace, its flags (zeroed here once:
    the kernel clears each flag it consumed, so a launcher may run any number of times, as sgemm's
    split-K counters), the number of tiles the schedule splits, what the tiles cover (t4_main_dims)
    and the row pitch of A and Bt in 16-bit elements (the arrays' own: K, or the staged copies'),
    which the edge's loads step by."""
    cp = cupy()
    work, flags = t4_workspace_sizes(params, shape)
    clusters = t4_launch(params, shape).grid[0] // params["CLUSTER"]
    m_main, n_main = t4_main_dims(params, shape)
    pitch = inputs["A"].shape[1]
    if inputs["Bt"].shape[1] != pitch:
        raise GpulabError(f"t4 reads A and Bt at one row pitch; got {pitch} and {inputs['Bt'].shape[1]} elements")
    return (*t4_tensor_maps(inputs, out, shape, params), cp.empty(work, dtype=cp.float32),
            cp.zeros(flags, dtype=cp.uint32), np.int32(t4_stream_k_tiles(params, shape, clusters)),
            np.int32(m_main), np.int32(n_main), np.int32(pitch))


def t4_constraints(p: Params, s: Shape | None) -> str | None:
    # Stated up front: the ring (and with STORE = 1 the epilogue's 32 KiB) must fit the 227 KiB a
    # block may opt into (BN 256 and 192: 4 stages, BN 128: 6, either way); registers are t3's (producer 40,
    # consumers 232 through setmaxnreg, with EDGE 64 and 216: the 128 accumulators of BN = 256 fit); TMA boxes: Bt's
    # BN / CLUSTER rows, A's 128, C's 64, all within TMA's 256 per side.
    if p.get("PINGPONG") and p["BN"] != 128:
        return "PINGPONG=1 needs BN=128: one consumer warpgroup holds a whole 128 x BN tile's accumulators"
    if p.get("PINGPONG") and p.get("SCHEDULE"):
        return ("SCHEDULE=1 needs PINGPONG=0: a pingpong consumer finds its tile's first k-tile in the ring at "
                "tile x k_tiles, which stream-K segments of unequal length break")
    return smem_reason(p, t4_smem_bytes)


def t4_model(p: Params, s: Shape):
    """t4's access model on the grid t4_launch gives it (the number of SMs decides the schedule)."""
    return t4_access(p, s, t4_launch(p, s).grid[0])


T4 = Variant(
    name="t4",
    file="t4_persistent_cluster.cu",
    summary="t3 persistent over a grouped tile order, 2-block clusters multicasting Bt, wgmma wait depth 1",
    launch=t4_launch,
    stream_k_param="SCHEDULE",
    params=(
        TWO_CONSUMERS_BM,
        T4_BN,
        STAGES,
        Param("GROUP_M", (1, 4, 8, 16), 8, "cluster-rows per rasterization group"),
        Param("CLUSTER", (1, 2, 4), 2, "blocks per cluster along M, sharing Bt by TMA multicast"),
        Param("STORE", (0, 1), 1, "epilogue: 0 from registers, 1 through shared memory and TMA stores"),
        Param("PINGPONG", (0, 1), 0, "consumers: 0 share each tile, 1 alternate whole tiles (BN=128)"),
        Param("SCHEDULE", (0, 1), 0, "tiles: 0 whole, round by round; 1 the last rounds split by k (stream-K)"),
        Param("EDGE", (0, 2), 0, "up to this many rows/columns past whole tiles on the producer's idle warps "
                                 "(0: ragged tiles)"),
    ),
    constraints=t4_constraints,
    min_sm=90,
    min_sm_for="wgmma, setmaxnreg, clusters",
    arch_specific=True,
    extra_args=t4_extra_args,
    stage=staged_in(t4_one_round),
    stage_bytes=pad_k_bytes,
    access=t4_model,
    canonical=t4_canonical,
)
