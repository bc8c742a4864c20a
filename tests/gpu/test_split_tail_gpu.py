"""sgemm v13 (whole waves, the last partial wave's tiles split along K) on a real GPU: correct (random
and exact, NaN-poisoned output) at its default and at configs with another wave (RESIDENT=2), fewer
slices and a register bound (S=2, MINB=3) and another tile (64 x 256 x 8), on shapes that reach every plan and path: whole tiles
and a split tail (2048 x 2048 x 520, 4097^3 with a ragged K, so k tile 0 is in slice 0 alone), every
tile split (1024^3, 128 x 128 x 4096), N % 4 != 0 split (1000 x 1531 x 777), the checked path split
(17 x 33 x 1000, 1531 x 3 x 1029), no split (1000 x 3000 x 777, 65 x 129 x 17, 1 x 1 x 1). The same
bits on every launch; the counters left at zero, so a launcher runs any number of times. The plans
assume the card's own SM count (the H200's 132 in the comments of test_sgemm_split_tail.py)."""

from __future__ import annotations

import pytest
from sgemm_checks import assert_correct, assert_same_bits_and_counters_reset, config_id

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM

V13 = SGEMM.variant("v13")
CONFIGS = [(V13, V13.default_params() | c) for c in
           ({}, {"RESIDENT": 2}, {"S": 2, "MINB": 3}, {"BN": 256, "WM": 64, "BK": 8, "RESIDENT": 2})]
SHAPES = [(1, 1, 1), (65, 129, 17), (17, 33, 1000), (128, 128, 4096), (1000, 1531, 777), (1000, 3000, 777),
          (1024, 1024, 1024), (2048, 2048, 520), (4097, 4097, 4097), (1531, 3, 1029)]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_correct(lab, config, shape, exact):
    assert_correct(lab, config, shape, exact)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(128, 128, 4096), (2048, 2048, 520), (1024, 1024, 1024)], ids=str)
@pytest.mark.parametrize("config", CONFIGS[:2], ids=config_id)
def test_same_bits_every_launch_and_counters_left_zero(lab, config, shape):
    assert_same_bits_and_counters_reset(lab, config, shape)
