"""kc, gemm_bf16's split-K across a thread-block cluster (kc_split_k_cluster.cu), as data: its launch,
the constraints it states up front, and its arguments (t3's tensor maps, the staged copies of A and
Bt where K is not a multiple of 8, as the TMA rungs).

For shapes whose tiles of C are fewer than the card's SMs (M = 128 tokens at N = 4096-10240, 1024 x
1024, ragged products such as 257 x 129 x 8191): SPLIT blocks of a cluster each take a slice of K of
one tile and add their partials through distributed shared memory, in slice order. The kernel's
header has the schedule and its cost.
"""

from __future__ import annotations

from gpulab.arith import cdiv
from gpulab.experiments.base import Launch, Param, Params, Shape, Variant
from gpulab.experiments.gemm_bf16.access_small import kc_access
from gpulab.experiments.gemm_bf16.staging import pad_k_bytes
from gpulab.experiments.gemm_bf16.tma_rungs import (
    BK, GROUP_M, TWO_CONSUMERS_BM, WARPGROUP, one_wave, ring_smem_bytes, smem_reason, staged_in, tensor_maps,
)
from gpulab.gpu.tma import ELEMENT_BYTES, F32_BYTES

# The largest cluster every sm_90 card launches without opting in to a non-portable size.
PORTABLE_CLUSTER_MAX = 8

# The few-tile shapes kc is for: Llama-3-8B's and -70B's linear layers (N x K) at 128 tokens, the
# 1024 x 1024 x 4096 product and the ragged 257 x 129 x 8191, where t4's tiles leave most SMs idle.
KC_TUNE_SHAPES = ((128, 6144, 4096), (128, 4096, 4096), (128, 4096, 14336), (128, 10240, 8192),
                  (128, 8192, 8192), (128, 8192, 28672), (1024, 1024, 4096), (257, 129, 8191))


def kc_tiles(p: Params, s: Shape) -> int:
    return cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])


def kc_launch(p: Params, s: Shape) -> Launch:
    """One cluster of SPLIT blocks per 128 x BN tile: one producer and two consumer warpgroups each."""
    return Launch(grid=(kc_tiles(p, s) * p["SPLIT"], 1, 1), block=(3 * WARPGROUP, 1, 1),
                  smem_dynamic_bytes=ring_smem_bytes(p), cluster=p["SPLIT"])


def partial_bytes(p: Params) -> int:
    """A block's partial tile, BM x BN FP32, written over its ring where SPLIT > 1."""
    return p["BM"] * p["BN"] * F32_BYTES


def kc_constraints(p: Params, s: Shape | None) -> str | None:
    # Registers are t3's (consumers 232 through setmaxnreg: the 128 accumulators of BN = 256 fit).
    if reason := smem_reason(p):
        return reason
    ring = p["STAGES"] * (p["BM"] + p["BN"]) * BK * ELEMENT_BYTES
    if p["SPLIT"] > 1 and ring < partial_bytes(p):
        return (f"SPLIT={p['SPLIT']}: the {p['BM']} x {p['BN']} FP32 partial ({partial_bytes(p)} B) goes over the "
                f"ring, and {p['STAGES']} stages hold {ring} B: take more STAGES")
    return None


KC = Variant(
    name="kc",
    file="kc_split_k_cluster.cu",
    summary="t3 split over K across a cluster of SPLIT blocks, partials added in slice order through "
            "distributed shared memory",
    launch=kc_launch,
    params=(
        TWO_CONSUMERS_BM,
        # 128 x 2: the best of the first card run at every shape it ran (H200, 2026-12-04: 128 x 6144 x
        # 4096 0.827x cuBLAS against 0.755x at 256 x 3, 128 x 8192 x 28672 0.994x against 0.949x,
        # 1024 x 1024 x 4096 0.920x against 0.791x; notebook/device/device_call1.sh)
        Param("BN", (64, 96, 128, 192, 256), 128, "block columns: the wgmma's N"),
        Param("STAGES", (2, 3, 4, 5, 6, 7, 8), 4, "TMA ring slots (with SPLIT > 1 also the partial's room)"),
        Param("SPLIT", tuple(range(1, PORTABLE_CLUSTER_MAX + 1)), 2,
              "blocks per cluster, each a slice of K of one tile"),
        GROUP_M,
    ),
    constraints=kc_constraints,
    min_sm=90,
    min_sm_for="wgmma, setmaxnreg, clusters",
    arch_specific=True,
    extra_args=tensor_maps,
    stage=staged_in(one_wave(kc_launch)),
    stage_bytes=pad_k_bytes,
    access=kc_access,
    split_param="SPLIT",
    tune_shapes=KC_TUNE_SHAPES,
    rung=False,
)
