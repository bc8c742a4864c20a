"""sgemm's GEMV-class kernels (gv, gt) and split-K across blocks (sx) on a machine with no GPU: each
explains itself in its header, its defaults, the best row's fallback configs and a fixed sample of
what its constraints accept compile for sm_90 with zero spills, the constraints turn away with a
reason what cannot run, the grids cover every shape, the split-K workspace is sized from the launch,
and the best row's defaults send each shape class to the kernel made for it."""

from __future__ import annotations

import random
import re

import pytest

from gpulab.arith import cdiv
from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.gemm_common import SMEM_STATIC_MAX
from gpulab.experiments.sgemm import split_workspace
from gpulab.experiments.sgemm.skinny.policy import SKINNY_SHAPES, SX_NARROW
from gpulab.experiments.sgemm.splitk import SX_DECODE, SX_TUNE_SHAPES
from gpulab.gpu.compile import compile_kernel, included_headers
from gpulab.jobs.tune import feasible, search_space, tune_shapes

NEW = ("gv", "gt", "sx")
SHAPES = [(1, 1, 1), (1, 8192, 8192), (8192, 1, 8192), (4096, 64, 4096), (64, 4096, 4096), (512, 512, 512),
          (1531, 3, 1029), (17, 33, 65), (2048, 31, 4096)]


@pytest.mark.parametrize("name", NEW)
def test_opens_with_its_header_and_uses_every_param(name):
    variant = SGEMM.variant(name)
    text = SGEMM.source(variant).read_text()
    assert text.startswith(f"// {name} ")
    header = text[: text.index("#include")]
    for part in ("Changed from", "Expected effect", "Params:", "Shapes:"):
        assert part in header
    body = text[len(header):] + "".join(h.read_text() for h in included_headers(SGEMM.source(variant)))
    for p in variant.params:  # every param the registry declares is used by the kernel or its headers
        assert re.search(rf"\b{p.name}\b", body), f"{variant.file} never uses {p.name}"


def _best_defaults() -> list[tuple[str, dict]]:
    return [SGEMM.best_default(SGEMM.shape(*s))[:2] for s in SHAPES]


def _sample(name: str, n: int) -> list[tuple[str, dict]]:
    variant = SGEMM.variant(name)
    ok, _ = feasible(variant, search_space(variant))
    return [(name, p) for p in random.Random(15).sample(ok, n)]


CONFIGS = ([(n, SGEMM.variant(n).default_params()) for n in NEW] + _best_defaults()
           + _sample("gv", 10) + _sample("gt", 8) + _sample("sx", 6)
           + [("sx", SGEMM.variant("sx").default_params() | SX_DECODE | {"S": 16}),  # a decode batch's tiles
              ("sx", SGEMM.variant("sx").default_params() | {"BM": 16, "BN": 128, "BK": 32, "WM": 16, "STAGES": 3}),
              ("sx", SGEMM.variant("sx").default_params() | {"BM": 32, "BN": 128, "BK": 16, "STAGES": 4}),
              # and a few columns' (SX_NARROW: one 32-wide warp tile across)
              ("sx", SGEMM.variant("sx").default_params() | SX_NARROW | {"BM": 128, "WM": 64, "MINB": 1}),
              ("sx", SGEMM.variant("sx").default_params() | SX_NARROW | {"WM": 16, "BK": 32})])


@pytest.mark.parametrize("name, params", CONFIGS, ids=lambda x: x if isinstance(x, str) else "-".join(map(str, x.values())))
def test_accepted_configs_compile_without_spills(name, params):
    variant = SGEMM.variant(name)
    assert variant.constraints(params, None) is None
    res = compile_kernel(SGEMM.source(variant), SGEMM.entry, params, arch="sm_90").resources
    assert res.spill_stores_bytes == 0 and res.spill_loads_bytes == 0 and res.stack_frame_bytes == 0, res
    assert 0 < res.registers <= 255 and res.smem_static_bytes <= SMEM_STATIC_MAX


@pytest.mark.parametrize("name, change, words", [
    ("gv", {"CT": 16, "KT": 2}, "threads per block"),
    ("gv", {"BM": 4, "CT": 128, "KT": 8}, "48 KiB"),
    ("gv", {"BM": 4, "CT": 128, "KT": 4, "U": 1, "MINB": 2}, "would spill"),
    ("gt", {"WARPS": 16, "U": 8, "BN": 8}, "would spill"),
    ("sx", {"WN": 64, "WNITER": 1}, "32 x WNITER"),
    ("sx", {"BM": 256, "BN": 256, "WM": 128, "WN": 128, "WNITER": 4}, "registers"),
])
def test_constraints_give_reasons(name, change, words):
    variant = SGEMM.variant(name)
    reason = variant.constraints(variant.default_params() | change, None)
    assert reason and words in reason


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_the_grids_cover_every_shape(shape):
    s = SGEMM.shape(*shape)
    gv = SGEMM.variant("gv").default_params()
    assert SGEMM.variant("gv").launch(gv, s).grid == (cdiv(s["N"], 4 * gv["CT"]), gv["S"], cdiv(s["M"], gv["BM"]))
    gt = SGEMM.variant("gt").default_params()
    assert SGEMM.variant("gt").launch(gt, s).grid == (cdiv(s["M"], gt["WARPS"] * gt["RW"]), cdiv(s["N"], gt["BN"]), 1)
    sx = SGEMM.variant("sx").default_params()
    assert SGEMM.variant("sx").launch(sx, s).grid == (cdiv(s["M"], sx["BM"]) * cdiv(s["N"], sx["BN"]), sx["S"], 1)


def test_grids_past_a_dimension_are_refused():
    gv, gt = SGEMM.variant("gv"), SGEMM.variant("gt")
    assert "65535" in gv.constraints(gv.default_params(), SGEMM.shape(1 << 20, 8, 8))
    assert "65535" in gt.constraints(gt.default_params(), SGEMM.shape(8, 1 << 20, 8))


class FakeCupy:
    """Records what the split-K buffers are allocated as (no GPU here)."""

    float32, uint32 = "float32", "uint32"

    def zeros(self, n, dtype):
        return ("zeros", n, dtype)


@pytest.mark.parametrize("name, shape, params, expect", [
    ("gv", (1, 8192, 8192), {}, (("zeros", 16 * 8192, "float32"), ("zeros", 32, "uint32"))),
    ("gv", (3, 1000, 100), {"BM": 2, "S": 4}, (("zeros", 4 * 3000, "float32"), ("zeros", 4 * 2, "uint32"))),
    ("gv", (1, 8192, 8192), {"S": 1}, (("zeros", 1, "float32"), ("zeros", 1, "uint32"))),
    ("sx", (512, 512, 512), {"S": 4}, (("zeros", 4 * 512 * 512, "float32"), ("zeros", 8 * 8, "uint32"))),
])
def test_the_workspace_and_counters_follow_the_launch(monkeypatch, name, shape, params, expect):
    monkeypatch.setattr(split_workspace, "cupy", FakeCupy)
    variant = SGEMM.variant(name)
    assert variant.extra_args({}, None, SGEMM.shape(*shape), variant.default_params() | params) == expect


@pytest.mark.parametrize("shape, name", [
    ((1, 8192, 8192), "gv"), ((3, 1000, 100), "gv"), ((8192, 1, 8192), "gt"), ((1531, 3, 1029), "gt"),
    ((4096, 64, 4096), "sx"), ((64, 4096, 4096), "sx"), ((512, 512, 512), "sx"), ((1024, 1024, 1024), "v9"),
    ((4096, 4096, 4096), "v9"), ((2048, 31, 4096), "sx"), ((8191, 33, 8193), "sx"),
])
def test_best_defaults_send_each_class_to_its_kernel(shape, name):
    s = SGEMM.shape(*shape)
    chosen, params, why = SGEMM.best_default(s)
    assert chosen == name and "nothing tuned near" in why
    assert SGEMM.variant(chosen).constraints(params, s) is None
    if name == "gv":
        assert params["BM"] >= shape[0]
    if name == "gt":
        assert params["BN"] >= shape[1]
    if name == "sx":  # about two blocks per SM, at least 8 k tiles per slice
        # no column of padding past 32 where the shape has 32 or fewer (the 64-wide default computes
        # 33 of 64 at N = 31); 64-wide tiles above
        assert params["BN"] == (32 if shape[1] <= 32 < shape[0] else 64)
        tiles = cdiv(shape[0], params["BM"]) * cdiv(shape[1], params["BN"])
        assert tiles * params["S"] >= 264 and cdiv(shape[2], params["BK"]) // params["S"] >= 8


def test_new_variants_tune_on_their_classes():
    assert [s.values for s in tune_shapes(SGEMM, SGEMM.variant("gv"))] == [(1, 8192, 8192)]
    assert [s.values for s in tune_shapes(SGEMM, SGEMM.variant("gt"))] == [(8192, 1, 8192)]
    assert [s.values for s in tune_shapes(SGEMM, SGEMM.variant("sx"))] == list(SX_TUNE_SHAPES)
    for shape in (*SX_TUNE_SHAPES, (1, 8192, 8192), (8192, 1, 8192)):
        assert shape in SGEMM.default_shapes and (shape in SKINNY_SHAPES or shape == (512, 512, 512))
