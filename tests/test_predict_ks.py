"""The access model of gemm_bf16's ks (ks_stream_k_swap.cu: stream-K over 128 x TN tiles of C^T, one
wave of blocks, partials added by each split tile's fixup), on a CPU: the symmetry classes against
full enumeration, the TMA boxes against Bt's and A's bytes, every element of C stored once, the
partials against a schedule re-derived here from the kernel's owner / range_start (not the model's),
`gpulab predict` in a subprocess, and the traffic `gpulab best` reads from it (gpulab.jobs.cost)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest

from gpulab.arith import cdiv
from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16 import access_small, swap_stream_k
from gpulab.jobs.cost import Traffic, traffic_of
from gpulab.model.predict import check_launch, instruction_table, predict

EXP = get_experiment("gemm_bf16")
KS = EXP.variant("ks")
DECODE, RAGGED = (1, 4096, 4096), (7, 4097, 1000)


@pytest.fixture
def sms(monkeypatch):
    """The SMs ks sizes its wave for (swap_stream_k.ks_blocks): the H200's 132 unless a test says."""
    def set_count(n):
        monkeypatch.setattr(swap_stream_k, "sm_count", lambda: n)
    set_count(132)
    return set_count


def _model(dims, **over):
    p, s = KS.default_params() | over, EXP.shape(*dims)
    assert KS.constraints(p, s) is None
    model = KS.access(p, s)
    check_launch(model, KS.launch(p, s))
    return p, s, model


class Schedule:
    """ks's schedule written out block by block, as the kernel's loops run it: block b of G takes units
    [b U / G, (b + 1) U / G) of U = tiles x KT; a segment is its run of units inside one tile, whole
    where it is the tile's every unit."""

    def __init__(self, M, N, K, TN, G):
        self.tiles, KT = cdiv(M, TN) * cdiv(N, 128), cdiv(K, 64)
        U = self.tiles * KT
        self.segments = []  # (block, tile, whole)
        for b in range(G):
            u, end = b * U // G, (b + 1) * U // G
            while u < end:
                t = u // KT
                seg_end = min(end, (t + 1) * KT)
                self.segments.append((b, t, u == t * KT and seg_end == (t + 1) * KT))
                u = seg_end
        self.split_tiles = {t for _, t, whole in self.segments if not whole}
        self.partials = sum(not whole for _, _, whole in self.segments)


def _rows(model):
    return {r["name"]: r for r in instruction_table(model)}


def _named(rows, *words):
    return [r for name, r in rows.items() if all(w in name for w in words)]


# -- the classes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dims", [(1, 1, 1), DECODE, RAGGED, (17, 33, 65), (16, 31, 8), (9, 40, 777), (300, 388, 200),
                                  (130, 4097, 131)], ids=lambda d: "x".join(map(str, d)))
@pytest.mark.parametrize("over", [{}, {"TN": 8}, {"TN": 32, "BPS": 2, "STAGES": 4}, {"TN": 128, "STAGES": 6}],
                         ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()) or "default")
@pytest.mark.parametrize("count", [132, 7])
def test_ks_model_classes_are_exact(sms, dims, over, count):
    """Decode and ragged M, N, K (the staged pitch at K % 8 != 0); on 132 SMs and on 7, where a block
    runs many tiles, whole and split, of several classes (C rows starting at other offsets in a
    line, the tiles M and N cut)."""
    sms(count)
    _, _, model = _model(dims, **over)
    assert predict(model) == predict(model, exhaustive=True)


# -- the TMA boxes -----------------------------------------------------------------------------------
def test_ks_reads_bt_once_at_decode_and_a_once_per_tile_of_bt_rows(sms):
    """1 x 4096 x 4096, TN = 16: one token tile, so Bt (8192-byte rows: every 128-byte box row 4 whole
    sectors) is read once, N K 2 bytes; A's 16-row box once per each of the 32 tiles of Bt rows, its 15
    rows past M counted as whole box rows, as Nsight Compute counted them on the H200 (test_gemm_bf16's
    test_tma_bytes_are_what_nsight_compute_counted_on_the_h200): 16 rows x K x 2 bytes a tile."""
    _, _, model = _model(DECODE)
    got = predict(model)
    _, N, K = DECODE
    tiles, k_tiles = N // 128, K // 64
    assert got["tma_load_bytes"] == N * K * 2 + tiles * 16 * K * 2 == 37_748_736
    assert got["tma_load_requests"] == 2 * tiles * k_tiles  # a Bt box and an A box per unit
    assert got["gmma_requests"] == 8 * 4 * tiles * k_tiles  # 8 consumer warps, 4 k16 steps a unit
    assert got["gmem_load_requests"] - sum(r["requests"] for r in _named(_rows(model), "ldg")) == 0  # no other loads


def _box_sectors(rows: int, matrix_rows: int, pitch_bytes: int, k_tiles: int) -> int:
    """The H200's count, row by row: a box row inside the matrix counts the sectors its part inside K
    touches and, apart, those its part past K touches; a row past the matrix 4 a k-tile."""
    def sectors(a, b):
        return (b - 1) // 32 - a // 32 + 1 if b > a else 0

    total = 0
    for r in range(min(rows, matrix_rows)):
        for kt in range(k_tiles):
            start, row_end = r * pitch_bytes + 128 * kt, (r + 1) * pitch_bytes
            total += sectors(start, min(start + 128, row_end)) + sectors(max(start, row_end), start + 128)
    return total + 4 * k_tiles * max(0, rows - matrix_rows)


def test_ks_tma_bytes_at_a_ragged_shape(sms):
    """7 x 4097 x 1000 (TN = 16): rows of 2000 bytes (K % 8 == 0: read as given), 16 B off a sector
    at every odd row, the 16th k-tile holding 40 of its 64 k; 33 tiles of Bt rows, the last holding 1
    of its 128 rows; one token tile of 7 rows and 9 past M, read once per tile of Bt rows."""
    _, _, model = _model(RAGGED)
    M, N, K = RAGGED
    got = predict(model)
    expected = 32 * (_box_sectors(33 * 128, N, 2 * K, 16) + 33 * _box_sectors(16, M, 2 * K, 16))
    assert got["tma_load_bytes"] == expected
    assert got["tma_load_bytes"] >= 2 * (N * K + 33 * M * K)  # every byte of Bt once, of A once a tile
    assert got["tma_load_requests"] == 2 * 33 * 16


# -- C, the partials, the fixup ----------------------------------------------------------------------
def _addresses(model, instr):
    """Every active lane's address of `instr`, over every block and loop step (no classes)."""
    threads = math.prod(model.block)
    tid = np.arange(threads)[None, :]
    names = ["bx"] + [loop.name for loop in instr.loops]
    grids = np.meshgrid(*[np.arange(n) for n in [model.grid[0]] + [loop.trips for loop in instr.loops]], indexing="ij")
    zero = np.zeros((grids[0].size, 1), dtype=np.int64)
    i = SimpleNamespace(**{n: g.reshape(-1, 1) for n, g in zip(names, grids)}, by=zero, bz=zero, tid=tid, tx=tid,
                        ty=0 * tid, tz=0 * tid, lane=tid % 32, warp=tid // 32)
    shape = (zero.size, threads)
    return np.broadcast_to(instr.address(i), shape)[np.broadcast_to(instr.active(i), shape)]


@pytest.mark.parametrize("dims, over", [(DECODE, {}), (RAGGED, {}), ((17, 33, 65), {"TN": 8}), ((300, 388, 200), {"TN": 32}),
                                        ((130, 4097, 131), {"TN": 128, "STAGES": 6})], ids=str)
def test_ks_stores_every_element_of_c_once(sms, dims, over):
    """The C stores' addresses over every block, segment and accumulator: each element of C exactly
    once (whole tiles by their block, split tiles by their fixup), nothing past M or N."""
    if dims[0] == 300:
        sms(7)  # blocks of many tiles
    _, _, model = _model(dims, **over)
    (c_store,) = [i for i in model.instructions if i.name.startswith("stg C")]
    got = np.sort(_addresses(model, c_store))
    M, N, _ = dims
    assert np.array_equal(got, 4 * np.arange(M * N))
    assert _named(_rows(model), "stg C")[0]["bytes_requested"] == 4 * M * N


PARTIAL_SHAPES = [(DECODE, {}), (RAGGED, {}), ((16, 4096, 4096), {}), ((16, 57344, 8192), {"TN": 128, "STAGES": 6}),
                  ((128, 4096, 14336), {"TN": 128, "STAGES": 6}), ((300, 388, 200), {"TN": 8, "BPS": 2, "STAGES": 4}),
                  ((1000, 4097, 999), {"TN": 128, "STAGES": 6})]


@pytest.mark.parametrize("dims, over", PARTIAL_SHAPES, ids=str)
def test_ks_partials_follow_the_schedule(sms, dims, over):
    """Each segment that is not a whole tile writes one 128 x TN FP32 partial (whole lines: a warp's 32
    floats are one line); each split tile's fixup reads its contributors' partials, i.e. every partial
    once, and zeroes the tile's counter; C is stored once. Counted on the schedule of Schedule, not on
    the model's own."""
    p, s, model = _model(dims, **over)
    M, N, K = dims
    TN = p["TN"]
    sched = Schedule(M, N, K, TN, KS.launch(p, s).grid[0])
    partial = 128 * TN * 4
    rows = _rows(model)
    stores = _named(rows, "stg.strong.gpu work")  # none where every tile is whole (1000 x 4097 x 999)
    assert len(stores) == (sched.partials > 0)
    assert sum(r["bytes_requested"] for r in stores) == sched.partials * partial
    assert sum(r["sectors"] for r in stores) * 32 == sched.partials * partial
    loads = _named(rows, "ldg.strong.gpu work")
    assert sum(r["bytes_requested"] for r in loads) == sched.partials * partial
    assert sum(r["sectors"] for r in loads) * 32 == sched.partials * partial
    assert sum(r["requests"] for r in _named(rows, "counters")) == len(sched.split_tiles)
    got = predict(model)
    assert got["gmem_store_requested_bytes"] == 4 * M * N + sched.partials * partial + 4 * len(sched.split_tiles)
    assert got["gmem_load_requested_bytes"] == sched.partials * partial
    # the verdict: thread 0 stores it, every consumer thread (8 warps) loads it, once a split segment
    assert got["smem_store_requests"] == sched.partials
    assert got["smem_load_requests"] == 8 * sched.partials


def test_ks_figures_at_1x4096x4096(sms):
    """The napkin math of the kernel's header, as the model has it: 32 tiles of 64 k-tiles over 132
    blocks of 15-16 units, so no block holds a whole tile: 132 + 28 segments (28 blocks cross a tile's
    end), 160 partials of 8 KiB, 1.31 MB written and read back; C's 16 KiB stored once."""
    _, _, model = _model(DECODE)
    got = predict(model)
    assert Schedule(*DECODE, 16, 132).partials == 160
    assert got["gmem_load_requested_bytes"] == 160 * 8192
    assert got["gmem_store_requested_bytes"] == 160 * 8192 + 4 * 4096 + 4 * 32


# -- the command line and the cost model -------------------------------------------------------------
def test_gpulab_predict_runs_ks():
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "predict", "gemm_bf16", "ks", "--shape", "16x4096x4096"],
                       check=False, capture_output=True, text=True, env={**os.environ, "GPULAB_NO_GPU": "1"},
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "stg.strong.gpu work" in r.stdout


@pytest.mark.parametrize("dims", [(1, 6144, 4096), (16, 57344, 8192), (128, 4096, 14336)], ids=str)
def test_ks_traffic_for_the_cost_model(sms, dims):
    """gpulab best's L2 term (cost.traffic_of): a Traffic, within the lane budget and quickly; its L2
    bytes the TMA's and the warps' sectors, its workspace the partials and the counters' zeroes."""
    p = KS.default_params() | {"TN": 128, "STAGES": 6}
    s = EXP.shape(*dims)
    start = time.perf_counter()
    traffic = traffic_of(EXP, KS, tuple(p.items()), s)
    assert time.perf_counter() - start < 2.0
    assert isinstance(traffic, Traffic), traffic
    got = predict(KS.access(p, s))
    assert traffic.l2_bytes == got["tma_load_bytes"] + 32 * (got["gmem_load_sectors"] + got["gmem_store_sectors"])
    M, N, _ = dims
    assert traffic.workspace_bytes == got["gmem_store_requested_bytes"] - 4 * M * N
    sched = Schedule(*dims, 128, KS.launch(p, s).grid[0])
    assert traffic.workspace_bytes == sched.partials * 128 * 128 * 4 + 4 * len(sched.split_tiles)


def test_ks_reads_bt_again_where_the_l2_cannot_hold_it_between_passes(sms, monkeypatch):
    """At 32 tokens in 16-token tiles ks passes over Bt twice, each chunk of 64 k read by two units a
    k-tile row apart (KT units), which stream-K gives to blocks that reach them at different moments.
    Re-derived here unit by unit from range_start: where the card's blocks read more than the L2
    holds between the two reads, the second is DRAM's. At 32x3584x18944 that is every chunk at a 60
    MiB L2 (45 or 81 units apart, 106 MB and more between), so the DRAM floor is Bt twice (it ran
    97.7 us, as if so, where 32-token tiles ran 55.4: an H100, 2026-12-06); with an L2 of 1 GiB,
    none; in 32-token tiles (one pass), none."""
    M, N, K = 32, 3584, 18944
    s = EXP.shape(M, N, K)
    p = KS.default_params() | {"TN": 16, "STAGES": 6, "BPS": 1}
    G = KS.launch(p, s).grid[0]
    KT, m_tiles = cdiv(K, 64), cdiv(M, 16)
    U = m_tiles * cdiv(N, 128) * KT
    at = np.empty(U, dtype=np.int64)
    for b in range(G):
        first, end = b * U // G, (b + 1) * U // G
        at[first:end] = np.arange(end - first)
    chunk, unit = 128 * 64 * 2, (128 + 16) * 64 * 2

    def expected(l2):
        return sum(chunk for u in range(U) if (u // KT) % m_tiles and abs(at[u] - at[u - KT]) * G * unit > l2)

    sched = access_small._KsSchedule(M, N, K, 16, G)
    assert access_small.ks_rereads(sched, 16, 60 * 2**20) == expected(60 * 2**20) == 2 * N * K
    assert access_small.ks_rereads(sched, 16, 2**30) == expected(2**30) == 0
    monkeypatch.setattr(access_small, "l2_bytes", lambda: 60 * 2**20)
    compulsory = 2 * (M * K + N * K) + 4 * M * N
    assert KS.access(p, s).dram_compulsory_bytes == compulsory + 2 * N * K
    assert KS.access(p | {"TN": 32}, s).dram_compulsory_bytes == compulsory
