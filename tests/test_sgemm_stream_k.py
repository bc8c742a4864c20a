"""sgemm v12 (stream-K on a persistent grid) on a machine with no GPU: the grid is MINB blocks per SM
(never more than the (tile, k tile) iterations), the workspace one partial tile per block and a flag
per block, the constraints keep every block of the grid resident, and the SM count comes from the one
helper persistent grids share (gpulab.gpu.device.sm_count)."""

from __future__ import annotations

import pytest

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.splitk import launch as splitk_launch
from gpulab.gpu import device

V12 = SGEMM.variant("v12")


def _grid(params, *shape):
    return V12.launch(V12.default_params() | params, SGEMM.shape(*shape)).grid


def test_the_grid_is_minb_blocks_per_sm_or_the_iterations_when_fewer(sms):
    p = V12.default_params()
    assert (p["BM"], p["BN"], p["BK"], p["MINB"]) == (64, 128, 16, 2)
    assert _grid({}, 4096, 4096, 4096) == (264, 1, 1)  # 2048 tiles x 256 k tiles shared by 264
    assert _grid({}, 1024, 1024, 1024) == (264, 1, 1)  # 128 tiles: stream-K fills the card
    assert _grid({"MINB": 3}, 4097, 4097, 4097) == (396, 1, 1)
    assert _grid({}, 1, 1, 1) == (1, 1, 1)  # one iteration: one block
    assert _grid({}, 128, 128, 48) == (6, 1, 1)  # 2 tiles x 3 k tiles
    assert _grid({}, 128, 128, 4096) == (264, 1, 1)  # 2 tiles x 256 k tiles: each tile over ~132 blocks
    sms(114)  # another card: the grid follows its SMs
    assert _grid({}, 4096, 4096, 4096) == (228, 1, 1)
    launch = V12.launch(V12.default_params(), SGEMM.shape(4096, 4096, 4096))
    assert launch.block == (128, 1, 1) and launch.smem_dynamic_bytes == 4 * 2 * (16 * 68 + 16 * 128)


class FakeCupy:
    float32, uint32 = "float32", "uint32"

    def zeros(self, n, dtype):
        return ("zeros", n, dtype)


@pytest.mark.parametrize("shape, params, blocks", [
    ((4096, 4096, 4096), {}, 264),
    ((4097, 4097, 4097), {"MINB": 3}, 396),
    ((17, 33, 65), {}, 5),  # one tile of 5 k tiles
    ((4096, 4096, 4096), {"BN": 256, "WM": 64, "BK": 8}, 264),
])
def test_the_workspace_is_a_partial_tile_and_a_flag_per_block(sms, monkeypatch, shape, params, blocks):
    monkeypatch.setattr(splitk_launch, "cupy", lambda: FakeCupy())
    p = V12.default_params() | params
    s = SGEMM.shape(*shape)
    assert V12.launch(p, s).grid[0] == blocks
    assert splitk_launch.v12_workspace_floats(p, s) == blocks * p["BM"] * p["BN"]
    assert V12.extra_args({}, None, s, p) == (("zeros", blocks * p["BM"] * p["BN"], "float32"),
                                             ("zeros", blocks, "uint32"))


@pytest.mark.parametrize("change, words", [
    ({"BK": 32, "STAGES": 5}, "do not fit"),  # 2 x 113 KiB of shared memory: only one block per SM
    ({"BN": 256, "WM": 64, "BK": 8, "MINB": 3}, "registers"),  # 3 x 128 threads: 168 registers each
    ({"MINB": 3}, "registers"),  # the default tile at 168 registers: NVRTC 13.0 spilled 28 B (H200, 2026-12-01)
    ({"WN": 64, "WNITER": 1}, "32 x WNITER"),
])
def test_constraints_refuse_grids_that_cannot_all_be_resident(change, words):
    reason = V12.constraints(V12.default_params() | change, None)
    assert reason and words in reason, reason


@pytest.mark.parametrize("change", [{}, {"MINB": 3, "BK": 8}, {"MINB": 1}, {"SK_ROUNDS": 99}, {"SK_ROUNDS": 0},
                                    {"BN": 256, "WM": 64, "BK": 8}])
def test_candidate_configs_are_accepted(change):
    assert V12.constraints(V12.default_params() | change, None) is None
    assert V12.constraints(V12.default_params() | change, SGEMM.shape(4097, 4097, 4097)) is None


def test_persistent_grids_share_one_sm_count(monkeypatch):
    from gpulab.experiments.gemm_bf16 import tma_rungs
    from gpulab.gpu import clusters

    # the TMA rungs size their grids by the blocks the card runs at once, which counts the SMs here
    assert splitk_launch.sm_count is device.sm_count and clusters.sm_count is device.sm_count
    assert tma_rungs.blocks_at_once is clusters.blocks_at_once
    monkeypatch.setattr(device, "probe", lambda: (None, "no GPU here"))
    assert device.sm_count() == device.SM_COUNT_WITHOUT_GPU == 132
