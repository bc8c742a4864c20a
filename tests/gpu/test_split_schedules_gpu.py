"""sgemm's rungs that split tiles across blocks by schedule, on a real GPU: v12 (stream-K on a
persistent grid) and v13 (whole waves, the last partial wave's tiles split along K). Each correct
(random and exact, NaN-poisoned output) on one set of shapes that reaches every path of both:

- v12 at its default and at configs that reach each schedule: SK_ROUNDS=0 (thin slices of the
  remainder tiles), 99 (all stream-K), MINB=1 (another grid), and a 64 x 256 x 8 tile;
- v13 at its default and with another wave (RESIDENT=2), fewer slices and a register bound (S=2,
  MINB=3), and a 64 x 256 x 8 tile;
- shapes: tiles split over several blocks (1024^3: 128 tiles; 128 x 128 x 4096: 2 tiles of 256 k
  tiles), whole tiles and a split tail (v13 at 2048 x 2048 x 520 and at 4097^3, whose ragged K puts k
  tile 0 in slice 0 alone), K shorter than one block's share (1000 x 3000 x 777, where v13 splits
  nothing), K % BK != 0, N % 4 != 0 (1000 x 1531 x 777, 1531 x 3 x 1029), the checked path (17 x 33 x
  65 and x 1000, 65 x 129 x 17, 1 x 1 x 1), fewer iterations than SM slots (64 x 128 x 16).

The same bits on every launch; the flags (v12) and counters (v13) left at zero, so a launcher runs
any number of times. The plans assume the card's own SM count (tests/test_sgemm_stream_k.py and
tests/test_sgemm_split_tail.py check them at the H200's 132)."""

from __future__ import annotations

import pytest
from sgemm_checks import assert_correct, assert_same_bits_and_counters_reset, config_id

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM

V12, V13 = SGEMM.variant("v12"), SGEMM.variant("v13")
V12_CONFIGS = [(V12, V12.default_params() | c) for c in
               ({}, {"SK_ROUNDS": 0}, {"SK_ROUNDS": 99}, {"MINB": 1}, {"BN": 256, "WM": 64, "BK": 8, "SK_ROUNDS": 99})]
V13_CONFIGS = [(V13, V13.default_params() | c) for c in
               ({}, {"RESIDENT": 2}, {"S": 2, "MINB": 3}, {"BN": 256, "WM": 64, "BK": 8, "RESIDENT": 2})]
SHAPES = [(1, 1, 1), (17, 33, 65), (17, 33, 1000), (64, 128, 16), (65, 129, 17), (128, 128, 4096),
          (1000, 1531, 777), (1000, 3000, 777), (1024, 1024, 1024), (2048, 2048, 520), (4097, 4097, 4097),
          (1531, 3, 1029)]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("config", V12_CONFIGS + V13_CONFIGS, ids=config_id)
def test_correct(lab, config, shape, exact):
    assert_correct(lab, config, shape, exact)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(128, 128, 4096), (1000, 3000, 777), (1024, 1024, 1024), (2048, 2048, 520)],
                         ids=str)
@pytest.mark.parametrize("config", V12_CONFIGS[:3] + V13_CONFIGS[:2], ids=config_id)
def test_same_bits_every_launch_and_flags_or_counters_left_zero(lab, config, shape):
    assert_same_bits_and_counters_reset(lab, config, shape)
