"""sgemm's GEMV-class kernels (gv: a few rows, gt: a few columns) and split-K across blocks (sx) on a
real GPU: correct on ragged, skinny, vector-like and square shapes (random and exact, NaN-poisoned
output) at their defaults, the best row's fallback configs and configs that reach each code path
(scalar and float4 loads, S = 1 with no workspace, more slices than k tiles); the same bits on every
launch; the split-K counters left at zero, so a launcher runs any number of times."""

from __future__ import annotations

import pytest
from sgemm_checks import assert_correct, assert_same_bits_and_counters_reset, config_id

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.skinny.policy import SX_NARROW
from gpulab.experiments.sgemm.splitk import SX_DECODE

GV, GT, SX = (SGEMM.variant(n) for n in ("gv", "gt", "sx"))


def _configs(variant, *changes):
    return [(variant, variant.default_params() | c) for c in ({}, *changes)]


CONFIGS = (
    _configs(GV, {"BM": 4, "MINB": 2}, {"S": 1}, {"BM": 2, "CT": 16, "KT": 16, "U": 1, "S": 32},
             {"CT": 128, "KT": 2, "U": 8, "S": 4, "MINB": 2})
    + _configs(GT, {"BN": 4, "MINB": 2}, {"BN": 8, "WARPS": 2, "RW": 4, "U": 1}, {"WARPS": 16, "RW": 2, "U": 8, "MINB": 1})
    + _configs(SX, {"S": 6}, {"S": 1}, {"BK": 32, "S": 16, "STAGES": 2},
               {"BM": 128, "BN": 128, "WM": 64, "WN": 64, "MINB": 1, "S": 3})
)
# Ragged everywhere; N % 4 == 0 and != 0 (gv's float4 and scalar paths), K % 4 == 0 and != 0 (gt's),
# M and N smaller than one tile (sx's checked path), K shorter than S k tiles (empty slices).
SHAPES = [(1, 1, 1), (17, 33, 65), (1, 1531, 777), (1, 2048, 2051), (3, 1000, 100), (2, 5, 9000),
          (1531, 3, 1029), (2049, 1, 2052), (2048, 2, 1024), (1025, 63, 2051), (63, 1025, 2051),
          (1000, 1531, 777), (512, 512, 512)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_correct(lab, config, shape, exact):
    assert_correct(lab, config, shape, exact)


@pytest.mark.parametrize("shape", [(1, 4100, 2049), (300, 64, 8191), (2048, 1, 4100)], ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_same_bits_every_launch_and_counters_left_zero(lab, config, shape):
    variant, params = config
    assert_same_bits_and_counters_reset(lab, config, shape, uses_workspace=params.get("S", 1) > 1)


# sx's narrow tiles: for a decode batch (BM 16: one warp tile of 16 rows, no rows of padding at
# M = 16; and 32-row ones) and for a few columns (BN 32: one warp tile of 32 columns, WNITER = 1, the
# mirror). The shapes above, Llama layers at 16 and 7 tokens, N of 31 and 32 at a long K (the
# checked path where N < BN, the fast one where N >= BN) and 33 (a second tile of one column).
NARROW_CONFIGS = [(SX, SX.default_params() | c) for c in (
    SX_DECODE | {"S": 16}, {"BM": 16, "BN": 128, "BK": 32, "WM": 16, "STAGES": 3, "S": 8},
    {"BM": 32, "BN": 128, "BK": 16, "STAGES": 4, "S": 4},
    SX_NARROW | {"S": 8}, SX_NARROW | {"BM": 128, "WM": 64, "MINB": 1, "S": 16},
    SX_NARROW | {"WM": 16, "BK": 32, "STAGES": 4, "S": 4})]
NARROW_SHAPES = SHAPES + [(16, 6144, 4096), (7, 4097, 1000), (2048, 31, 4096), (4096, 32, 4096), (2049, 33, 4093)]


@pytest.mark.parametrize("shape", NARROW_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("config", NARROW_CONFIGS, ids=config_id)
def test_sx_narrow_tiles_correct(lab, config, shape, exact):
    assert_correct(lab, config, shape, exact)


@pytest.mark.parametrize("shape", [(16, 6144, 4096), (9, 4100, 2049), (2048, 31, 4096)], ids=str)
@pytest.mark.parametrize("config", NARROW_CONFIGS, ids=config_id)
def test_sx_narrow_tiles_same_bits_and_counters_left_zero(lab, config, shape):
    assert_same_bits_and_counters_reset(lab, config, shape, uses_workspace=True)
