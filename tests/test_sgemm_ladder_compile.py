"""The SGEMM ladder above v1 on a machine with no GPU: every rung explains itself, compiles for sm_90
with its defaults and with every config its constraints accept from a representative grid, with
zero spill stores, and the constraints turn away, with a reason, configs that cannot run."""

from __future__ import annotations

import re

import pytest

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.gemm_common import SMEM_BLOCK_OPTIN_MAX, SMEM_STATIC_MAX
from gpulab.gpu.compile import _headers, compile_kernel, included_headers

LADDER = [v for v in SGEMM.variants if re.fullmatch(r"v\d+", v.name) and int(v.name[1:]) >= 2]
# Fixed in the representative grid: it changes no resource, only the order blocks run in.
HELD = {"GROUP_M"}


def representative_grid(variant) -> list[dict]:
    """The defaults, then each param moved to each of its other choices, one at a time."""
    base = variant.default_params()
    grid = [base]
    for p in variant.params:
        if p.name in HELD:
            continue
        grid += [base | {p.name: c} for c in p.choices if c != base[p.name]]
    return grid


def _cases():
    for v in LADDER:
        for params in representative_grid(v):
            yield pytest.param(v, params, id=f"{v.name}-{v.params_label(params).replace(' ', '-')}")


def test_the_ladder_is_numbered_after_v1():
    # The rungs are v0, v1, ... in order; side variants for other shape classes (sk) are named apart.
    names = [v.name for v in SGEMM.variants if re.fullmatch(r"v\d+", v.name)]
    assert names[:2] == ["v0", "v1"]
    assert names[2:] == [f"v{i}" for i in range(2, len(names))]
    assert len(LADDER) >= 8  # 1D, 2D, float4, conflict-free, warp tiles, write-back, 2 pipelines


@pytest.mark.parametrize("variant", LADDER, ids=lambda v: v.name)
def test_every_rung_opens_with_its_header(variant):
    text = SGEMM.source(variant).read_text()
    assert text.startswith(f"// {variant.name} ")
    header = text[: text.index("#include")]
    for part in ("Changed from", "Expected effect", "Params:", "Shapes:"):
        assert part in header, f"{variant.file}: header lacks '{part}'"
    body = text[len(header):] + "".join(h.read_text() for h in included_headers(SGEMM.source(variant)))
    # every param the registry declares is used by the kernel or its headers, or (a host-side plan's
    # param: v13's RESIDENT and S) changes the launch at some default shape
    for p in variant.params:
        if not re.search(rf"\b{p.name}\b", body):
            assert _changes_the_launch(variant, p), f"{variant.file} never uses {p.name}, nor does its launch"


def _changes_the_launch(variant, param) -> bool:
    base = variant.default_params()
    for value in param.choices:
        other = base | {param.name: value}
        if variant.constraints(other, None):
            continue
        for dims in SGEMM.default_shapes:
            shape = SGEMM.shape(*dims)
            if variant.launch(other, shape) != variant.launch(base, shape):
                return True
    return False


@pytest.mark.parametrize("variant", LADDER, ids=lambda v: v.name)
def test_defaults_are_accepted(variant):
    assert variant.constraints(variant.default_params(), None) is None
    for shape in SGEMM.test_shapes + ((4097, 4097, 4097),):
        assert variant.constraints(variant.default_params(), SGEMM.shape(*shape)) is None


@pytest.mark.parametrize("variant, params", list(_cases()))
def test_accepted_configs_compile_for_sm90_without_spills(variant, params):
    reason = variant.constraints(params, None)
    if reason:
        assert isinstance(reason, str) and len(reason) > 10
        pytest.skip(f"rejected: {reason}")
    res = compile_kernel(SGEMM.source(variant), SGEMM.entry, params, arch=variant.compile_arch("sm_90")).resources
    assert res.spill_stores_bytes == 0 and res.spill_loads_bytes == 0, res
    assert res.stack_frame_bytes == 0, res  # no array fell to local memory
    assert 0 < res.registers <= 255
    assert res.smem_static_bytes <= SMEM_STATIC_MAX
    launch = variant.launch(params, SGEMM.shape(4096, 4096, 4096))
    assert launch.threads_per_block <= 1024
    assert launch.smem_dynamic_bytes + res.smem_static_bytes <= SMEM_BLOCK_OPTIN_MAX


# v12 launches a persistent grid (MINB x SMs blocks: tests/test_sgemm_stream_k.py), v13 a block a
# tile or a slice of one (tests/test_sgemm_split_tail.py) and v14 gemm_bf16's t4, persistent
# (tests/test_wgmma_rungs.py); the others a block a tile.
@pytest.mark.parametrize("variant", [v for v in LADDER if v.name not in ("v12", "v13", "v14")], ids=lambda v: v.name)
def test_the_grid_covers_every_shape(variant):
    params = variant.default_params()
    bm, bn = params["BM"], params["BN"]
    for shape in [(1, 1, 1), (17, 33, 65), (1000, 1531, 777), (4097, 4097, 4097), (1, 5000, 3)]:
        launch = variant.launch(params, SGEMM.shape(*shape))
        blocks = launch.grid[0] * launch.grid[1] * launch.grid[2]
        m, n, _ = shape
        assert blocks == -(-m // bm) * -(-n // bn)
        assert launch.block[0] == launch.threads_per_block  # 1D blocks on every rung above v1


def test_representative_grids_reject_something_each():
    """The grids reach past what fits, so each rung's constraints are exercised."""
    for v in LADDER[4:]:  # the warp-tiled rungs; v2-v5's grids can fit whole
        reasons = [v.constraints(p, None) for p in representative_grid(v)]
        assert any(reasons), f"{v.name}: nothing in its grid is rejected"


@pytest.mark.parametrize(
    "name, change, words",
    [
        ("v2", dict(BM=128, BN=128, TM=4), "threads"),  # 4096 threads per block
        ("v3", dict(TM=16, TN=16), "registers"),  # 256 accumulators per thread
        ("v3", dict(BM=256, BN=256, BK=32), "shared memory"),  # 64 KiB of static tiles
        ("v4", dict(BM=64, BN=64, TM=4, TN=4), "float4"),  # 256 threads, 128 float4s of A
        ("v5", dict(BK=32, BM=256, BN=256), "shared memory"),
        ("v6", dict(WN=64, WNITER=1), "WNITER"),
        ("v6", dict(WM=128), "registers"),  # 32 x 8 outputs per thread
        ("v7", dict(BM=64, WM=128), "warp tiles (WM=64 fits its height)"),
        ("sx", dict(BN=32), "warp tiles (WN=32 WNITER=1 fits its width)"),  # the 32-wide tiles' warps
        ("v8", dict(BK=32), "shared memory"),  # two 32-deep stages: 66 KiB static
        ("v8", dict(MINB=4), "registers"),
        ("v9", dict(BM=128, BK=32, BN=256, STAGES=5, MINB=1), "227 KiB"),
        ("v9", dict(BK=32, STAGES=5), "do not fit"),  # 2 blocks x 113 KiB per SM
        ("v9", dict(BM=128, MINB=4), "registers"),  # 128 threads x 4 blocks: 128 each
        ("v9", dict(BM=64, BN=256, WM=16, WN=32, WNITER=1), "rows a pass"),  # 1024 threads, BM=64
        ("v10", dict(BK=16), "registers"),  # 16 x 8 per thread, two fragment sets, 24 copies: 258
        ("v10", dict(BM=128, BN=128, MINB=4), "registers"),  # 128 threads x 4 blocks: 128 each
        ("v10", dict(BK=32, STAGES=5, MINB=1, BM=128, BN=256), "227 KiB"),
        ("v12", dict(BK=32, STAGES=5), "do not fit"),  # MINB=2 blocks x 113 KiB: not all resident
        ("v12", dict(BN=256, WM=64, BK=8, MINB=3), "registers"),  # 128 threads x 3 blocks: 168 each
    ],
)
def test_constraints_reject_configs_that_cannot_run(name, change, words):
    variant = SGEMM.variant(name)
    params = variant.default_params() | change
    reason = variant.constraints(params, None)
    assert reason, f"{name} {params} should be rejected"
    assert words in reason, reason


# -- the header of device primitives the rungs share ------------------------------------------------
LADDER_HEADER = SGEMM.directory / "ladder.cuh"


def test_the_ladder_header_is_in_the_compile_cache_key():
    """An edit of the header must compile every rung that includes it again."""
    assert _headers()["sgemm/ladder.cuh"] == LADDER_HEADER.read_text()


def test_each_primitive_names_the_rung_that_introduced_it_and_only_later_rungs_take_it():
    """Each primitive's comment opens with the rung that wrote it out; rungs from the next one on
    may take it from the header, so no rung calls a primitive of its own or a later rung."""
    text = LADDER_HEADER.read_text()
    assert all(len(line) <= 100 for line in text.splitlines())
    introduced = {}
    for m in re.finditer(r"^// (v\d+): .*?\n(?:(?://.*|#.*)\n)*(?:template <[^>]*>\n)?"
                         r"(?:__device__ __forceinline__ \w+ |#define )(\w+)", text, re.M):
        introduced[m.group(2)] = int(m.group(1)[1:])
    assert {"load4_guarded", "load_tiles", "warp_tile_mma", "write_back"} <= set(introduced)
    users = [v for v in LADDER if '#include "sgemm/ladder.cuh"' in SGEMM.source(v).read_text()]
    assert [v.name for v in users] == ["v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13"]
    for v in users:
        body = SGEMM.source(v).read_text()
        for name, rung in introduced.items():
            if re.search(rf"\b{name}\b\s*[<(]", body):
                assert int(v.name[1:]) > rung, f"{v.file} calls {name}, which v{rung} introduces"
