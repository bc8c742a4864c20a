"""sgemm v12 (stream-K on a persistent grid) on a real GPU: correct (random and exact, NaN-poisoned
output) on ragged, tiny and square shapes at its default and at configs that reach each schedule:
SK_ROUNDS=0 (thin slices of the remainder tiles), 99 (all stream-K), MINB=1 (another grid);
shapes whose tiles are split over several blocks (1024^3: 128 tiles over 264 blocks; 128 x 128 x 4096:
2 tiles over 264 blocks, each a few k tiles), K shorter than one block's share (1000 x 3000 x 777),
K % BK != 0, N % 4 != 0, matrices smaller than one tile, fewer iterations than SM slots. The same
bits on every launch; the flags left at zero, so a launcher runs any number of times."""

from __future__ import annotations

import pytest
from sgemm_checks import assert_correct, assert_same_bits_and_counters_reset, config_id

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM

V12 = SGEMM.variant("v12")
CONFIGS = [(V12, V12.default_params() | c) for c in
           ({}, {"SK_ROUNDS": 0}, {"SK_ROUNDS": 99}, {"MINB": 1},
            {"BN": 256, "WM": 64, "BK": 8, "SK_ROUNDS": 99})]
SHAPES = [(1, 1, 1), (17, 33, 65), (64, 128, 16), (65, 129, 17), (128, 128, 4096), (1000, 1531, 777),
          (1000, 3000, 777), (1024, 1024, 1024), (2048, 2048, 520), (4097, 4097, 4097), (1531, 3, 1029)]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_correct(lab, config, shape, exact):
    assert_correct(lab, config, shape, exact)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(128, 128, 4096), (1000, 3000, 777), (1024, 1024, 1024)], ids=str)
@pytest.mark.parametrize("config", CONFIGS[:3], ids=config_id)
def test_same_bits_every_launch_and_flags_left_zero(lab, config, shape):
    assert_same_bits_and_counters_reset(lab, config, shape)
