"""gemm_bf16 on a machine with no GPU: the BF16 conversion, the check's tolerance, the napkin math,
the inputs and the reference's layout, and every rung compiling for sm_80 and sm_90 without spills."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gpulab.check import compare_float
from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16 import SMEM_BLOCK_OPTIN_MAX, access, t0_smem_bytes
from gpulab.experiments.gemm_bf16 import cluster_split_k, decode
from gpulab.experiments.gemm_bf16.bf16 import from_bf16_bits, to_bf16_bits, tolerance
from gpulab.experiments.gemm_bf16.tma_rungs import t4_launch
from gpulab.gpu.compile import compile_kernel
from gpulab.model.predict import check_launch, predict
from gpulab.params import parse_params_label
from gpulab.records import read_csv

EXP = get_experiment("gemm_bf16")
RUNGS = [v for v in EXP.variants if re.fullmatch(r"t\d+", v.name)]


# -- the conversion ---------------------------------------------------------------------------------
def _bits(values) -> np.ndarray:
    return np.array(values, dtype=np.uint32).view(np.float32)


def test_exact_bf16_values_round_trip():
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    finite = every[(every & 0x7F80) != 0x7F80]  # leave out inf and NaN, checked below
    assert np.array_equal(to_bf16_bits(from_bf16_bits(finite)), finite)


@pytest.mark.parametrize("f32_bits, bf16_bits", [
    (0x3F800000, 0x3F80),  # 1.0
    (0x3F808000, 0x3F80),  # 1 + half an ulp: a tie, kept part even -> stays
    (0x3F818000, 0x3F82),  # a tie, kept part odd -> rounds up to even
    (0x3F808001, 0x3F81),  # just over half -> up
    (0x3F807FFF, 0x3F80),  # just under half -> down
    (0xBF808001, 0xBF81),  # sign is carried, magnitude rounds like the positive
    (0x7F7FFFFF, 0x7F80),  # the largest float32 rounds past BF16's range: +inf
    (0x7F800000, 0x7F80),  # +inf stays
    (0x00000001, 0x0000),  # the smallest denormal rounds to zero
])
def test_round_to_nearest_even(f32_bits, bf16_bits):
    assert int(to_bf16_bits(_bits([f32_bits]))[0]) == bf16_bits


def test_nan_stays_nan_even_when_rounding_would_carry_into_inf():
    out = to_bf16_bits(_bits([0x7FFFFFFF, 0x7F800001, 0xFFC00000]))
    assert np.isnan(from_bf16_bits(out)).all()


def test_rounding_is_the_nearest_bf16_value():
    x = np.random.default_rng(1).standard_normal(20_000).astype(np.float32)
    got = from_bf16_bits(to_bf16_bits(x)).astype(np.float64)
    # The two BF16 neighbours of x: truncate, and truncate plus one ulp.
    down = from_bf16_bits((x.view(np.uint32) >> 16).astype(np.uint16)).astype(np.float64)
    up = from_bf16_bits(((x.view(np.uint32) >> 16) + 1).astype(np.uint16)).astype(np.float64)
    err = np.abs(got - x)
    assert (err <= np.minimum(np.abs(down - x), np.abs(up - x))).all()
    assert (err <= np.abs(x) * 2.0**-8).all()  # half an ulp of an 8-bit significand


# -- the tolerance ----------------------------------------------------------------------------------
def test_tolerance_grows_with_k_above_the_fp32_floor():
    assert tolerance(1) == tolerance(64) == 2e-5
    assert tolerance(4096) == pytest.approx(4 * 4096 * 2.0**-24)
    assert tolerance(8192) == 2 * tolerance(4096)


def _relative_error(k: int, accumulate) -> float:
    rng = np.random.default_rng(k)
    a = from_bf16_bits(to_bf16_bits(rng.uniform(-1, 1, (64, k)).astype(np.float32)))
    b = from_bf16_bits(to_bf16_bits(rng.uniform(-1, 1, (48, k)).astype(np.float32)))
    ref = a.astype(np.float64) @ b.T.astype(np.float64)
    return compare_float(accumulate(a, b), ref, np, tolerance(k))


@pytest.mark.parametrize("k", [16, 777, 4104])
def test_fp32_accumulation_passes(k):
    """A sequential FP32 sum over k (the worst order: one long chain) is within the tolerance."""
    def sequential(a, b):
        acc = np.zeros((a.shape[0], b.shape[0]), np.float32)
        for p in range(a.shape[1]):
            acc += np.outer(a[:, p], b[:, p]).astype(np.float32)
        return acc
    assert _relative_error(k, sequential).ok


@pytest.mark.parametrize("k", [777, 4104])
def test_dropping_one_k16_slice_or_summing_in_bf16_fails(k):
    def missing_slice(a, b):
        a = a.copy()
        a[:, 32:48] = 0
        return (a.astype(np.float64) @ b.T.astype(np.float64)).astype(np.float32)

    def bf16_sum(a, b):
        acc = np.zeros((a.shape[0], b.shape[0]), np.float32)
        for p in range(a.shape[1]):
            acc = from_bf16_bits(to_bf16_bits(acc + np.outer(a[:, p], b[:, p]).astype(np.float32)))
        return acc
    assert not _relative_error(k, missing_slice).ok
    assert not _relative_error(k, bf16_sum).ok


# -- napkin math, inputs, the reference --------------------------------------------------------------
def test_napkin_math():
    s = EXP.shape(4096, 2048, 1024)
    assert EXP.flops(s) == 2.0 * 4096 * 2048 * 1024
    assert EXP.bytes_moved(s) == 2 * 4096 * 1024 + 2 * 2048 * 1024 + 4 * 4096 * 2048
    assert EXP.bound == "compute" and EXP.compute_ceiling == "tensor_bf16"


def test_inputs_are_bf16_bits_in_the_k_major_layouts():
    s = EXP.shape(33, 17, 65)
    inputs = EXP.make_inputs(s, np.random.default_rng(0), exact=False)
    assert inputs["A"].dtype == np.uint16 and inputs["A"].shape == (33, 65)
    assert inputs["Bt"].dtype == np.uint16 and inputs["Bt"].shape == (17, 65)
    a = from_bf16_bits(inputs["A"])
    assert np.abs(a).max() <= 1.0 and np.unique(a).size > 500  # many distinct values, not small integers


def test_exact_inputs_are_small_integers_and_big_k_is_refused():
    s = EXP.shape(40, 30, 50)
    inputs = EXP.make_inputs(s, np.random.default_rng(0), exact=True)
    a, bt = from_bf16_bits(inputs["A"]), from_bf16_bits(inputs["Bt"])
    assert set(np.unique(a)) <= set(range(-3, 4)) and set(np.unique(bt)) <= set(range(-2, 3))
    # The largest K a shape may have is below the exact limit: no exact run can lose exactness.
    assert EXP.max_dim <= (1 << 24) // 6
    with pytest.raises(GpulabError, match="larger than"):
        EXP.shape(1, 1, (1 << 24) // 6 + 1)


def test_reference_is_a_times_bt_transposed_and_the_check_catches_a_swap():
    s = EXP.shape(5, 3, 7)
    inputs = EXP.make_inputs(s, np.random.default_rng(2), exact=True)
    a, bt = from_bf16_bits(inputs["A"]).astype(np.float64), from_bf16_bits(inputs["Bt"]).astype(np.float64)
    want = np.array([[sum(a[i, p] * bt[j, p] for p in range(7)) for j in range(3)] for i in range(5)])
    assert np.array_equal(EXP.reference(inputs, s, np), want)
    out = want.astype(np.float32)
    assert EXP.check(out, inputs, s, exact=True, xp=np).ok
    out[4, 2] += 1
    bad = EXP.check(out, inputs, s, exact=True, xp=np)
    assert not bad.ok and bad.first_wrong == (4, 2)
    poisoned = EXP.output(s, np)
    assert np.isnan(poisoned).all() and poisoned.dtype == np.float32
    assert not EXP.check(poisoned, inputs, s, exact=False, xp=np).ok


# -- the rungs compile ----------------------------------------------------------------------------------
def representative_grid(variant) -> list[dict]:
    """The defaults, then each param moved to each of its other choices, one at a time."""
    base = variant.default_params()
    grid = [base]
    for p in variant.params:
        if p.name != "GROUP_M":  # the order blocks run in: no resource changes
            grid += [base | {p.name: c} for c in p.choices if c != base[p.name]]
    return grid


def _cases():
    for v in RUNGS:
        for params in representative_grid(v):
            yield pytest.param(v, params, id=f"{v.name}-{v.params_label(params).replace(' ', '-')}")


def test_the_rungs_are_numbered():
    assert [v.name for v in RUNGS][:1] == ["t0"]
    assert all(v.min_sm >= 80 and v.min_sm_for for v in RUNGS)


@pytest.mark.parametrize("variant", RUNGS, ids=lambda v: v.name)
def test_every_rung_opens_with_its_header(variant):
    text = EXP.source(variant).read_text()
    assert text.startswith(f"// {variant.name} ")
    header = text[: text.index("#include")]
    for part in ("Changed from", "Expected effect", "Params:", "Shapes:"):
        assert part in header, f"{variant.file}: header lacks '{part}'"
    for p in variant.params:
        assert re.search(rf"\b{p.name}\b", text[len(header):]), f"{variant.file} never uses {p.name}"


@pytest.mark.parametrize("variant", RUNGS, ids=lambda v: v.name)
def test_defaults_are_accepted_on_every_test_shape(variant):
    for shape in EXP.test_shapes + EXP.default_shapes:
        assert variant.constraints(variant.default_params(), EXP.shape(*shape)) is None


@pytest.mark.parametrize("variant, params", list(_cases()))
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_accepted_configs_compile_without_spills(variant, params, arch):
    _compiles_without_spills(variant, params, arch, EXP.shape(4096, 4096, 4096))


def _compiles_without_spills(variant, params, arch, shape):
    """A config its constraints accept compiles for `arch` (the variant's own target where it has
    one: the wgmma rungs and kc are sm_90a alone) with no spills or stack, and launches at `shape`
    within the block's thread and shared-memory limits; a refused config says why in a sentence."""
    reason = variant.constraints(params, None)
    if reason:
        assert isinstance(reason, str) and len(reason) > 10
        pytest.skip(f"rejected: {reason}")
    if reason := variant.arch_reason(arch):
        pytest.skip(reason)
    res = compile_kernel(EXP.source(variant), EXP.entry, params, arch=variant.compile_arch(arch)).resources
    assert res.spill_stores_bytes == 0 and res.spill_loads_bytes == 0, res
    assert res.stack_frame_bytes == 0, res
    launch = variant.launch(params, shape)
    assert launch.threads_per_block <= 1024
    assert launch.smem_dynamic_bytes + res.smem_static_bytes <= SMEM_BLOCK_OPTIN_MAX


def test_t0_shares_its_tiles_with_the_c_tile():
    p = {"BM": 64, "BN": 64, "BK": 32, "WM": 32, "WN": 32}
    assert t0_smem_bytes(p) == max(2 * 128 * 40, 4 * 64 * 64)


# One block per tile; t4's persistent grid loops over its tiles instead (tests/test_wgmma_rungs.py).
@pytest.mark.parametrize("variant", [v for v in RUNGS if v.launch is not t4_launch], ids=lambda v: v.name)
def test_the_grid_covers_every_shape(variant):
    p = variant.default_params()
    for shape in ((1, 1, 1), (4097, 4097, 4097), (1000, 3000, 777)):
        s = EXP.shape(*shape)
        launch = variant.launch(p, s)
        assert launch.grid[0] * launch.grid[1] * launch.grid[2] >= -(-s["M"] // p["BM"]) * -(-s["N"] // p["BN"])


# -- access models --------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", [v for v in RUNGS if v.access is not None], ids=lambda v: v.name)
@pytest.mark.parametrize("dims", [(1, 1, 1), (17, 33, 65), (131, 67, 37), (300, 388, 200), (200, 130, 136)])
def test_access_model_classes_are_exact(variant, dims):
    """Both copy paths (K % 8 == 0 or not), both store paths (N even or odd), ragged tiles."""
    s = EXP.shape(*dims)
    model = variant.access(variant.default_params(), s)
    check_launch(model, variant.launch(variant.default_params(), s))
    assert predict(model) == predict(model, exhaustive=True)


def test_t1_counts_at_4096_follow_the_code():
    v = EXP.variant("t1")
    p = v.default_params()
    got = predict(v.access(p, EXP.square(4096)))
    blocks, warps, ktiles = (4096 // 128) ** 2, 8, 4096 // 64
    # per warp, tile and 16 k: WM/16 = 4 LDSM.x4 of A and WN/16 = 2 of Bt; 4 wavefronts each, no conflicts
    assert got["smem_ldsm_requests"] == blocks * warps * ktiles * 4 * (4 + 2)
    assert got["smem_ldsm_wavefronts"] == 4 * got["smem_ldsm_requests"]
    assert got["smem_ldsm_bank_conflicts"] == 0
    # 16-byte cp.async: (128 + 128) rows x 8 chunks per tile, 32 lanes a request, 4 sectors per 8 lanes
    assert got["gmem_ldgsts_requests"] == blocks * ktiles * 256 * 8 // 32
    assert got["gmem_load_sectors"] == blocks * ktiles * 256 * 8 * 16 // 32
    assert got["smem_load_requests"] == got["smem_store_requests"] == 0  # no LDS/STS on this path
    assert got["gmem_store_sectors"] == 4096 * 4096 * 4 // 32


@pytest.mark.parametrize("name", ["t2", "t3"])
def test_tma_rungs_counts_at_4096_follow_the_code(name):
    v = EXP.variant(name)
    p = v.default_params()  # 128 x 256 tiles
    got = predict(v.access(p, EXP.square(4096)))
    blocks, ktiles = (4096 // 128) * (4096 // 256), 4096 // 64
    assert got["tma_load_requests"] == blocks * ktiles * 2  # one A box and one Bt box per k-tile
    # Rows of 8192 bytes: every 128-byte box row is 4 whole sectors; A read by 16 block-columns, Bt by 32 block-rows.
    assert got["tma_load_bytes"] == 2 * 4096 * 4096 * (16 + 32)
    assert got["gmma_requests"] == blocks * 2 * 4 * ktiles * 4  # 2 warpgroups of 4 warps, 4 k16 steps a k-tile
    assert got["gmem_load_requests"] == got["smem_load_requests"] == got["smem_store_requests"] == 0
    assert got["gmem_store_requests"] == blocks * 8 * 32 * 2  # 8 storing warps x BN/8 x 2 row halves, STG.64
    assert got["gmem_store_sectors"] == 4096 * 4096 * 4 // 32


def test_tma_rungs_read_the_staged_pitch_where_k_is_ragged():
    """K = 771: the boxes read the staged rows of 832 elements (1664 bytes, 13 lines of 128), so each
    128-byte box row is one whole line, 4 sectors, in all 13 k-tiles (the pad's zeros fill the last).
    K = 776, read as given: rows of 1552 bytes, a multiple of 16 but not of 32, so odd rows start 16
    bytes into a sector and touch 5 sectors in each of the 12 whole k-tiles; in the 13th, which K ends
    inside (8 elements, 16 bytes), every row counts 5, as Nsight Compute does (access._tma_sectors)."""
    v = EXP.variant("t3")
    rows = 128 + 256
    staged = predict(v.access(v.default_params(), EXP.shape(128, 256, 771)))
    assert staged["tma_load_bytes"] == 32 * rows * 13 * 4
    assert staged["tma_load_requests"] == 13 * 2
    given = predict(v.access(v.default_params(), EXP.shape(128, 256, 776)))
    per_row = 12 * 4 + 5, 12 * 5 + 5  # 12 whole k-tiles and the last, at an even and an odd row
    assert given["tma_load_bytes"] == 32 * (rows // 2) * sum(per_row)
    assert given["tma_load_requests"] == 13 * 2


@pytest.mark.parametrize("name, dims, measured", [
    ("t2", (300, 388, 200), 1_320_768),  # 3 x 2 blocks, 4 k-tiles: the last holds 8 of 64 elements
    ("t3", (131, 67, 37), 98_304),  # staged to a pitch of 64: one whole k-tile, 37 of its 64 elements K
    ("t3", (1024, 1024, 1024), 25_165_824),  # whole k-tiles, whole tiles: whole boxes
])
def test_tma_bytes_are_what_nsight_compute_counted_on_the_h200(name, dims, measured):
    """results/h200/fidelity.csv (H200, 2026-12-01; 131x67x37 2026-12-02, staged at the 128-byte
    pitch): box rows past M or N count 4 sectors a k-tile, a row inside the matrix 5 in the k-tile K
    ends inside, and the sectors it touches elsewhere. Before this rule the model counted in-bounds
    sectors only and gave 1,069,056 at 300x388x200 (and 73,728 at 131x67x37, staged then at a pitch
    of 40 elements, where ncu counted 106,784)."""
    v = EXP.variant(name)
    got = predict(v.access(v.default_params(), EXP.shape(*dims)))
    assert got["tma_load_bytes"] == measured


PROBE_TMA = Path(__file__).parent / "fixtures" / "h200" / "probe-tma-bytes.csv"


def test_the_tma_byte_rule_holds_at_every_probed_pitch_with_and_without_multicast(tma_sms):
    """notebook/probes/probe_tma_bytes.py on the H200 (2026-12-02): t4 at 256 x 256 with K from 8 to 200, so
    every offset of the pitch within a 128-byte line and every width of the k-tile K ends inside, in
    clusters of one and of two (Bt by multicast), and N = 1 .. 8 Bt rows at four K. Exact at every
    one of the 55 captures under access._box_row_sectors (multicast: at least 2 sectors a line of a
    row's part inside K, at least 3 for its part past K; docs/results/fidelity.md, "TMA load bytes")."""
    rows = read_csv(PROBE_TMA)
    t4 = EXP.variant("t4")
    seen = set()
    for r in rows:
        params = parse_params_label(r["params"])
        m, n, k = map(int, r["shape"].split("x"))
        got = predict(t4.access(params, EXP.shape(m, n, k)))["tma_load_bytes"]
        assert got == int(r["tma_load_bytes"]), r
        seen.add((params["CLUSTER"], k % 64 == 0))
    assert seen == {(1, True), (1, False), (2, True), (2, False)} and len(rows) == 55


@pytest.mark.parametrize("offset, inside, multicast, sectors", [
    (0, 128, False, 4), (16, 128, False, 5), (112, 128, False, 5),  # whole: the sectors touched
    (0, 16, False, 5), (16, 16, False, 5), (0, 96, False, 4),  # clipped: inside and past K apart
    (0, 128, True, 4), (112, 128, True, 6), (96, 128, True, 5), (64, 128, True, 4),  # at least 2 a line
    (0, 80, True, 6), (80, 80, True, 7), (96, 48, True, 7), (0, 48, True, 5), (0, 16, True, 6),  # past K: >= 3
])
def test_one_box_row_as_nsight_compute_counts_it(offset, inside, multicast, sectors):
    """_box_row_sectors at the cases the probe's rows took apart (tests/fixtures/h200/probe-tma-bytes.csv):
    e.g. a multicast row starting 112 bytes into a line puts 1 sector in it (counted 2) and 4 in the
    next; 80 bytes inside K from offset 80 cross a line (2 + 2) and leave 2 sectors past K (counted 3)."""
    assert access._box_row_sectors(offset, inside, multicast) == sectors


def test_multicast_explains_the_ragged_k_excess_at_1536x2560x1000():
    """Issue 42: Nsight Compute counted 8.3% more TMA bytes than the rule without multicast for t4 at
    1536x2560x1000 (K = 1000: a pitch of 2000 bytes, 80 of the last k-tile's 128 inside K)."""
    t4 = EXP.variant("t4")
    shape = EXP.shape(1536, 2560, 1000)
    got = predict(t4.access(t4.default_params(), shape))["tma_load_bytes"]
    one = predict(t4.access(t4.default_params() | {"CLUSTER": 1}, shape))["tma_load_bytes"]
    # Clusters of one: rows start 0 or 16 bytes into a sector in turn (2000 = 62.5 x 32), so 4 or 5
    # sectors in each of the 15 whole k-tiles and 5 in the clipped one: 65 and 80. A is read by the
    # 10 tile columns, Bt by the 12 block rows.
    assert one == 32 * (10 * 1536 + 12 * 2560) // 2 * (65 + 80) == 106_905_600
    assert got == 115_752_960 and round(got / one - 1, 3) == 0.083


PROBE_T1 = Path(__file__).parent / "fixtures" / "h200" / "probe-t1-sectors.csv"


def test_t1_load_sectors_hold_at_every_probed_ragged_k():
    """notebook/probes/probe_ragged_counts.py --set t1 on the H200 (2026-12-04, ncu 2025.3.1): one
    block at K = 72 .. 120 and 968 .. 1024 in steps of 8, and 128x128x200, 256x256x1000, 300x388x200,
    1536x2560x1000. Before the rule for zero-filled chunks the L1 counts (t1_access, counted_past_k),
    the model missed 32, 64 and 96 sectors a block where the clipped k-tile holds 3, 5 and 7 chunks,
    and 15,360 (+0.35%) at 1536x2560x1000; now every launch is exact."""
    rows = read_csv(PROBE_T1)
    t1 = EXP.variant("t1")
    for r in rows:
        m, n, k = map(int, r["shape"].split("x"))
        got = predict(t1.access(parse_params_label(r["params"]), EXP.shape(m, n, k)))
        assert got["gmem_load_sectors"] == int(r["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]), r
        assert got["gmem_load_requests"] == int(r["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]), r
    assert len(rows) == 19 and {int(r["shape"].split("x")[2]) % 64 for r in rows} == {0, 8, 16, 24, 32, 40, 48, 56}


def test_t0_pays_for_its_c_staging_in_bank_conflicts():
    v = EXP.variant("t0")
    got = predict(v.access(v.default_params(), EXP.square(1024)))
    assert got["smem_ldsm_bank_conflicts"] == 0  # the padded rows keep wmma's loads conflict-free
    assert got["smem_store_bank_conflicts"] > 0  # Cs rows 256 bytes apart: the STS.64 of 4 rows collide


# -- t1's data path, emulated: copy -> swizzled tile -> ldmatrix -> mma.sync fragments -> C ---------------
def _ldmatrix_x4(smem: np.ndarray, lane_addr: np.ndarray) -> np.ndarray:
    """PTX ldmatrix .x4 .b16 on 16-bit shared memory `smem` (indexed in elements): lane l gives the
    byte address of row l % 8 of matrix l // 8; register j of lane l holds row l // 4 of matrix j,
    columns 2*(l % 4) and +1. Returns (32 lanes, 4 registers, 2 values)."""
    out = np.empty((32, 4, 2), dtype=smem.dtype)
    for lane in range(32):
        for j in range(4):
            row_addr = lane_addr[8 * j + lane // 4] // 2
            out[lane, j] = smem[row_addr + 2 * (lane % 4): row_addr + 2 * (lane % 4) + 2]
    return out


def test_t1_fragments_multiply_the_tiles_it_copies():
    """The index math of t1_mma_ldmatrix.cu (copy placement, ldmatrix row addresses, the m16n8k16
    fragment layout of the PTX ISA, the epilogue's rows and columns) reproduces one block's
    A * Bt^T for one 64-deep tile: a wrong swizzle, lane map or fragment order fails here."""
    from gpulab.experiments.gemm_bf16.access import _swizzled

    BM, BN, BK, WM, WN = 128, 128, 64, 64, 32
    T, chunks = 32 * (BM // WM) * (BN // WN), BK // 8
    rng = np.random.default_rng(3)
    A = rng.integers(-3, 4, (BM, BK)).astype(np.float64)
    Bt = rng.integers(-2, 3, (BN, BK)).astype(np.float64)
    tiles = {}
    for name, src, rows in (("A", A, BM), ("Bt", Bt, BN)):
        smem = np.full(rows * BK, np.nan)
        for tid in range(T):  # TileCopier: copy i of thread tid
            for i in range(rows * chunks // T):
                r, c = tid // chunks + i * (T // chunks), tid % chunks
                off = _swizzled(rows, r, c) // 2
                smem[off: off + 8] = src[r, 8 * c: 8 * c + 8]
        assert not np.isnan(smem).any()  # every element landed, none twice over another
        tiles[name] = smem
    C = np.zeros((BM, BN))
    lanes = np.arange(32)
    for warp in range(T // 32):
        wm, wn = (warp // (BN // WN)) * WM, (warp % (BN // WN)) * WN
        acc = np.zeros((WM // 16, WN // 8, 32, 4))
        for kk in range(BK // 16):
            a = [_ldmatrix_x4(tiles["A"], _swizzled(BM, wm + 16 * i + lanes % 16, 2 * kk + lanes // 16))
                 for i in range(WM // 16)]
            b = {}
            for j in range(0, WN // 8, 2):
                regs = _ldmatrix_x4(tiles["Bt"], _swizzled(BN, wn + 8 * j + 8 * (lanes // 16) + lanes % 8,
                                                           2 * kk + (lanes // 8) % 2))
                b[j], b[j + 1] = regs[:, 0:2], regs[:, 2:4]
            for i in range(WM // 16):
                for j in range(WN // 8):
                    # PTX m16n8k16 .bf16: a0 (g, 2t), a1 (g+8, 2t), a2 (g, 2t+8), a3 (g+8, 2t+8);
                    # b0 (k 2t, n g), b1 (k 2t+8, n g); c0,c1 (g, 2t..), c2,c3 (g+8, 2t..)
                    fa, fb = np.zeros((16, 16)), np.zeros((16, 8))
                    for lane in range(32):
                        g, t = lane // 4, lane % 4
                        for reg, (row, col) in enumerate(((g, 2 * t), (g + 8, 2 * t), (g, 2 * t + 8), (g + 8, 2 * t + 8))):
                            fa[row, col: col + 2] = a[i][lane, reg]
                        for reg, k in enumerate((2 * t, 2 * t + 8)):
                            fb[k: k + 2, g] = b[j][lane, reg]
                    d = fa @ fb
                    for lane in range(32):
                        g, t = lane // 4, lane % 4
                        acc[i, j, lane] += (d[g, 2 * t], d[g, 2 * t + 1], d[g + 8, 2 * t], d[g + 8, 2 * t + 1])
        for i in range(WM // 16):  # the epilogue's rows and columns
            for j in range(WN // 8):
                for lane in range(32):
                    for h in range(2):
                        r, c = wm + 16 * i + lane // 4 + 8 * h, wn + 8 * j + 2 * (lane % 4)
                        C[r, c: c + 2] = acc[i, j, lane, 2 * h: 2 * h + 2]
    assert np.array_equal(C, A @ Bt.T)


@pytest.mark.parametrize("over", [{}, {"BN": 128, "PINGPONG": 1, "STORE": 0}, {"BN": 128, "PINGPONG": 1},
                                  {"CLUSTER": 1, "BN": 128}, {"BN": 200, "CLUSTER": 4}],
                         ids=lambda o: " ".join(f"{k}={v}" for k, v in o.items()))
def test_t4_model_classes_are_exact_over_several_rounds(tma_sms, over):
    """On 8 SMs every block takes several tiles, the last round partly: the round classes of the
    tile-free instructions (periodic by 2 for PINGPONG's turns, the last round alone) against
    every round evaluated. BN = 200 also stores its last 8 columns from registers (odd N: scalars)."""
    tma_sms(8)
    v = EXP.variant("t4")
    p = v.default_params() | over
    s = EXP.shape(600, 700, 64)  # N % 4 == 0 and not: TMA stores and the copy-out
    for shape in (s, EXP.shape(600, 702, 64), EXP.shape(600, 701, 64)):
        model = v.access(p, shape)
        assert model.grid[0] == 8 and -(-(-(-600 // (128 * p["CLUSTER"])) * -(-shape["N"] // p["BN"])) // (8 // p["CLUSTER"])) > 2
        assert predict(model) == predict(model, exhaustive=True)


# -- the kernels for few output tiles: d0 (decode, M <= 16) and kc (split-K across a cluster) ------------
D0, KC = EXP.variant("d0"), EXP.variant("kc")
SMALL = [D0, KC]
# The shapes the brief names for M <= 16: ragged M, N and K (both load paths of d0, every edge).
DECODE_RAGGED = [(m, n, k) for m in (1, 7, 16) for n in (31, 4097) for k in (8, 1000, 4099)]


@pytest.fixture
def h200_sms(monkeypatch):
    """d0's host-chosen k slices as on the H200 (132 SMs), whatever card runs the tests."""
    monkeypatch.setattr(decode, "sm_count", lambda: 132)


@pytest.mark.parametrize("variant", SMALL, ids=lambda v: v.name)
def test_small_tile_kernels_open_with_their_header_and_stay_off_the_ladder(variant):
    text = EXP.source(variant).read_text()
    assert text.startswith(f"// {variant.name} ")
    header = text[: text.index("#include")]
    for part in ("Changed from", "Expected effect", "Params:", "Shapes:"):
        assert part in header, f"{variant.file}: header lacks '{part}'"
    for p in variant.params:
        if p.name != "BM":  # kc's BM is t3's fixed 128 (two consumers), checked by an #error
            assert re.search(rf"\b{p.name}\b", text[len(header):]), f"{variant.file} never uses {p.name}"
    assert not variant.rung and variant.tune_shapes  # benched and tuned on their own shapes, no ladder row


def _small_cases():
    for v in SMALL:
        for params in representative_grid(v):
            if params.get("S", 0) in (0, v.default_params().get("S", 0)):  # S: grid.y, chosen on the host
                yield pytest.param(v, params, id=f"{v.name}-{v.params_label(params).replace(' ', '-')}")


@pytest.mark.parametrize("variant, params", list(_small_cases()))
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_small_tile_kernels_compile_without_spills(variant, params, arch):
    _compiles_without_spills(variant, params, arch, EXP.shape(16, 4096, 4096))


def test_d0_takes_any_m_in_rows_of_16_and_states_its_limits():
    p = D0.default_params()
    for dims in DECODE_RAGGED + [(m, n, k) for m in (1, 16) for n, k in decode.LLAMA_NK] + list(EXP.test_shapes):
        assert D0.constraints(p, EXP.shape(*dims)) is None, dims
    assert D0.launch(p, EXP.shape(16, 4096, 4096)).grid[2] == 1  # a decode batch: one pass over Bt
    assert D0.launch(p, EXP.shape(17, 4096, 4096)).grid[2] == 2
    assert D0.launch(p, EXP.shape(1024, 4096, 4096)).grid[2] == 64
    assert "grid.z" in D0.constraints(p, EXP.shape(16 * 65535 + 1, 1, 1))
    # 256 threads x 2 blocks leave 128 registers: one step of 2 x 2 row groups and chunks takes 122
    # (NVRTC 13.0), two steps 167, which 128 threads x 3 blocks (168) hold; 512 x 2 leave 64
    assert D0.constraints(p, None) is None
    assert "registers" in D0.constraints(p | {"DEPTH": 2}, None)
    assert D0.constraints(p | {"DEPTH": 2, "KW": 4, "MINB": 3}, None) is None
    assert "registers" in D0.constraints(p | {"KW": 16}, None)
    assert "registers" in D0.constraints(p | {"G": 4, "U": 4}, None)
    assert D0.constraints(p | {"G": 4, "U": 4, "KW": 4, "MINB": 1}, None) is None  # 240 of 255, measured
    assert "registers" in D0.constraints(p | {"G": 4, "U": 4, "KW": 4, "MINB": 1, "DEPTH": 2}, None)  # spills at 255


def test_d0_grid_covers_n_and_slices_k_where_n_alone_leaves_the_card_short(h200_sms):
    p = D0.default_params()  # 32 rows a block, 8 warps of 64 k a step, 2 blocks an SM: 264 slots
    at = lambda dims, **over: D0.launch(p | over, EXP.shape(*dims))  # noqa: E731
    assert at((1, 4096, 4096)).grid == (128, 2, 1)  # 128 block columns: 2 slices make 256 of 264 slots
    assert at((16, 6144, 4096)).grid == (192, 1, 1)  # 192 columns: one wave already
    assert at((16, 57344, 8192)).grid == (1792, 1, 1)
    assert at((1, 4096, 14336)).grid == (128, 2, 1)
    assert at((16, 6144, 4096), KW=4, MINB=3, DEPTH=2).grid == (192, 2, 1)  # 396 slots: 2 slices, 384
    assert at((16, 31, 1000)).grid == (1, 1, 1)  # 16 steps of 64 k: one slice keeps 2 steps a warp
    assert at((16, 31, 4096)).grid == (1, 4, 1)  # 64 steps: 4 slices of 8 warps x 2 steps
    assert at((1, 4097, 8), S=3).grid == (129, 3, 1)  # S given: taken as it is, empty slices and all
    assert at((1, 4097, 8)).block == (256, 1, 1)
    assert at((1, 4097, 8)).smem_dynamic_bytes == 8 * 16 * (32 + 4) * 4
    for dims in DECODE_RAGGED:
        for over in ({}, {"G": 1}, {"G": 4, "U": 1, "KW": 4}):
            g = at(dims, **over).grid
            assert g[0] * 16 * (p | over)["G"] >= dims[1] > (g[0] - 1) * 16 * (p | over)["G"]
            assert 1 <= g[1] <= decode.AUTO_SLICES_MAX


def test_d0_workspace_is_one_plane_per_block_and_a_counter_per_column(h200_sms):
    p = D0.default_params()
    assert decode.d0_workspace_sizes(p, EXP.shape(16, 6144, 4096)) == (1, 1)  # one slice: none
    assert decode.d0_workspace_sizes(p | {"S": 2}, EXP.shape(16, 6144, 4096)) == (2 * 192 * 16 * 32, 192)
    assert decode.d0_workspace_sizes(p, EXP.shape(16, 4096, 4096)) == (2 * 128 * 16 * 32, 128)
    assert decode.d0_workspace_sizes(p | {"S": 3}, EXP.shape(1, 31, 1000)) == (3 * 1 * 16 * 32, 1)
    assert decode.d0_workspace_sizes(p | {"S": 3}, EXP.shape(40, 31, 1000)) == (3 * 3 * 16 * 32, 3)  # 3 block rows


def test_d0_warp_steps_count_a_warps_k_range_and_the_slices_its_fixup_reads_in_turn(h200_sms):
    """The chain the best row's model compares configs by (Variant.warp_k_steps): a warp's steps of
    32 U k in its k range, plus, where the host splits K over blocks, the slices the fixup reads
    one after another. At 16x1024x4096 (64 block columns) KW = 4 takes 4 slices and KW = 8 two, 2
    steps a warp each; KW = 4's fixup reads twice the slices."""
    p = D0.default_params() | {"G": 1, "U": 4, "MINB": 2}
    assert D0.warp_k_steps(p | {"KW": 4}, EXP.shape(1, 4096, 4096)) == 8  # 32 steps of 128 k over 4 warps
    assert D0.warp_k_steps(p | {"KW": 8}, EXP.shape(1, 4096, 4096)) == 4
    assert decode.auto_slices(p | {"KW": 4}, EXP.shape(16, 1024, 4096)) == 4
    assert D0.warp_k_steps(p | {"KW": 4}, EXP.shape(16, 1024, 4096)) == 2 + 4
    assert D0.warp_k_steps(p | {"KW": 8}, EXP.shape(16, 1024, 4096)) == 2 + 2
    assert EXP.variant("t4").warp_k_steps(EXP.variant("t4").default_params(), EXP.shape(16, 1024, 4096)) == 0


def test_d0_fragments_with_k_permuted_multiply_the_rows_they_load():
    """The index math of d0_decode.cu for one warp (warp_partial and the block's sum): lane l = 4r + q
    loads chunk 4u + q of each step from Bt rows r, r + 8 (of each row group g) and A row r (+8), feeds
    words 2j, 2j + 1 of the chunks to mma j through the m16n8k16 fragment layout of the PTX ISA (Bt as
    the A operand, A as the B operand), and stores the C^T fragment where the block's sum reads it: the
    product must be A * Bt^T exactly (small integers), for either number of n8 tiles and any U, G. A
    permutation of k applied to one operand only, a word taken from the wrong row or a fragment stored
    at the wrong row or column fails here."""
    rng = np.random.default_rng(5)
    for G, U, M in ((1, 1, 16), (2, 2, 7), (2, 4, 16), (4, 1, 1)):
        K, rows, nm = 64 * U + 24, 16 * G, (2 if M > 8 else 1)
        A = rng.integers(-3, 4, (M, K)).astype(np.float64)
        Bt = rng.integers(-2, 3, (rows, K)).astype(np.float64)

        def chunk(mat, row, c):  # 8 consecutive k, zeros past the matrix (load_chunk)
            out = np.zeros(8)
            if row < mat.shape[0]:
                got = mat[row, 8 * c: 8 * c + 8]
                out[: got.size] = got
            return out

        acc = np.zeros((G, nm, 32, 4))
        for step in range(-(-K // (32 * U))):
            for u in range(U):
                for j in range(2):
                    for g in range(G):
                        for t in range(nm):
                            fa, fb = np.zeros((16, 16)), np.zeros((16, 8))
                            for lane in range(32):
                                r, q = lane // 4, lane % 4
                                c = step * 4 * U + 4 * u + q
                                lo, hi = chunk(Bt, 16 * g + r, c), chunk(Bt, 16 * g + r + 8, c)
                                a = chunk(A, 8 * t + r, c)
                                # a0 (r, 2q..), a1 (r+8, 2q..), a2 (r, 2q+8..), a3 (r+8, 2q+8..) <- words
                                # 2j, 2j, 2j+1, 2j+1 of the row-r and row-(r+8) chunks; b0, b1 <- A's
                                fa[r, 2 * q: 2 * q + 2], fa[r + 8, 2 * q: 2 * q + 2] = lo[4 * j: 4 * j + 2], hi[4 * j: 4 * j + 2]
                                fa[r, 2 * q + 8: 2 * q + 10] = lo[4 * j + 2: 4 * j + 4]
                                fa[r + 8, 2 * q + 8: 2 * q + 10] = hi[4 * j + 2: 4 * j + 4]
                                fb[2 * q: 2 * q + 2, r], fb[2 * q + 8: 2 * q + 10, r] = a[4 * j: 4 * j + 2], a[4 * j + 2: 4 * j + 4]
                            d = fa @ fb
                            for lane in range(32):
                                r, q = lane // 4, lane % 4
                                acc[g, t, lane] += (d[r, 2 * q], d[r, 2 * q + 1], d[r + 8, 2 * q], d[r + 8, 2 * q + 1])
        red = np.full((16, rows + 4), np.nan)  # one warp's partial: m rows, 16G + 4 floats
        for g in range(G):
            for t in range(nm):
                for lane in range(32):
                    r, q = lane // 4, lane % 4
                    for i in range(4):
                        red[8 * t + 2 * q + i % 2, 16 * g + r + 8 * (i // 2)] = acc[g, t, lane, i]
        assert np.array_equal(red[:M, :rows], A @ Bt.T), (G, U, M)


@pytest.mark.parametrize("dims", [(1, 1, 1), (7, 31, 1000), (16, 31, 8), (16, 100, 4099), (9, 40, 777), (1, 65, 2048),
                                  (17, 33, 65), (40, 31, 100), (32, 70, 1000)],
                         ids=lambda d: "x".join(map(str, d)))
@pytest.mark.parametrize("over", [{}, {"S": 1}, {"S": 3}, {"G": 1, "U": 1}, {"G": 4, "U": 1, "KW": 4, "S": 2}],
                         ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_d0_model_classes_are_exact(h200_sms, dims, over):
    """Both load paths (K % 8 == 0 or not), one n8 tile of A or two, ragged columns, one slice or
    several (the workspace, the ticket's counter and the fixup), warps with one step more than others,
    several block rows of 16 (the last one ragged, with one n8 tile or two, or whole)."""
    p, s = D0.default_params() | over, EXP.shape(*dims)
    model = D0.access(p, s)
    check_launch(model, D0.launch(p, s))
    assert predict(model) == predict(model, exhaustive=True)


def test_d0_reads_bt_once_and_a_once_per_block_column_at_the_llama_shapes(h200_sms):
    """16 x 4096 x 4096 at the defaults (2 slices of 128 block columns of 32 rows): every 16-byte load
    is two lanes' halves of a 64-byte run, so Bt's sectors are its bytes / 32 exactly; A's 16 rows are
    read by every block column, 1/G of Bt's bytes (napkin math in the kernel's header); the stores are
    C once and the workspace's 2 planes; the fixup reads the 2 planes back. DEPTH (the steps in flight)
    moves nothing: the loads past a warp's range are predicated off."""
    p, s = D0.default_params(), EXP.shape(16, 4096, 4096)
    got = predict(D0.access(p, s))
    assert got == predict(D0.access(p | {"DEPTH": 2}, s))
    columns, slices, plane = 128, 2, 16 * 32 * 4
    assert D0.launch(p, s).grid[1] == slices
    bt, a = 4096 * 4096 * 2 // 32, columns * 16 * 4096 * 2 // 32
    assert got["gmem_load_sectors"] == bt + a + columns * slices * plane // 32
    # 512 bytes a warp's LDG.128; the fixup's 2 loads of 512 elements: 16 warp loads each
    assert got["gmem_load_requests"] == (bt + a) * 32 // 512 + columns * slices * 16
    assert got["gmem_store_sectors"] == 16 * 4096 * 4 // 32 + columns * slices * plane // 32 + columns
    assert got["smem_store_bank_conflicts"] == 0 == got["smem_load_bank_conflicts"]
    one = predict(D0.access(p | {"S": 1}, EXP.shape(1, 6144, 4096)))  # one row of A: 4 lanes load it
    assert one["gmem_load_sectors"] == 6144 * 4096 * 2 // 32 + 192 * 4096 * 2 // 32


def test_kc_splits_every_tile_over_a_cluster_and_keeps_its_partial_in_the_ring():
    p = KC.default_params()  # BN 128, SPLIT 2, 4 stages
    assert KC.launch(p, EXP.shape(128, 6144, 4096)).grid == (48 * 2, 1, 1)
    assert KC.launch(p | {"BN": 256, "SPLIT": 3}, EXP.shape(128, 6144, 4096)).grid == (24 * 3, 1, 1)
    assert KC.launch(p | {"BN": 256, "SPLIT": 8}, EXP.shape(257, 129, 8191)).grid == (3 * 8, 1, 1)
    assert KC.launch(p | {"SPLIT": 1}, EXP.shape(1, 1, 1)).grid == (1, 1, 1)
    for dims in EXP.test_shapes + EXP.default_shapes + cluster_split_k.KC_TUNE_SHAPES:
        assert KC.constraints(p, EXP.shape(*dims)) is None, dims
    # the 128 x 256 FP32 partial (128 KiB) needs 3 stages of 48 KiB; two leave it no room
    assert "more STAGES" in KC.constraints(p | {"BN": 256, "STAGES": 2}, None)
    assert KC.constraints(p | {"BN": 256, "STAGES": 2, "SPLIT": 1}, None) is None  # no partial
    assert KC.constraints(p | {"BN": 256, "STAGES": 3}, None) is None
    assert "shared memory" in KC.constraints(p | {"BN": 256, "STAGES": 5}, None)


def test_kc_reduction_bands_add_every_partial_once_in_rank_order():
    """The index math of kc's reduction: consumer thread t (warp w, lane l) of warpgroup c writes
    float4 q of its accumulators at [c][q][t] of its ring; block s of the cluster reads band
    q in [s Q / SPLIT, (s + 1) Q / SPLIT) of every block, in batches of 16 / SPLIT quads (the loads of
    a batch first, a quad past the band loaded and stored by no one), and stores float4 q at rows
    16w + l/4 (+8), columns 8q + 2(l % 4) (+1) of its 64-row half (the wgmma D fragment): every
    element of the tile is stored once, by one block, as the sum of the SPLIT partials."""
    rng = np.random.default_rng(7)
    for BN, split in ((64, 8), (96, 2), (128, 2), (160, 3), (192, 3), (192, 5), (256, 4), (256, 7)):
        quads, batch = BN // 8, 16 // split
        partials = rng.integers(-9, 10, (split, 2, quads, 128, 4)).astype(np.float64)  # [rank][c][q][t]
        tile = np.full((128, BN), np.nan)
        for s in range(split):
            for c in range(2):
                for t in range(128):
                    w, lane = t // 32, t % 32
                    q_end = (s + 1) * quads // split
                    for q0 in range(s * quads // split, q_end, batch):
                        loaded = {q: partials[:, c, q, t] for q in range(q0, q0 + batch) if q < q_end}
                        for q, ranks in loaded.items():
                            v = ranks.sum(axis=0)
                            row, col = 64 * c + 16 * w + lane // 4, 8 * q + 2 * (lane % 4)
                            assert np.isnan(tile[row, col: col + 2]).all()
                            assert np.isnan(tile[row + 8, col: col + 2]).all()
                            tile[row, col: col + 2], tile[row + 8, col: col + 2] = v[:2], v[2:]
        assert not np.isnan(tile).any(), (BN, split)


@pytest.mark.parametrize("dims", [(300, 388, 200), (131, 67, 37), (1, 1, 1), (16, 31, 1000)], ids=lambda d: "x".join(map(str, d)))
def test_kc_model_is_t3s_without_a_split_and_moves_the_same_bytes_with_one(dims):
    """SPLIT = 1 is t3's model (the same tiles and boxes); split, the TMA boxes and wgmma are the same
    in all, C's stores spread over the cluster's bands are the same sectors, and each block adds one
    partial tile's STS.128 and, of the SPLIT loads of its band, the one from its own shared memory
    (the loads from its peers' Nsight Compute does not count as shared loads: H200, 2026-12-05):
    4 wavefronts per warp instruction, no conflict."""
    s = EXP.shape(*dims)
    t3 = EXP.variant("t3")
    one = predict(KC.access(KC.default_params() | {"BN": 256, "SPLIT": 1}, s))
    assert one == predict(t3.access(t3.default_params(), s))  # both 128 x 256 tiles
    for over in ({}, {"BN": 256, "SPLIT": 7}, {"BN": 192, "SPLIT": 5, "STAGES": 3}, {"BN": 64, "SPLIT": 3}):
        p = KC.default_params() | over
        model = KC.access(p, s)
        check_launch(model, KC.launch(p, s))
        got = predict(model)
        assert predict(model, exhaustive=True) == got
        alone = predict(KC.access(p | {"SPLIT": 1}, s))
        for key in ("tma_load_requests", "tma_load_bytes", "gmma_requests", "gmem_store_sectors"):
            assert got[key] == alone[key], key
        blocks, warps = model.grid[0], 8
        assert got["smem_store_requests"] == blocks * warps * p["BN"] // 8
        assert got["smem_load_requests"] == (blocks // p["SPLIT"]) * warps * p["BN"] // 8  # each quad once a tile
        assert got["smem_load_wavefronts"] == 4 * got["smem_load_requests"]
        assert got["smem_store_bank_conflicts"] == got["smem_load_bank_conflicts"] == 0


@pytest.mark.parametrize("name", ["sgemm", "gemm_bf16"])
def test_inputs_drawn_on_the_device_are_the_host_draws_kinds(name):
    """make_device_inputs (the lab's path: drawn where they are used, from the seed) gives what
    make_inputs gives: the same names, shapes and stored types, values in the same range, exact
    inputs small integers, and the same values again from the same seed. numpy stands in for CuPy:
    the code is the same for both."""
    from gpulab.experiments import get_experiment

    exp = get_experiment(name)
    shape = exp.shape(33, 17, 65)
    host = exp.make_inputs(shape, np.random.default_rng(0), False)
    device = exp.make_device_inputs(shape, 5, False, np)
    assert {k: (v.shape, v.dtype) for k, v in host.items()} == {k: (v.shape, v.dtype) for k, v in device.items()}
    values = {k: exp.values(v, np) for k, v in device.items()}
    assert all(np.abs(v).max() <= 1.0 and np.abs(v).max() > 0.9 for v in values.values())
    again = exp.make_device_inputs(shape, 5, False, np)
    assert all((again[k] == device[k]).all() for k in device)
    exact = {k: exp.values(v, np) for k, v in exp.make_device_inputs(shape, 5, True, np).items()}
    assert all((v == np.round(v)).all() and np.abs(v).max() <= 3 for v in exact.values())
