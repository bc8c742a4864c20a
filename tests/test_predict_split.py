"""The access models of sgemm's kernels for few-tile shapes (sk sliced K, gv GEMV rows, sx split-K
across blocks), on a CPU: counts at small shapes worked out by hand (the derivation beside each
number), the symmetry classes against full enumeration, and invariants of split-K (each k tile
copied once whatever S, the workspace written and read back once per slice, one counter reset per
tile). The counts are held to Nsight Compute on the card by `gpulab fidelity` (notebook/device/device_models.sh)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpulab.arith import cdiv
from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.ladder.ring_access import RingGrid, classes_by, row_classes
from gpulab.experiments.sgemm.splitk.access import _grouped_rects
from gpulab.experiments.sgemm.splitk.launch import split_tail_plan
from gpulab.jobs.fidelity import plan
from gpulab.errors import GpulabError
from gpulab.gpu.device import l2_bytes
from gpulab.model.predict import check_launch, instruction_table, predict
from gpulab import quantities as Q
from gpulab.jobs.profile import predicted_counters
from gpulab.records import read_csv
from gpulab.run.args import make_spec

KEYS = ("gmem_load_requests", "gmem_load_sectors", "gmem_store_requests", "gmem_store_sectors",
        "smem_load_requests", "smem_load_wavefronts", "smem_store_requests", "smem_store_wavefronts",
        "gmem_ldgsts_requests", "smem_ldgsts_requests")


def _predict(name: str, dims, exhaustive: bool = True, **params) -> dict:
    v = SGEMM.variant(name)
    p = v.default_params() | params
    shape = SGEMM.shape(*dims)
    assert v.constraints(p, shape) is None
    model = v.access(p, shape)
    check_launch(model, v.launch(p, shape))
    out = predict(model)
    if exhaustive:  # the symmetry classes change no count
        assert out == predict(model, exhaustive=True)
    return {k: out[k] for k in KEYS}


def test_sk_default_by_hand():
    # BM=16 BN=64 BK=32 TM=2 TN=4 KS=2: 2 groups of 8 x 16 threads, 256 threads (8 warps); one block,
    # one k tile at 16x64x32.
    got = _predict("sk", (16, 64, 32))
    # A tile 16 x 32: 2 loads a thread, a warp's 32 lanes one row of 32 floats (4 sectors): 16 x 4.
    # B tile 32 x 64: 8 loads a thread, a warp half a row (4 sectors): 64 x 4.
    assert (got["gmem_load_requests"], got["gmem_load_sectors"]) == (16 + 64, 16 * 4 + 64 * 4)
    # 1024 outputs, 4 trips of the rolled reduction loop per thread: 32 warp stores of 128 bytes.
    assert (got["gmem_store_requests"], got["gmem_store_sectors"]) == (32, 32 * 4)
    # per warp: 16 k rows x (2 As + 4 Bs) scalar loads, then 4 trips x KS=2 partial loads; each one
    # wavefront (As: two addresses, broadcast; Bs: 16 consecutive words; partials: 32 consecutive).
    assert got["smem_load_requests"] == got["smem_load_wavefronts"] == 8 * (16 * 6 + 4 * 2)
    # per warp: 10 tile stores (As transposed with a 17-float row: 32 distinct banks, 1 wavefront) and
    # 8 partial stores (two rows 64 floats apart in a warp: the same 16 banks, 2 wavefronts).
    assert got["smem_store_requests"] == 8 * (10 + 8)
    assert got["smem_store_wavefronts"] == 8 * (10 + 8 * 2)
    assert got["gmem_ldgsts_requests"] == got["smem_ldgsts_requests"] == 0


def test_sk_one_row_reads_b_once_and_a_as_broadcasts():
    # BM=1 BN=32 BK=64 KS=8 (SK_DEFAULTS "one row"): 8 warps, warp g takes k rows g, g+8, ...
    got = _predict("sk", (1, 32, 64), BM=1, BN=32, BK=64, TM=1, TN=1, KS=8)
    # A tile 1 x 64: 1 load a thread where e < 64 (warps 0-1, 2 sectors each: 64 contiguous floats);
    # B tile 64 x 32: 8 loads a thread, each warp one row of 32 floats (4 sectors).
    assert got["gmem_load_requests"] == 2 + 8 * 8
    assert got["gmem_load_sectors"] == 2 * 4 + 64 * 4
    # 32 outputs: the one warp holding o < 32 stores once (threads 32-255 hold no o)
    assert (got["gmem_store_requests"], got["gmem_store_sectors"]) == (1, 4)


def test_sk_vector_shared_accesses_where_bn_equals_tn():
    # BN == TN == 4: each thread's Bs row and partial row are one 16-byte access (LDS.128 / STS.128
    # in the SASS); As stays scalar (rows of BM+1 floats)
    v = SGEMM.variant("sk")
    p = v.default_params() | {"BM": 16, "BN": 4, "TM": 1, "TN": 4, "KS": 2}
    rows = {r["name"]: r for r in instruction_table(v.access(p, SGEMM.shape(16, 4, 32)))}
    widths = {name.split()[0]: r["width"] for name, r in rows.items()}
    assert widths["lds.128"] == 16 and widths["sts.128"] == 16 and widths["lds"] == 4


def test_sk_reduction_loads_leave_the_guard_where_one_trip_covers_the_tile():
    # BM=16 BN=4 TM=1 TN=4 KS=4: 4 groups of 16 threads, 64 threads = BM*BN. Partial s of the rolled
    # reduction's trip q+1 would be partial s+1 of trip q, and ptxas pipelines the loop across trips:
    # its KS loads are issued ahead of the store guard (SASS, NVRTC 13.5; on the H200 at 33x20x100,
    # 2,040 shared loads where loads inside the guard would be 2,020). At 17x4x32: two blocks (rows
    # 0-15 and 16-31), one k tile; per warp 8 k steps x (1 LDS of As + 1 LDS.128 of Bs), then 4
    # partial loads in every warp, warp 1 of block 1 too (its rows 24-31 are past M: it stores nothing).
    got = _predict("sk", (17, 4, 32), BM=16, BN=4, TM=1, TN=4, KS=4)
    assert got["smem_load_requests"] == 2 * 2 * (8 * 2 + 4)
    # stores: block 0's 64 outputs (2 warps), block 1's row 16 (4 outputs, warp 0)
    assert got["gmem_store_requests"] == 3
    # BN=8 KS=2 (64 threads, 128 outputs: 2 trips): the loads stay inside the guard. Per warp 16 k
    # steps x (1 + 4 scalar LDS); then KS=2 loads per trip where a lane stores: block 0 both warps
    # both trips, block 1 (row 16: o < 8) warp 0's first trip
    two = _predict("sk", (17, 8, 32), BM=16, BN=8, TM=1, TN=4, KS=2)
    assert two["smem_load_requests"] == 2 * 2 * 16 * 5 + 2 * 2 * 2 + 1 * 2


def test_sk_global_loads_do_not_depend_on_ks():
    one = _predict("sk", (17, 65, 33), KS=1)
    two = _predict("sk", (17, 65, 33), KS=2)
    assert (one["gmem_load_requests"], one["gmem_load_sectors"]) == (two["gmem_load_requests"], two["gmem_load_sectors"])


def test_gv_one_row_by_hand():
    # BM=1 CT=64 KT=4 U=4: 256 threads (8 warps, 2 per thread row), BN = 256 columns.
    # S=1 at 1x256x256: per_slice 256, every thread row runs 16 main steps and no tail.
    one = _predict("gv", (1, 256, 256), S=1)
    # per warp and step: 4 LDG.128 of B (512 bytes: 16 sectors) and 4 LDG of A (1 sector, broadcast)
    assert one["gmem_load_requests"] == 8 * 16 * (4 + 4)
    assert one["gmem_load_sectors"] == 8 * 16 * 4 * (16 + 1)
    assert (one["gmem_store_requests"], one["gmem_store_sectors"]) == (8, 32)
    # 4 partial stores a thread, lanes 4 floats apart: 8 banks x 4 words, 4 wavefronts each
    assert (one["smem_store_requests"], one["smem_store_wavefronts"]) == (8 * 4, 8 * 4 * 4)
    assert one["smem_load_requests"] == one["smem_load_wavefronts"] == 8 * 4
    # S=16: 16 slices of 16 k (one main step each), the same loads of A and B over 16 blocks; each
    # block stores its partial tile (8 warps; the arrival's answer comes through the barrier, no
    # shared flag); the last block reads the 16 planes (8 warps x 16 LDG), stores C (8) and resets
    # the counter (1).
    split = _predict("gv", (1, 256, 256), S=16)
    assert split["gmem_load_requests"] == one["gmem_load_requests"] + 8 * 16
    assert split["gmem_load_sectors"] == one["gmem_load_sectors"] + 16 * 32
    assert split["gmem_store_requests"] == 16 * 8 + 8 + 1
    assert split["gmem_store_sectors"] == 16 * 32 + 32 + 1
    assert split["smem_store_requests"] == 16 * 32
    assert split["smem_load_requests"] == 16 * 32


@pytest.mark.parametrize("dims", [(1, 1000, 777), (3, 1000, 777), (1, 1531, 777), (3, 300, 100)])
def test_gv_reads_each_element_of_b_once_per_row_block(dims):
    # float4 path (N % 4 == 0) or scalar: every element of B is loaded exactly once per block-row of
    # M, whatever the slices; A's loads are broadcasts. Requested bytes count it without sectors.
    m, n, k = dims
    v = SGEMM.variant("gv")
    for params in ({"S": 1}, {"S": 4}, {"BM": 4, "MINB": 2, "S": 4}):
        p = v.default_params() | params
        rows = instruction_table(v.access(p, SGEMM.shape(m, n, k)))
        b_bytes = sum(r["bytes_requested"] for r in rows if r["name"].startswith(("ldg.128 B", "ldg B")))
        assert b_bytes == 4 * k * n * cdiv(m, p["BM"]), params


@pytest.mark.parametrize("dims", [(1, 8192, 8192), (4, 16384, 8192), (7, 4096, 4096), (300, 31, 1000), (7, 3000, 1000)])
def test_gv_reads_b_from_dram_once_per_row_block_where_the_l2_cannot_hold_it(dims):
    # Between two reads of one float of B the card reads all the rest of B (the row block is the
    # launch's slowest index): where B is more than the L2 (this card's; the H200's without a GPU), every
    # pass over it comes from DRAM; where it fits, once. A and C once.
    m, n, k = dims
    v = SGEMM.variant("gv")
    for params in ({}, {"BM": 4, "MINB": 2}):
        p = v.default_params() | params
        got = v.access(p, SGEMM.shape(m, n, k)).dram_compulsory_bytes
        passes = cdiv(m, p["BM"]) if 4 * k * n > l2_bytes() else 1
        assert got == 4 * (k * n * passes + m * k + m * n), params


def test_sx_by_hand_at_64x64x17():
    # BM=BN=64 BK=8 WM=32 WN=64 WNITER=2 STAGES=3: 2 warps, one tile; K=17: 3 k tiles, tile 0 starts
    # at k = -7 (only k = 0 of it is read). S=2: slice 0 takes tile 0, slice 1 tiles 1-2.
    one = _predict("sx", (64, 64, 17), S=1)
    two = _predict("sx", (64, 64, 17), S=2)
    # cp.async per warp and tile: 8 of A, 2 of B (float4): 3 tiles x 2 warps x 10 = 60 instructions;
    # requests only where a lane reads: in tile 0 each of a warp's 8 A copies has lanes at k = 0 (16),
    # of its B copies only warp 1's second (row 7, k = 0): 1; tiles 1 and 2 read everywhere: 40.
    for got in (one, two):
        assert got["smem_ldgsts_requests"] == 60 and got["gmem_ldgsts_requests"] == 16 + 1 + 40
    # S=2: the fixup reads 2 planes of 64 x 64 floats as float4s: 16 trips x 2 warps x 2 loads
    assert two["gmem_load_requests"] == 57 + 16 * 2 * 2
    assert two["gmem_load_sectors"] - one["gmem_load_sectors"] == 2 * 64 * 64 * 4 // 32
    # stores: each slice's tile through the slices (32 STG.128 of 16 sectors), the fixup's 32, 1 reset
    assert (one["gmem_store_requests"], one["gmem_store_sectors"]) == (32, 512)
    assert (two["gmem_store_requests"], two["gmem_store_sectors"]) == (2 * 32 + 32 + 1, 3 * 512 + 1)
    # shared: 32 fragment LDS.128 per warp and tile (8 k x 4) + 16 write-back LDS.128 per warp and
    # slice; stores 16 STS.128 per warp and slice (no shared flag: the barrier carries the answer)
    assert one["smem_load_requests"] == 3 * 2 * 32 + 2 * 16
    assert two["smem_load_requests"] == 3 * 2 * 32 + 2 * (2 * 16)
    assert two["smem_store_requests"] == 2 * (2 * 16)


@pytest.mark.parametrize("dims", [(512, 512, 512), (256, 128, 520)])
@pytest.mark.parametrize("S", [2, 3, 4])
def test_sx_split_invariants(dims, S):
    """Whole tiles and float4 rows: slicing K copies each k tile once, writes the tile S times into
    the workspace, and the fixup reads S planes and writes C once, plus one counter reset per tile."""
    m, n, k = dims
    tiles = cdiv(m, 64) * cdiv(n, 64)
    one = _predict("sx", dims, exhaustive=False, S=1)
    got = _predict("sx", dims, exhaustive=False, S=S)
    assert got["gmem_ldgsts_requests"] == one["gmem_ldgsts_requests"]
    assert got["smem_ldgsts_requests"] == one["smem_ldgsts_requests"]
    c_sectors = m * n * 4 // 32
    assert one["gmem_store_sectors"] == c_sectors
    assert got["gmem_store_sectors"] == (S + 1) * c_sectors + tiles
    assert got["gmem_load_sectors"] - one["gmem_load_sectors"] == S * c_sectors


@pytest.mark.parametrize("dims", [(16, 512, 256), (16, 256, 520), (9, 1024, 64)])
@pytest.mark.parametrize("S", [1, 4])
def test_sx_decode_tiles_read_b_once_and_a_once_per_tile_column(dims, S):
    """BM = 16 (splitk.SX_DECODE: one tile row for M <= 16): every k tile of B is copied once (4 K N
    bytes of 16-byte cp.async, N a multiple of BN), A's 16 x K once per tile column (4-byte copies of
    rows clamped to M - 1: 16 rows whatever M), the classes exact."""
    from gpulab.experiments.sgemm.splitk import SX_DECODE

    m, n, k = dims
    _predict("sx", dims, S=S, **SX_DECODE)
    v = SGEMM.variant("sx")
    rows = {r["name"].split(" ")[1]: r for r in instruction_table(v.access(v.default_params() | SX_DECODE | {"S": S},
                                                                           SGEMM.shape(*dims)))
            if r["name"].startswith("ldgsts")}
    assert rows["B"]["bytes_requested"] == 4 * k * n
    assert rows["A"]["bytes_requested"] == 4 * 16 * k * cdiv(n, SX_DECODE["BN"])


def test_sx_with_one_slice_is_v9():
    v9 = SGEMM.variant("v9")
    p = v9.default_params() | {"BN": 64, "WM": 32}
    for dims in ((129, 67, 33), (300, 388, 196)):
        shape = SGEMM.shape(*dims)
        assert predict(v9.access(p, shape)) == predict(SGEMM.variant("sx").access(p | {"S": 1}, shape))


def test_sx_slices_with_no_tile_still_write_zeros():
    # K = 8: one k tile for S = 4 slices; three slices copy nothing but each writes its tile of zeros
    got = _predict("sx", (64, 64, 8), S=4)
    assert got["smem_ldgsts_requests"] == 2 * 10
    assert got["gmem_store_requests"] == 4 * 32 + 32 + 1


def test_fidelity_plan_takes_shapes_and_params():
    specs = plan(["sgemm"], ["sx", "gv"], shapes=["3x1000x777", "64x64x17"], overrides={"S": (2, 4)})
    assert {(s.variant.name, s.params["S"], s.shape.values) for s in specs} == {
        (name, S, dims) for name in ("sx", "gv") for S in (2, 4) for dims in ((3, 1000, 777), (64, 64, 17))}
    with pytest.raises(GpulabError, match="param"):
        plan(["sgemm"], ["sk"], shapes=["64x64x17"], overrides={"S": (2,)})
    with pytest.raises(GpulabError, match="one experiment"):
        plan(None, None, shapes=["64x64x17"])


@pytest.mark.parametrize("dims, params, whole, splits", [
    ((1000, 1100, 130), {"RESIDENT": 1}, 132, 2),  # 144 tiles, a wave of 132: 12 tail tiles in 2 slices
    ((300, 388, 196), {}, 0, 3),  # 20 tiles, none whole: each in 3 slices of 13 k tiles
    ((129, 67, 33), {}, 3, 1),  # 3 k tiles: nothing to cut
])
def test_v13_classes_are_exact_on_its_plan(dims, params, whole, splits):
    """v13's model enumerates its blocks' kinds (whole, or slice z of a tail tile): exact against full
    enumeration on plans with whole tiles and slices, slices alone, and nothing cut."""
    p = SGEMM.variant("v13").default_params() | params
    plan_ = split_tail_plan(p, SGEMM.shape(*dims))
    assert (plan_.whole, plan_.splits) == (whole, splits)
    _predict("v13", dims, **params)


def test_v13_slices_write_and_read_back_their_partials_once():
    """Each slice block stores its 64 accumulators (64 x 4 B a thread, one 128-byte request a warp), the
    last of each tail tile reads the tile's `splits` slots back, and the tile is stored once, as a whole
    tile's is: against the same plan with nothing cut (S=1), only those counts move."""
    dims = (1000, 1100, 130)
    cut = _predict("v13", dims, exhaustive=False, RESIDENT=1)
    whole = _predict("v13", dims, exhaustive=False, RESIDENT=1, S=1)
    tail, splits, warps, regs = 12, 2, 4, 64
    assert cut["gmem_store_requests"] - whole["gmem_store_requests"] == tail * splits * warps * regs + tail
    assert cut["gmem_load_requests"] - whole["gmem_load_requests"] == tail * splits * warps * regs
    for key in ("smem_load_requests", "smem_store_requests", "gmem_ldgsts_requests"):
        assert cut[key] == whole[key], key  # each k tile copied and read once, each tile written back once


def test_v13_model_equals_the_h200_captures_in_profile_csv():
    """v13's whole-size captures on the H200 (results/h200/profile.csv: `gpulab compare sgemm v13 cublas`
    at 2048^3, 4096^3 and 8192^3 with S=8 and S=16, 2026-12-01), taken before the model existed: every
    quantity held exactly is the model's number, slices, fixups and all."""
    rows = [r for r in read_csv(Path(__file__).resolve().parents[1] / "results" / "h200" / "profile.csv")
            if r["experiment"] == "sgemm" and r["variant"] == "v13"]
    assert len(rows) >= 4
    exact = [q for q in Q.COUNTED if q.fidelity and q.judged in Q.HELD_EXACTLY]
    for r in rows:
        params = {k: int(v) for k, v in (kv.split("=") for kv in r["params"].split())}
        spec = make_spec("sgemm", "v13", params, f'{r["m"]}x{r["n"]}x{r["k"]}')
        predicted, note = predicted_counters(spec)
        assert predicted is not None, note
        for q in exact:
            assert Q.predicted_value(q, predicted) == r[f"ncu_{q.key}"], (spec.label, q.key)


@pytest.mark.parametrize("seed", range(4))
def test_v13_grouped_id_ranges_are_the_rectangles_the_model_counts(seed):
    """v13's model counts its whole tiles (grouped ids [0, whole)) and its tail ([whole, tiles)) as
    rectangles of block-rows x block-columns: they hold exactly those ids, whatever the group size."""
    rng = np.random.default_rng(seed)
    for _ in range(10):
        M, N = (int(x) for x in rng.integers(1, 2500, 2))
        p = SGEMM.variant("v13").default_params() | {"GROUP_M": int(rng.choice([1, 4, 8, 16]))}
        g = RingGrid(p, SGEMM.shape(M, N, 64))
        cut = int(rng.integers(0, g.tiles + 1))
        for lo, hi in ((0, cut), (cut, g.tiles)):
            ids = sorted(int(g.pid_of(bm, bn)) for r0, r1, c0, c1 in _grouped_rects(g, lo, hi)
                         for bm in range(r0, r1) for bn in range(c0, c1))
            assert ids == list(range(lo, hi)), (M, N, p["GROUP_M"], lo, hi)


def test_row_classes_are_classes_by_on_the_rows():
    """The ring's k tiles are grouped in numpy (row_classes) where they were grouped by tuples of each
    row (classes_by): the same classes, representatives and counts, in the same order."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        n, kinds = int(rng.integers(1, 60)), int(rng.integers(1, 4))
        runs = rng.integers(0, 2, size=(n, kinds)).astype(bool)
        first = rng.integers(0, 2, size=(n, kinds)).astype(bool)
        mod = 32 * rng.integers(0, 4, size=(n, kinds))
        assert row_classes(runs, first, mod) == classes_by([tuple(map(tuple, r)) for r in zip(runs, first, mod)])
