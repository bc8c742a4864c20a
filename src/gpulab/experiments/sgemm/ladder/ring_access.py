"""Access models of the rungs on v9's cp.async ring (v9, v10, v11), and the ring's geometry and
work that the split-K kernels built on it (sx, v13: gpulab.experiments.sgemm.splitk.access) reuse.
Conventions as gpulab.experiments.sgemm.ladder.access."""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.experiments.sgemm.ladder.access import F32, Tiles, slices_writeback, warp_lane, work
from gpulab.model.predict import Instruction, KernelAccess, Loop, every, same


# -- v9: cp.async ---------------------------------------------------------------------------------


def row_classes(*columns: np.ndarray) -> tuple[tuple[int, int], ...]:
    """classes_by over the rows of `columns` (arrays of one length, each 1- or 2-D): indices whose
    rows are equal in every column form a class, in order of first occurrence. The same classes as
    classes_by on tuples of the rows, in numpy: a ring over a long K has thousands of k tiles, each
    with a row per kind of block."""
    rows = np.concatenate([np.asarray(c).reshape(len(c), -1).astype(np.int64) for c in columns], axis=1)
    _, first, count = np.unique(rows, axis=0, return_index=True, return_counts=True)
    order = np.argsort(first)
    return tuple((int(f), int(n)) for f, n in zip(first[order], count[order]))


def classes_by(keys) -> tuple[tuple[int, int], ...]:
    """Classes of range(len(keys)) that group the indices with equal keys (one key per index, any
    hashable): representative the first index of each group, multiplicity the group's size. For
    index maps that are no plain stride (v9's grouped block order, its ring of stages)."""
    first: dict = {}
    count: dict = {}
    for i, key in enumerate(keys):
        first.setdefault(key, i)
        count[key] = count.get(key, 0) + 1
    return tuple((first[k], count[k]) for k in first)


def v9_access(params: Params, shape: Shape) -> KernelAccess:
    """v9_cp_async.cu: a 1D grid of grid_m x grid_n blocks in groups of GROUP_M block-rows; block
    (bm, bn) computes rows [row0, row0+BM) x columns [col0, col0+BN) and stores rows >= row_lo = bm*BM,
    columns >= col_lo = bn*BN. With M >= BM and N >= BN (FAST) edge blocks move inward (row0 =
    min(row_lo, M-BM), ...); else row0 = row_lo, col0 = col_lo and every copy is checked.

    Tile j (k0 = k_first + j*BK, k_first = K % BK - BK when K is ragged, else 0) is copied once
    (prologue or main loop) into ring slot j % STAGES: per thread A_COPIES 4-byte cp.async.ca of A
    (lane: k = tid & 7, row = tid >> 3, copy l a pass of THREADS/8 rows or 8 k further; landing
    transposed in As[k][row] of the padded As[BK][BM+4]) and B_COPIES cp.async of B (16-byte .cg
    per float4 when N % 4 == 0, else 4-byte .ca per float; idx = tid + l*THREADS, row idx /
    B_PER_ROW, column idx % B_PER_ROW). A copy outside 0 <= k < K (only tile 0 has one, when K is
    ragged) has src-size 0: it reads nothing, points at the matrix's first element and zero-fills;
    the checked path clamps rows of A to M-1 and columns of B past N (to col0 on the float4 path,
    N-1 on the other). Every lane issues every copy (no @P guard: the in-range flag is LDGSTS's
    zero-fill operand). Per tile t: BK x (WM/16 + WNITER) LDS.128 fragments from slot t % STAGES, as
    v6-v8. Write-back through the per-warp slices as v7 (`slices_writeback`), the guard being
    row_lo <= row < M and col_lo <= col < N.

    Assumes (SASS of NVRTC 13.5 sm_90, and of 13.0 on the H200 per its source page, at the default
    and the tuned configs of results/h200/tuned.json:
    BM=64, BN=64|128, WM=32|64, STAGES=2|3): A_COPIES LDGSTS.E and B_COPIES LDGSTS.E.BYPASS.128 or
    LDGSTS.E per issued tile, none predicated; the epilogue's LDS and STG predicated by the guard;
    the `@!PT LDS RZ, [RZ]` the compiler puts before LDGSTS never execute.
    """
    g = RingGrid(params, shape)
    w = ring_work(g, slices=1)
    out = ring_tiles(g, w) + ring_writeback(g, w)
    return KernelAccess(grid=(g.tiles, 1, 1), block=(g.T, 1, 1), instructions=tuple(out), **work(g.M, g.N, g.K))


class RingGrid:
    """v9's geometry, shared by every kernel built on its ring (v9-v11, sx, v13): the grouped order of
    its grid_m x grid_n tiles of C, where a tile's block reads and writes (edge tiles moved inward on
    the FAST path, M >= BM and N >= BN), its copies per k tile, and what a block's counts can depend
    on: its origin modulo 128 bytes and whether it is an edge block (moved inward, or cut by M / N),
    by block-row (A, C's rows) and block-column (B, C's columns)."""

    def __init__(self, params: Params, shape: Shape):
        self.params, self.shape = params, shape
        self.BM, self.BN, self.BK = params["BM"], params["BN"], params["BK"]
        self.WM, self.WN, self.WNITER = params["WM"], params["WN"], params["WNITER"]
        self.STAGES, self.GROUP_M = params["STAGES"], params["GROUP_M"]
        self.M, self.N, self.K = M, N, K = shape["M"], shape["N"], shape["K"]
        self.T = 32 * (self.BM // self.WM) * (self.BN // self.WN)
        self.as_ld = self.BM + 4
        self.tile_bytes = F32 * (self.BK * self.as_ld + self.BK * self.BN)
        self.vec = N % 4 == 0  # and B, C 16-byte aligned: cudaMalloc bases are
        self.fast = M >= self.BM and N >= self.BN
        self.grid_m, self.grid_n = cdiv(M, self.BM), cdiv(N, self.BN)
        self.tiles = self.grid_m * self.grid_n
        self.ktiles = cdiv(K, self.BK)
        self.k_first = K % self.BK - self.BK if K % self.BK else 0
        self.a_copies = self.BM * self.BK // self.T
        self.per_row, self.bw = (self.BN // 4, 4) if self.vec else (self.BN, 1)
        self.b_copies = self.BK * self.BN // (4 if self.vec else 1) // self.T
        bms, bns = np.arange(self.grid_m, dtype=np.int64), np.arange(self.grid_n, dtype=np.int64)
        self.row_los, self.col_los = bms * self.BM, bns * self.BN
        row0s, col0s = ((np.minimum(self.row_los, M - self.BM), np.minimum(self.col_los, N - self.BN)) if self.fast
                        else (self.row_los, self.col_los))
        a_edge = (row0s != self.row_los) | (row0s + self.BM > M)
        b_edge = (col0s != self.col_los) | (col0s + self.BN > N)
        # one key per block-row / block-column: equal keys, equal counts
        self.a_row_keys = list(zip((F32 * row0s * K) % 128, a_edge, np.where(a_edge, row0s, -1)))
        self.b_col_keys = list(zip((F32 * col0s) % 128, b_edge, np.where(b_edge, col0s, -1)))
        self.c_row_keys = list(zip((F32 * row0s * N) % 128, np.where(a_edge, row0s, -1)))
        self.c_col_keys = list(zip(col0s % 32, np.where(b_edge, col0s, -1)))

    def bm_bn(self, pid):
        """The tile (block-row, block-column) of grouped id `pid`."""
        per_group = self.GROUP_M * self.grid_n
        first_m = (pid // per_group) * self.GROUP_M
        rows = np.minimum(self.grid_m - first_m, self.GROUP_M)
        return first_m + (pid % per_group) % rows, (pid % per_group) // rows

    def pid_of(self, bm, bn):
        """The inverse of bm_bn."""
        first_m = bm - bm % self.GROUP_M
        return first_m * self.grid_n + bn * min(self.grid_m - first_m, self.GROUP_M) + bm - first_m

    def origin(self, pid):
        """(row0, col0, row_lo, col_lo) of tile `pid`: where its block reads, and what it stores."""
        bm, bn = self.bm_bn(pid)
        row_lo, col_lo = bm * self.BM, bn * self.BN
        if self.fast:
            return np.minimum(row_lo, self.M - self.BM), np.minimum(col_lo, self.N - self.BN), row_lo, col_lo
        return row_lo, col_lo, row_lo, col_lo

    def slot(self, step):
        return (step % self.STAGES) * self.tile_bytes

    def by_block(self, rows, cols, slices: int) -> dict:
        """Block classes from classes of block-rows and of block-columns: a block's row origin depends
        on its block-row alone and its column origin on its block-column, so the classes are worked
        out over the grid_m block-rows and grid_n block-columns and combined (every pair is one block,
        grouped id pid_of(bm, bn)): never one entry per block, whose number grows as M x N (134
        million at 1048576^3). Each of the `slices` slices (blockIdx.y) is its own class along y: its
        tiles and its workspace plane are its own."""
        return {"x": tuple((int(self.pid_of(bm, bn)), m * n) for bm, m in rows for bn, n in cols), "y": every(slices)}


@dataclasses.dataclass(frozen=True)
class RingWork:
    """Who runs what on a ring kernel's grid: a block's kind is its range of k tiles, kind k holding
    [first[k], first[k] + count[k]); `kind(i)` and `pid(i)` (the grouped tile) are functions of the
    block index; a, b, c, smem are the block classes of A's copies, B's copies, the write-back and
    the shared fragment loads (a class never mixes kinds)."""

    first: np.ndarray
    count: np.ndarray
    kind: Callable
    pid: Callable
    a: dict
    b: dict
    c: dict
    smem: dict


def ring_tiles(g: RingGrid, w: RingWork) -> list[Instruction]:
    """The ring's work on each of a block's k tiles (v9_access says how): A's and B's cp.async copies
    into the tile's slot and the fragments' LDS.128 from it, k tile j of kind k being tile first[k] + j
    of K, run where j < count[k]."""
    BK, BN, T, M, N, K = g.BK, g.BN, g.T, g.M, g.N, g.K
    t = Tiles(g.params, g.shape, T)
    wm_, wn_, lr_, lc_ = warp_lane(t)
    A, B = t.base["A"], t.base["B"]
    most = int(w.count.max())
    local = np.arange(most)
    steps = w.first[None, :] + local[:, None]  # [local tile, kind] -> the tile of K
    runs = local[:, None] < w.count[None, :]  # whether kind k has a local tile j

    # the copies' global addresses: tile 0 alone (its k may start below 0), the rest by k0 mod 128
    # bytes; the ring slot by the local tile; each in every kind, with whether the kind runs it
    a_tiles = Loop("j", most, row_classes(runs, steps == 0, (F32 * BK * steps) % 128))
    b_tiles = Loop("j", most, row_classes(runs, steps == 0, (F32 * BK * N * steps) % 128))
    smem_tiles = Loop("t", most, row_classes(runs, g.slot(local) % 128))

    def tile_of(i):  # the tile of K that local tile j of this block is
        return w.first[w.kind(i)] + i.j

    def has_tile(i, name="j"):
        return getattr(i, name) < w.count[w.kind(i)]

    def a_row_k(i):
        rows_per_pass = T // 8
        row = g.origin(w.pid(i))[0] + (i.tid >> 3) + (i.l * rows_per_pass) % g.BM
        k = g.k_first + tile_of(i) * BK + (i.tid & 7) + 8 * ((i.l * rows_per_pass) // g.BM)
        return row, k

    def in_k(k):  # a copy whose k lies outside [0, K) reads nothing and zero-fills (src-size 0)
        return (k >= 0) & (k < K)

    def a_src(i):
        row, k = a_row_k(i)
        return np.where(in_k(k), A + F32 * (np.minimum(row, M - 1) * K + k), A)

    def b_rc(i):
        col0 = g.origin(w.pid(i))[1]
        col_b = col0 + (i.tid % g.per_row) * g.bw
        r = g.k_first + tile_of(i) * BK + i.tid // g.per_row + (i.l * T) // g.per_row
        c = col_b + ((i.l * T) % g.per_row) * g.bw
        c = np.where(c < N, c, col_b - col_b % BN if g.vec else N - 1)
        return r, c

    def b_src(i):
        r, c = b_rc(i)
        return np.where(in_k(r), B + F32 * (r * N + c), B)

    k_loop = Loop("k", BK, every(BK))
    return [
        Instruction("ldgsts A -> As[k][row] (cp.async.ca 4 B)", "global", "ldgsts", F32,
                    address=a_src, reads=lambda i: in_k(a_row_k(i)[1]), active=has_tile,
                    loops=(a_tiles, Loop("l", g.a_copies, every(g.a_copies))), blocks=w.a),
        Instruction("ldgsts B -> Bs[r][c] " + ("(cp.async.cg 16 B)" if g.vec else "(cp.async.ca 4 B, scalar path)"),
                    "global", "ldgsts", 16 if g.vec else F32,
                    address=b_src, reads=lambda i: in_k(b_rc(i)[0]), active=has_tile,
                    loops=(b_tiles, Loop("l", g.b_copies, every(g.b_copies))), blocks=w.b),
        # the main loop's fragments (v6-v8's warp tiling, zig-zag lanes)
        Instruction("lds.128 As[k][a fragment]", "shared", "load", 16,
                    address=lambda i: g.slot(i.t) + F32 * (i.k * g.as_ld + wm_(i) + 16 * i.f + 4 * lr_(i)),
                    active=lambda i: has_tile(i, "t"),
                    loops=(smem_tiles, k_loop, Loop("f", g.WM // 16, every(g.WM // 16))), blocks=w.smem),
        Instruction("lds.128 Bs[k][b fragment]", "shared", "load", 16,
                    address=lambda i: g.slot(i.t) + F32 * (BK * g.as_ld + i.k * BN + wn_(i) + 32 * i.g + 4 * lc_(i)),
                    active=lambda i: has_tile(i, "t"),
                    loops=(smem_tiles, k_loop, Loop("g", g.WNITER, every(g.WNITER))), blocks=w.smem),
    ]


def ring_writeback(g: RingGrid, w: RingWork, dst=None, writes=None) -> list[Instruction]:
    """v9's write-back of a block's tile through the per-warp slices (v7's), guarded by the rows and
    columns it stores (row_lo <= row < M, col_lo <= col < N); `dst(i)`: the matrix written (C unless
    given); `writes(i)`: the blocks that run it (all unless given)."""
    t = Tiles(g.params, g.shape, g.T)

    def stored(i, row, col):
        _, _, row_lo, col_lo = g.origin(w.pid(i))
        return (row >= row_lo) & (row < g.M) & (col >= col_lo) & (col < g.N)

    frags = (Loop("f", g.WM // 16, every(g.WM // 16)), Loop("g", g.WNITER, every(g.WNITER)))
    return slices_writeback(t, frags, g.vec, origin=lambda i: g.origin(w.pid(i))[:2], stored=stored,
                            c_blocks=w.c, smem_blocks=w.smem, dst=dst, writes=writes)


def ring_work(g: RingGrid, slices: int) -> RingWork:
    """Who runs what on v9's grid with K cut into `slices` slices by blockIdx.y, as sx_split_k.cu cuts
    it: slice z runs v9's ring over the k tiles [z*T/S, (z+1)*T/S) of the T = ceil(K/BK) (what it
    writes, and the fixup, are sx's: gpulab.experiments.sgemm.splitk.access.sx_access). slices=1 is
    v9 exactly (grid.y = 1)."""
    S = slices
    # slice z's k tiles: [first[z], first[z] + count[z])
    first = np.array([z * g.ktiles // S for z in range(S)], dtype=np.int64)
    count = np.array([(z + 1) * g.ktiles // S for z in range(S)], dtype=np.int64) - first
    return RingWork(first, count, kind=lambda i: i.by, pid=lambda i: i.bx,
                    a=g.by_block(classes_by(g.a_row_keys), same(g.grid_n), S),
                    b=g.by_block(same(g.grid_m), classes_by(g.b_col_keys), S),
                    c=g.by_block(classes_by(g.c_row_keys), classes_by(g.c_col_keys), S),
                    smem={"x": same(g.tiles), "y": every(S)})


def v10_access(params: Params, shape: Shape) -> KernelAccess:
    """v10_fragment_pipeline.cu: v9's accesses, instruction for instruction. Tile j is still copied
    once into ring slot j % STAGES with v9's copies (the prologue now fills all STAGES slots and tile
    t+STAGES is issued at the end of tile t, into slot t: the order changes, not the addresses), each
    tile's BK x (WM/16 + WNITER) LDS.128 fragments are read once from its slot (k-step k+1's while
    k-step k computes), and the write-back is v9's; so the model is v9's."""
    return v9_access(params, shape)


def v11_access(params: Params, shape: Shape) -> KernelAccess:
    """v11_register_banks.cu: v9's tile loop (cp_async_ring.cuh's ring_gemm_tile), copies, fragment
    loads and write-back; only the order of the FFMAs between the loads changes. So v9's model."""
    return v9_access(params, shape)
