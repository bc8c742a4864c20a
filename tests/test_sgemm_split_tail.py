"""sgemm v13 (whole waves, the last partial wave's tiles split along K) on a machine with no GPU: the
plan keeps every tile of the full waves whole and splits only the remainder, into the number of
slices that fills the fewest waves of slice-deep work; the grid, the workspace and the counters
follow the plan; nothing is split where nothing would be gained."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from gpulab.arith import cdiv
from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.splitk import launch as splitk_launch
from gpulab.experiments.sgemm.splitk.launch import split_tail_plan
from gpulab.run.lab import compile_record
from gpulab.report.tables import resources_table
from gpulab.run.args import make_spec

V13 = SGEMM.variant("v13")


def _plan(shape, **params):
    plan = split_tail_plan(V13.default_params() | params, SGEMM.shape(*shape))
    return plan.whole, plan.splits


def test_the_default_is_v11s_tuned_config_planned_for_three_blocks_per_sm():
    p = V13.default_params()
    assert (p["BM"], p["BN"], p["BK"], p["WM"], p["WN"], p["MINB"], p["RESIDENT"], p["S"]) == \
        (64, 128, 16, 32, 64, 1, 3, 8)
    assert V13.constraints(p, SGEMM.shape(4096, 4096, 4096)) is None


def test_resident_is_held_to_what_shared_memory_and_threads_allow():
    p = V13.default_params()
    assert "shared memory" in V13.constraints(p | {"STAGES": 5, "BK": 32, "RESIDENT": 4}, None)
    assert V13.constraints(p | {"RESIDENT": 4}, None) is None  # 4 x 25 KiB, 4 x 128 threads


@pytest.mark.parametrize("shape, plan", [
    ((4096, 4096, 4096), (1980, 5)),  # 2048 tiles: 5 waves of 396, 68 left -> 340 slices, one wave
    ((8192, 8192, 8192), (7920, 7)),  # 8192 tiles: 272 left -> 1904 slices, 5 waves of 1/7
    ((2048, 2048, 2048), (396, 3)),  # 512 tiles: 116 left -> 348 slices
    ((4097, 4097, 4097), (1980, 7)),  # 65 x 33 = 2145 tiles: 165 left
    ((1024, 1024, 1024), (0, 3)),  # 128 tiles, less than a wave: all split
    ((128, 128, 4096), (0, 8)),  # 2 tiles: split as far as S allows
    ((1000, 3000, 777), (384, 1)),  # 384 tiles already fill 97% of a wave: nothing to gain
    ((3840, 4224, 4096), (1980, 1)),  # exactly 5 waves: no tail
    ((65, 129, 17), (4, 1)),  # 2 k tiles: too shallow to split
])
def test_the_plan_splits_only_the_last_partial_wave(sms, shape, plan):
    assert _plan(shape) == plan


def test_the_plan_picks_the_fewest_slice_waves_and_the_smallest_split_of_those(sms):
    wave = 3 * 132
    for tail in range(1, wave):
        whole, splits = _plan((64 * tail, 128, 4096))  # `tail` tiles, all of them the tail
        cost = {k: Fraction(cdiv(tail * k, wave), k) for k in range(1, 9)}
        best = min(cost.values())
        assert cost[splits] == best and all(cost[k] > best for k in range(1, splits))
        assert whole == (0 if splits > 1 else tail)


def test_the_plan_follows_the_card_resident_and_s(sms):
    assert _plan((4096, 4096, 4096), RESIDENT=2) == (1848, 5)  # waves of 264: 200 left, 1000 slices in 4
    assert _plan((4096, 4096, 4096), MINB=3) == (1980, 5)  # the registers' bound is not the plan's wave
    assert _plan((4096, 4096, 4096), S=4) == (1980, 4)
    assert _plan((4096, 4096, 4096), S=1) == (2048, 1)
    sms(114)  # another card: waves of 342, 2048 = 5 x 342 + 338 (99% of a wave)
    assert _plan((4096, 4096, 4096)) == (2048, 1)
    # a slice keeps at least SPLIT_TAIL_MIN_KTILES k tiles: K = 128 is 8 k tiles, 2 slices at most
    sms(132)
    assert _plan((1024, 1024, 128)) == (0, 2)


class FakeCupy:
    float32, uint32 = "float32", "uint32"

    def zeros(self, n, dtype):
        return ("zeros", n, dtype)


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (1024, 1024, 1024), (1000, 3000, 777), (17, 33, 1000)])
def test_the_grid_and_the_workspace_follow_the_plan(sms, monkeypatch, shape):
    monkeypatch.setattr(splitk_launch, "cupy", lambda: FakeCupy())
    p = V13.default_params()
    s = SGEMM.shape(*shape)
    plan = split_tail_plan(p, s)
    whole, splits, tail = plan.whole, plan.splits, plan.tail
    assert plan.tiles == cdiv(s["M"], 64) * cdiv(s["N"], 128) and tail == plan.tiles - whole
    launch = V13.launch(p, s)
    assert launch.grid == (whole + tail * splits, 1, 1) and launch.block == (128, 1, 1)
    work, counters, whole_arg, splits_arg = V13.extra_args({}, None, s, p)
    assert (whole_arg, splits_arg) == (np.int32(whole), np.int32(splits))
    if splits > 1:
        assert work == ("zeros", tail * splits * 64 * 128, "float32") and counters == ("zeros", tail, "uint32")
    else:
        assert tail == 0 and work == ("zeros", 1, "float32") and counters == ("zeros", 1, "uint32")


def test_a_resident_count_the_registers_do_not_allow_is_named():
    """RESIDENT plans the tail for that many blocks per SM; 64 x 64 warp tiles (255 registers, 64 threads)
    fit four, so RESIDENT=3 plans waves the card does not run: the record and the table say so."""
    mismatched = compile_record(make_spec("sgemm", "v13", {"WM": 64, "RESIDENT": 3}, "4096x4096x4096"), "sm_90")
    assert mismatched["theoretical_blocks_per_sm"] == 4
    assert mismatched["plan_note"].startswith("RESIDENT=3, but 4 block(s) fit") and "set RESIDENT=4" in mismatched["plan_note"]
    assert "plan_note" not in compile_record(make_spec("sgemm", "v13", {"WM": 64, "RESIDENT": 4}, "4096x4096x4096"),
                                             "sm_90")
    assert "plan_note" not in compile_record(make_spec("sgemm", "v13", {}, "4096x4096x4096"), "sm_90")
    table = resources_table([mismatched], "t")
    assert any("set RESIDENT=4" in str(cell) for cell in table.columns[-1]._cells)
