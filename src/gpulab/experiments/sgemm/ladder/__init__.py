"""The SGEMM ladder, v0 to v11: from one thread per element of C to a cp.async ring of warp-tiled
float4 fragments, one idea a rung (each .cu file's header says what changed and why), and the tile
params the rungs share (splitk's kernels on v9's ring and v11's loop take them too)."""

from __future__ import annotations

from gpulab.experiments.base import Param, Variant
from gpulab.experiments.sgemm.ladder.access import (
    v0_access, v1_access, v2_access, v3_access, v4_access, v5_access, v6_access, v7_access, v8_access,
)
from gpulab.experiments.sgemm.ladder.launch import (
    grid_2d_launch, v0_launch, v1_launch, v2_constraints, v3_constraints, v45_constraints, v67_constraints,
    v8_constraints, v9_constraints, v9_launch, v10_constraints,
)
from gpulab.experiments.sgemm.ladder.ring_access import v9_access, v10_access, v11_access


def tile_params(bm=128, bn=128, bk=8, bm_choices=(64, 128, 256), bn_choices=(64, 128, 256)) -> tuple[Param, ...]:
    return (
        Param("BM", bm_choices, bm, "block tile rows (of C and A)"),
        Param("BN", bn_choices, bn, "block tile columns (of C and B)"),
        Param("BK", (8, 16, 32), bk, "k depth of one shared-memory tile"),
    )


def warp_params(wm=32, wn=64, wniter=2) -> tuple[Param, ...]:
    return (
        Param("WM", (16, 32, 64, 128), wm, "warp tile rows: WM/16 sub-tiles of 4 lanes x TM"),
        Param("WN", (32, 64, 128), wn, "warp tile columns: WNITER sub-tiles of 8 lanes x TN"),
        Param("WNITER", (1, 2, 4), wniter, "sub-tiles along N per warp tile (WN = 32*WNITER)"),
        Param("TM", (4,), 4, "rows of a thread's float4 fragment (fixed: one LDS.128)"),
        Param("TN", (4,), 4, "columns of a thread's float4 fragment (fixed: one LDS.128)"),
    )


def _ring_params(stages: Param) -> tuple[Param, ...]:
    """v9 and the rungs on its cp.async ring: a 64 x 128 block tile of two 64 x 64 warp tiles."""
    return tile_params(bm=64) + warp_params(wm=64, wn=64, wniter=2) + (
        stages,
        Param("MINB", (1, 2, 3, 4), 2, "blocks per SM the registers are sized for"),
        Param("GROUP_M", (1, 4, 8, 16), 8, "block-rows per rasterization group (1: row order)"),
    )


def v11_tuned_params(minb: Param, *extra: Param) -> tuple[Param, ...]:
    """The params of the rungs that keep v11's loop and change its schedule (v12, v13), at v11's
    config tuned on the H200 (64 x 128 x 16, four 32 x 64 warps, STAGES=2, GROUP_M=8): `minb` (each
    says what MINB also sizes) and their own after."""
    return tile_params(bm=64, bn=128, bk=16) + warp_params(wm=32, wn=64, wniter=2) + (
        Param("STAGES", (2, 3, 4, 5), 2, "tiles in the cp.async ring"),
        minb,
        Param("GROUP_M", (1, 4, 8, 16), 8, "block-rows per rasterization group of the tile order (1: row order)"),
        *extra,
    )


VARIANTS = (
    Variant(
        name="v0",
        file="v0_naive.cu",
        summary="naive: one thread per element of C",
        launch=v0_launch,
        params=(Param("BLOCK", (16, 32), 16, "block side; the block is BLOCK x BLOCK threads"),),
        access=v0_access,
    ),
    Variant(
        name="v1",
        file="v1_smem_tiling.cu",
        summary="shared-memory tiling: TILE x TILE tiles of A and B staged in shared memory",
        launch=v1_launch,
        params=(Param("TILE", (8, 16, 32), 32, "tile side; the block is TILE x TILE threads"),),
        sweep={"TILE": (8, 16, 32)},
        access=v1_access,
        k_step_param="TILE",
    ),
    Variant(
        name="v2",
        file="v2_1d_blocktiling.cu",
        summary="1D register blocking: each thread computes TM outputs of a column",
        launch=grid_2d_launch,
        access=v2_access,
        k_step_param="BK",
        params=(
            Param("BM", (32, 64, 128), 64, "block tile rows"),
            Param("BN", (32, 64, 128), 64, "block tile columns"),
            Param("BK", (4, 8, 16), 8, "k depth of one shared-memory tile"),
            Param("TM", (4, 8, 16), 8, "outputs per thread, along M"),
        ),
        constraints=v2_constraints,
    ),
    Variant(
        name="v3",
        file="v3_2d_blocktiling.cu",
        summary="2D register blocking: a TM x TN outer product per thread",
        launch=grid_2d_launch,
        access=v3_access,
        k_step_param="BK",
        params=tile_params() + (
            Param("TM", (4, 8, 16), 8, "thread tile rows"),
            Param("TN", (4, 8, 16), 8, "thread tile columns"),
        ),
        constraints=v3_constraints,
    ),
    Variant(
        name="v4",
        file="v4_vectorized.cu",
        summary="float4 global loads, A transposed in shared memory, LDS.128 fragments",
        launch=grid_2d_launch,
        access=v4_access,
        k_step_param="BK",
        params=tile_params() + (
            Param("TM", (4, 8, 16), 8, "thread tile rows (float4 fragments)"),
            Param("TN", (4, 8, 16), 8, "thread tile columns (float4 fragments)"),
        ),
        constraints=v45_constraints,
    ),
    Variant(
        name="v5",
        file="v5_conflict_free.cu",
        summary="bank-conflict-free shared memory: padded A tile, interleaved fragments",
        launch=grid_2d_launch,
        access=v5_access,
        k_step_param="BK",
        params=tile_params() + (
            Param("TM", (4, 8, 16), 8, "thread tile rows (TM/4 float4 fragments, 4*BM/TM apart)"),
            Param("TN", (4, 8, 16), 8, "thread tile columns (TN/4 float4 fragments, 4*BN/TN apart)"),
        ),
        constraints=v45_constraints,
    ),
    Variant(
        name="v6",
        file="v6_warptiling.cu",
        summary="warp tiling with the zig-zag lane map: LDS.128 merged to 2 wavefronts",
        launch=grid_2d_launch,
        access=v6_access,
        k_step_param="BK",
        params=tile_params() + warp_params(wm=64, wn=64, wniter=2),
        constraints=v67_constraints,
    ),
    Variant(
        name="v7",
        file="v7_coalesced_store.cu",
        summary="C written back through a per-warp shared buffer, whole rows per instruction",
        launch=grid_2d_launch,
        access=v7_access,
        k_step_param="BK",
        params=tile_params() + warp_params(wm=64, wn=64, wniter=2),
        constraints=v67_constraints,
    ),
    Variant(
        name="v8",
        file="v8_double_buffer.cu",
        summary="double buffering: next tile's loads in registers while this one computes",
        launch=grid_2d_launch,
        access=v8_access,
        params=tile_params() + warp_params(wm=64, wn=64, wniter=2) + (
            Param("MINB", (1, 2, 3, 4), 2, "blocks per SM the registers are sized for"),
        ),
        constraints=v8_constraints,
    ),
    Variant(
        name="v9",
        file="v9_cp_async.cu",
        summary="cp.async ring of STAGES tiles in dynamic shared memory, grouped rasterization",
        min_sm=80, min_sm_for="cp.async",
        launch=v9_launch,
        access=v9_access,
        params=_ring_params(Param("STAGES", (2, 3, 4, 5), 3, "tiles in the cp.async ring")),
        constraints=v9_constraints,
    ),
    Variant(
        name="v10",
        file="v10_fragment_pipeline.cu",
        summary="register-fragment double buffering: next k-step's LDS.128 (and the next tile's) under the FFMAs",
        min_sm=80, min_sm_for="cp.async",
        launch=v9_launch,
        access=v10_access,
        params=_ring_params(Param("STAGES", (2, 3, 4, 5), 2, "tiles in the cp.async ring (all in flight in the prologue)")),
        constraints=v10_constraints,
    ),
    Variant(
        name="v11",
        file="v11_register_banks.cu",
        summary="serpentine column-order outer product at a 255-register budget: FFMA reads in distinct register banks",
        min_sm=80, min_sm_for="cp.async",
        launch=v9_launch,
        access=v11_access,
        # 64 x 256 x 8, four 64 x 64 warps, MINB=1: the config whose SASS (NVRTC 13.0) has the fewest
        # FFMA bank collisions (v11's header); v9's ring, copies and registers otherwise.
        params=tile_params(bm=64, bn=256) + warp_params(wm=64, wn=64, wniter=2) + (
            Param("STAGES", (2, 3, 4, 5), 2, "tiles in the cp.async ring"),
            Param("MINB", (1, 2, 3, 4), 1, "blocks per SM the registers are sized for (1: 255 per thread)"),
            Param("GROUP_M", (1, 4, 8, 16), 8, "block-rows per rasterization group (1: row order)"),
        ),
        constraints=v9_constraints,
    ),
)
