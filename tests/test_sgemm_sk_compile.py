"""sgemm's sk (sliced-K small tiles) on a machine with no GPU: it explains itself, its defaults and
the best row's fallback configs and a fixed sample of the configs its constraints accept compile for
sm_90 with zero spills, the constraints turn away with a reason what cannot run, and its 1D grid
covers every shape."""

from __future__ import annotations

import random
import re

import pytest

from gpulab.arith import cdiv
from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.gemm_common import SMEM_STATIC_MAX
from gpulab.experiments.sgemm.splitk import SK_DEFAULTS, SK_TUNE_SHAPES
from gpulab.gpu.compile import compile_kernel
from gpulab.jobs.tune import feasible, search_space, tune_shapes

SK = SGEMM.variant("sk")


def test_sk_opens_with_its_header_and_uses_every_param():
    text = SGEMM.source(SK).read_text()
    assert text.startswith("// sk ")
    header = text[: text.index("#include")]
    for part in ("Changed from", "Expected effect", "Params:", "Shapes:"):
        assert part in header
    for p in SK.params:
        assert re.search(rf"\b{p.name}\b", text[len(header):]), f"{SK.file} never uses {p.name}"


def _sample(n: int = 24) -> list[dict]:
    ok, _ = feasible(SK, search_space(SK))
    return random.Random(15).sample(ok, n)


CONFIGS = [SK.default_params(), *SK_DEFAULTS.values(), *_sample()]


@pytest.mark.parametrize("params", CONFIGS, ids=lambda p: SK.params_label(p).replace(" ", "-"))
def test_accepted_configs_compile_without_spills(params):
    assert SK.constraints(params, None) is None
    res = compile_kernel(SGEMM.source(SK), SGEMM.entry, params, arch="sm_90").resources
    assert res.spill_stores_bytes == 0 and res.spill_loads_bytes == 0 and res.stack_frame_bytes == 0, res
    assert 0 < res.registers <= 255 and res.smem_static_bytes <= SMEM_STATIC_MAX
    assert 64 <= SK.launch(params, SGEMM.shape(1, 8192, 8192)).threads_per_block <= 1024


@pytest.mark.parametrize("change, words", [
    ({"BK": 8, "KS": 16}, "split evenly"),
    ({"BM": 1, "TM": 1, "BN": 8, "TN": 1, "KS": 2}, "threads per block"),
    ({"BM": 64, "BN": 64, "TM": 1, "TN": 1, "KS": 1}, "threads per block"),
    ({"BM": 16, "TM": 8, "BN": 128, "TN": 1, "BK": 128, "KS": 2}, "48 KiB"),
    ({"BM": 2, "TM": 4}, "whole number"),
])
def test_constraints_give_reasons(change, words):
    reason = SK.constraints(SK.default_params() | change, None)
    assert reason and words in reason


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 8192, 8192), (4096, 64, 4096), (1531, 3, 1029), (17, 33, 65)])
@pytest.mark.parametrize("params", [SK.default_params(), *SK_DEFAULTS.values()], ids=str)
def test_the_grid_covers_every_shape(shape, params):
    s = SGEMM.shape(*shape)
    launch = SK.launch(params, s)
    assert launch.grid == (cdiv(s["M"], params["BM"]) * cdiv(s["N"], params["BN"]), 1, 1)
    assert SK.constraints(params, s) is None


def test_a_grid_past_int32_is_refused():
    gemv = SK_DEFAULTS["one row"]  # 1 x 32 tiles: 2^20 x 2^15 of them
    assert "exceed a grid" in SK.constraints(gemv, SGEMM.shape(1 << 20, 1 << 20, 1))


def test_sk_tunes_on_the_skinny_classes():
    assert [s.values for s in tune_shapes(SGEMM, SK)] == list(SK_TUNE_SHAPES)
    assert [s.values for s in tune_shapes(SGEMM, SGEMM.variant("v9"))] == list(SGEMM.tune_shapes)
    for shape in SK_TUNE_SHAPES:
        assert shape in SGEMM.default_shapes  # the results tables (docs/results/sgemm.md) carry every class sk is tuned on
