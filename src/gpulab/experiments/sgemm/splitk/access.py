"""Access models of the kernels that split K (see gpulab.experiments.sgemm.splitk.launch): sx on v9's
ring with the ordered fixup, sk's sliced k groups inside a block, and v13's whole tiles and split
tail. Conventions as gpulab.experiments.sgemm.ladder.access."""

from __future__ import annotations

from typing import Callable

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.experiments.sgemm.ladder.access import F32, Tiles, work
from gpulab.experiments.sgemm.ladder.ring_access import (
    RingGrid, RingWork, classes_by, ring_tiles, ring_work, ring_writeback,
)
from gpulab.experiments.sgemm.split_workspace import last_slice, last_to_arrive, split_bases
from gpulab.model.predict import Classes, Instruction, KernelAccess, Loop, buffers, every, ragged, same, shifted


def _ring_fixup(t: Tiles, S: int, T: int, vec: bool, bases: dict, bm_bn: Callable, grid_n: int,
                tile_classes: Classes) -> list[Instruction]:
    """sx_split_k.cu after its slices: last_to_arrive, then the last block at tile (bm, bn) adds the
    S planes over the tile's own rows [row_lo, row_lo + rows) and columns: element e = tid + q*T
    (a rolled loop: `#pragma unroll 1`, so each trip is one warp instruction of each load) is a float4
    (N % 4 == 0: LDG.128 .STRONG.GPU of each plane, __ldcg, and one STG.128 of C) or a float (LDG
    and STG), row e / per_row. `tile_classes`: block classes by the tile's rows and columns."""
    BM, BN, M, N = t.BM, t.BN, t.M, t.N
    blocks = cdiv(M, BM) * grid_n
    plane = M * N
    width = 4 if vec else 1

    def own(i):  # (row_lo, col_lo, rows, elements per row) of the block's tile
        bm, bn = bm_bn(i.bx)
        row_lo, col_lo = bm * BM, bn * BN
        return row_lo, col_lo, np.minimum(BM, M - row_lo), np.minimum(BN, N - col_lo) // width

    def e_(i):
        return i.tid + i.q * T

    def at(i):  # the float index of element e in a plane of C
        row_lo, col_lo, _, per_row = own(i)
        return (row_lo + e_(i) // per_row) * N + col_lo + width * (e_(i) % per_row)

    def live(i):
        _, _, rows, per_row = own(i)
        return (e_(i) < rows * per_row) & (i.by == S - 1)

    def counter(i):  # the tile's arrival counter: counters[bm * grid_n + bn]
        bm, bn = bm_bn(i.bx)
        return bases["counters"] + F32 * (bm * grid_n + bn)

    trips = cdiv(BM * (BN // width), T)
    fix = {"x": tile_classes, "y": last_slice(S)}
    loops = (Loop("q", trips, every(trips)),)
    kind = ".128" if vec else ""
    return last_to_arrive(S, {"x": same(blocks), "y": same(S)}, counter) + [
        Instruction(f"ldg{kind} work[p][e] (fixup, __ldcg)", "global", "load", F32 * width,
                    address=lambda i: bases["W"] + F32 * (i.p * plane + at(i)), active=live,
                    loops=loops + (Loop("p", S, every(S)),), blocks=fix),
        Instruction(f"stg{kind} C[e] (fixup)", "global", "store", F32 * width,
                    address=lambda i: bases["C"] + F32 * at(i), active=live, loops=loops, blocks=fix),
    ]


def sx_access(params: Params, shape: Shape) -> KernelAccess:
    """sx_split_k.cu: v9's ring, copies, fragments and write-back in each of S slices of K
    (`ring_work`), the partial tiles into the workspace, and the ordered fixup (`_ring_fixup`).

    Assumes (SASS of NVRTC 13.5 sm_90 at the default config, S = 4): per slice and tile v9's
    LDGSTS and LDS.128; the slice's tiles start on the general copy path only for tile 0 of K (k0 <
    0), as v9's; the write-back's STS.128 / guarded LDS.128 + STG.128 as v9's; then ATOMG, @P STG,
    BAR.RED.OR and the rolled fixup loop of S LDG.128.STRONG.GPU (LDG.STRONG.GPU) + 1 STG.128
    (STG). The `@!PT LDS RZ, [RZ]` before the fences never execute. A slice with no k tile (S >
    ceil(K/BK)) copies nothing and writes a tile of zeros.

    Not exact on the H200: the global-load sectors where the block is smaller than a tile (M < BM:
    the checked path), 40x100x250 S=2: 9,759 -> 10,509. (Until split_k.cuh's flag left shared memory,
    the ring started 16 bytes into a 128-byte line and every float4 shape had a quarter more of B's
    sectors than this: 512^3 S=4 655,360 -> 720,896; now exact there and at 300x388x196.)"""
    g = RingGrid(params, shape)
    S, M, N, K = params["S"], g.M, g.N, g.K
    w = ring_work(g, S)
    out = ring_tiles(g, w)
    # S > 1: slice z's partial tile goes to workspace plane z
    split = split_bases(M, N, K, S, g.tiles)
    out += ring_writeback(g, w, dst=None if S == 1 else (lambda i: split["W"] + F32 * M * N * i.by))
    if S > 1:
        out += _ring_fixup(Tiles(params, shape, g.T), S, g.T, g.vec, split, g.bm_bn, g.grid_n, g.by_block(
            classes_by(zip((F32 * g.row_los * N) % 128, np.minimum(g.BM, M - g.row_los))),
            classes_by(zip((F32 * g.col_los) % 128, np.minimum(g.BN, N - g.col_los))), S)["x"])
    return KernelAccess(grid=(g.tiles, S, 1), block=(g.T, 1, 1), instructions=tuple(out), **work(M, N, K))


def _tile_grid_classes(M: int, N: int, K: int, BM: int, BN: int) -> Classes:
    """Classes of a 1D row-major grid over BM x BN tiles (block b: tile row b // tiles_n, column
    b % tiles_n): tile rows by where A's and C's rows start modulo 128 bytes, tile columns by where
    B's and C's columns do, each tile cut by M or N (the last row or column) its own class; a class
    of blocks is a pair of them (never one entry per block: their number grows as M x N)."""
    tiles_m, tiles_n = cdiv(M, BM), cdiv(N, BN)
    r0, c0 = np.arange(tiles_m, dtype=np.int64) * BM, np.arange(tiles_n, dtype=np.int64) * BN
    rows = classes_by(zip((F32 * r0 * K) % 128, (F32 * r0 * N) % 128, np.where(r0 + BM > M, r0, -1)))
    cols = classes_by(zip((F32 * c0) % 128, np.where(c0 + BN > N, c0, -1)))
    return tuple((r * tiles_n + c, m * n) for r, m in rows for c, n in cols)


def sk_access(params: Params, shape: Shape) -> KernelAccess:
    """sk_sliced_k.cu: a 1D grid over the BM x BN tiles (row0 = (bx / tiles_n)*BM, col0 = (bx %
    tiles_n)*BN), THREADS = KS groups of (BM/TM) x (BN/TN) threads: g = tid / GROUP, t = tid % GROUP,
    tm = t / THREADS_N, tn = t % THREADS_N.

    Each of the ceil(K/BK) k tiles is loaded once (tile 0 before the loop, tile kt+1 during tile kt):
    element e = tid + l*THREADS of the A tile (row e / BK, k e % BK) and of the B tile (k e / BN,
    column e % BN), one LDG.32 each predicated on e < tile size and the element being inside the
    matrix; stored once (STS.32, predicated on e < tile size only: outside the matrix the value is
    the 0 of the ternary) into As[k][m] (padded, BM+1 floats a row) and Bs[k][n]. Per tile, k row kk =
    g + s*KS (s < BK/KS): TM scalar LDS of As[kk][tm + i*THREADS_M] and TN of Bs[kk][tn +
    j*THREADS_N]. KS = 1: TM x TN guarded STG.32 of C. KS > 1: TM x TN STS.32 of the partials at
    smem[(g*BM + tm + i*THREADS_M)*BN + tn + j*THREADS_N], then a rolled loop (`#pragma unroll 1`) over
    o = tid + q*THREADS < BM*BN: KS LDS of smem[s*BM*BN + o] and one STG of C[row0 + o/BN][col0 +
    o%BN], all inside the guard row < M and col < N; except where BM*BN == THREADS (TM*TN == KS):
    there ptxas software-pipelines the loop (partial s of the next trip is partial s+1 of this one)
    and issues the KS loads ahead of the guard, so every thread with o < BM*BN runs them (its one
    trip) and only the STG is guarded.

    Vector shared accesses where the compiler can prove alignment: with BN == TN (THREADS_N = 1) a
    thread's TN values of a Bs row and of a partial row are contiguous and TN-aligned, so ptxas reads
    Bs with LDS.64 / LDS.128 (TN = 2 / >= 4) and stores the partials with STS.64 / STS.128; As's rows
    are BM+1 floats (odd alignment) and stay scalar. Read off the SASS (NVRTC 13.5, sm_90) at the
    default, the SK_DEFAULTS configs and BN == TN configs with TN = 2, 4, 8; the loads ahead of the
    guard at BM*BN == THREADS in five configs (BN = 4, 8, 16, 32, 64; KS = 2, 4, 8), inside it in five
    with BM*BN != THREADS."""
    BM, BN, BK, TM, TN, KS = (params[k] for k in ("BM", "BN", "BK", "TM", "TN", "KS"))
    M, N, K = shape["M"], shape["N"], shape["K"]
    th_m, th_n = BM // TM, BN // TN
    group = th_m * th_n
    T = KS * group
    tiles_n, nk = cdiv(N, BN), cdiv(K, BK)
    blocks = cdiv(M, BM) * tiles_n
    base = buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N)
    a_tile, b_tile, a_stride = BM * BK, BK * BN, BM + 1
    As, Bs = 0, F32 * BK * a_stride
    grid_x = {"x": _tile_grid_classes(M, N, K, BM, BN)}
    smem_blocks = {"x": same(blocks)}
    k_edge = ragged(nk, BK, K)
    # a thread's TN values of a row of Bs (and of a partial row): one access of w floats where BN == TN
    w = min(4, TN) if th_n == 1 else 1
    b_loop = Loop("j", TN // w, every(TN // w))

    def row0(i):
        return (i.bx // tiles_n) * BM

    def col0(i):
        return (i.bx % tiles_n) * BN

    def g(i):
        return i.tid // group

    def tm(i):
        return (i.tid % group) // th_n

    def tn(i):
        return (i.tid % group) % th_n

    def ea(i):
        return i.tid + i.l * T

    def eb(i):
        return i.tid + i.l * T

    la, lb = Loop("l", cdiv(a_tile, T), every(cdiv(a_tile, T))), Loop("l", cdiv(b_tile, T), every(cdiv(b_tile, T)))
    out = [
        Instruction("ldg A[row0 + e/BK][k0 + e%BK]", "global", "load", F32,
                    address=lambda i: base["A"] + F32 * ((row0(i) + ea(i) // BK) * K + i.kt * BK + ea(i) % BK),
                    active=lambda i: (ea(i) < a_tile) & (row0(i) + ea(i) // BK < M) & (i.kt * BK + ea(i) % BK < K),
                    loops=(Loop("kt", nk, shifted(nk, F32 * BK, k_edge)), la), blocks=grid_x),
        Instruction("ldg B[k0 + e/BN][col0 + e%BN]", "global", "load", F32,
                    address=lambda i: base["B"] + F32 * ((i.kt * BK + eb(i) // BN) * N + col0(i) + eb(i) % BN),
                    active=lambda i: (eb(i) < b_tile) & (i.kt * BK + eb(i) // BN < K) & (col0(i) + eb(i) % BN < N),
                    loops=(Loop("kt", nk, shifted(nk, F32 * BK * N, k_edge)), lb), blocks=grid_x),
        Instruction("sts As[e%BK][e/BK] (transposed)", "shared", "store", F32,
                    address=lambda i: As + F32 * ((ea(i) % BK) * a_stride + ea(i) // BK),
                    active=lambda i: ea(i) < a_tile, loops=(Loop("kt", nk, same(nk)), la), blocks=smem_blocks),
        Instruction("sts Bs[e]", "shared", "store", F32, address=lambda i: Bs + F32 * eb(i),
                    active=lambda i: eb(i) < b_tile, loops=(Loop("kt", nk, same(nk)), lb), blocks=smem_blocks),
    ]
    steps = (Loop("kt", nk, same(nk)), Loop("s", BK // KS, every(BK // KS)))

    def kk(i):
        return g(i) + i.s * KS

    out += [
        Instruction("lds As[kk][tm + i*THREADS_M]", "shared", "load", F32,
                    address=lambda i: As + F32 * (kk(i) * a_stride + tm(i) + i.m * th_m),
                    loops=steps + (Loop("m", TM, every(TM)),), blocks=smem_blocks),
        Instruction(f"lds{'' if w == 1 else f'.{32 * w}'} Bs[kk][tn + j*THREADS_N]", "shared", "load", F32 * w,
                    address=lambda i: Bs + F32 * (kk(i) * BN + tn(i) + i.j * w * th_n),
                    loops=steps + (b_loop,), blocks=smem_blocks),
    ]
    frag = (Loop("m", TM, every(TM)), b_loop)
    if KS == 1:
        def r(i):
            return row0(i) + tm(i) + i.m * th_m

        def c(i):
            return col0(i) + tn(i) + i.j * th_n

        out.append(Instruction("stg C[r][c]", "global", "store", F32,
                               address=lambda i: base["C"] + F32 * (r(i) * N + c(i)),
                               active=lambda i: (r(i) < M) & (c(i) < N),
                               loops=(Loop("m", TM, every(TM)), Loop("j", TN, every(TN))), blocks=grid_x))
    else:
        def o(i):
            return i.tid + i.q * T

        def guard(i):
            return (o(i) < BM * BN) & (row0(i) + o(i) // BN < M) & (col0(i) + o(i) % BN < N)

        trips = cdiv(BM * BN, T)
        rolled = Loop("q", trips, every(trips))
        # BM*BN == THREADS (TM*TN == KS): partial s of trip q+1 is partial s+1 of trip q, and ptxas
        # pipelines the loop across trips (loads of the next trip issued in this one): the KS loads
        # leave the guard, and the loop's one trip runs them in every warp (33x20x100 at BM=16 BN=4
        # TM=1 TN=4 KS=4 on the H200: 2,040 LDS where the guarded count is 2,020)
        pipelined = BM * BN == T
        out += [
            Instruction(f"sts{'' if w == 1 else f'.{32 * w}'} partials[g][tm + i*THREADS_M][tn + j*THREADS_N]",
                        "shared", "store", F32 * w,
                        address=lambda i: F32 * ((g(i) * BM + tm(i) + i.m * th_m) * BN + tn(i) + i.j * w * th_n),
                        loops=frag, blocks=smem_blocks),
            Instruction("lds partials[s][o]", "shared", "load", F32,
                        address=lambda i: F32 * (i.p * BM * BN + o(i)),
                        active=(lambda i: o(i) < BM * BN) if pipelined else guard,
                        loops=(rolled, Loop("p", KS, every(KS))), blocks=grid_x),
            Instruction("stg C[row0 + o/BN][col0 + o%BN]", "global", "store", F32,
                        address=lambda i: base["C"] + F32 * ((row0(i) + o(i) // BN) * N + col0(i) + o(i) % BN),
                        active=guard, loops=(rolled,), blocks=grid_x),
        ]
    return KernelAccess(grid=(blocks, 1, 1), block=(T, 1, 1), instructions=tuple(out), **work(M, N, K))


def _classes_of(keys: list) -> np.ndarray:
    """One class id per index: equal keys, equal ids."""
    ids: dict = {}
    return np.array([ids.setdefault(k, len(ids)) for k in keys], dtype=np.int64)


def _grouped_rects(g: RingGrid, lo: int, hi: int) -> list[tuple[int, int, int, int]]:
    """The tiles of grouped ids [lo, hi) as rectangles (block-rows [r0, r1) x block-columns [c0, c1)):
    a run of whole groups is one; a group's part is a partial column, whole columns, a partial column
    (a group walks its columns, each down its GROUP_M rows)."""
    rects = []
    n, per = g.grid_n, g.GROUP_M * g.grid_n
    pid = lo
    while pid < hi:
        k = pid // per
        first_m = k * g.GROUP_M
        rows = min(g.grid_m - first_m, g.GROUP_M)
        start = k * per
        if pid == start and hi >= start + rows * n:  # whole groups, as many as fit
            groups = (hi - start) // per if hi < g.tiles else cdiv(g.grid_m - first_m, g.GROUP_M)
            r1 = min(g.grid_m, first_m + groups * g.GROUP_M)
            rects.append((first_m, r1, 0, n))
            pid = min(hi, r1 * n)
            continue
        a, b = pid - start, min(hi, start + rows * n) - start
        ca, ra, cb, rb = a // rows, a % rows, b // rows, b % rows
        if ca == cb:
            rects.append((first_m + ra, first_m + rb, ca, ca + 1))
        else:
            if ra:
                rects.append((first_m + ra, first_m + rows, ca, ca + 1))
                ca += 1
            if cb > ca:
                rects.append((first_m, first_m + rows, ca, cb))
            if rb:
                rects.append((first_m, first_m + rb, cb, cb + 1))
        pid = start + b
    return rects


def _rect_classes(rects, row_class: np.ndarray, col_class: np.ndarray) -> list[tuple[int, int, int]]:
    """(block-row, block-column, how many) standing for every (row class, column class) pair in the
    rectangles: the first such tile met, and the pair's number of tiles over all of them."""
    found: dict = {}
    for r0, r1, c0, c1 in rects:
        if r0 >= r1 or c0 >= c1:
            continue
        rc, r_first, r_n = np.unique(row_class[r0:r1], return_index=True, return_counts=True)
        cc, c_first, c_n = np.unique(col_class[c0:c1], return_index=True, return_counts=True)
        for R, rf, rn in zip(rc, r_first, r_n):
            for C, cf, cn in zip(cc, c_first, c_n):
                bm, bn, n = found.get((R, C), (r0 + int(rf), c0 + int(cf), 0))
                found[(R, C)] = (bm, bn, n + int(rn) * int(cn))
    return list(found.values())


def v13_access(params: Params, shape: Shape, whole: int, splits: int) -> KernelAccess:
    """v13_split_tail.cu on its host plan (splitk.launch.split_tail_plan: the first `whole` tiles in grouped
    order one block each, each of the other tail = tiles - whole cut into `splits` k slices). Block b
    < whole is v11's body on tile b: v9's ring over every k tile and v9's write-back into C. Block
    whole + u is slice z = u / tail of tile whole + u % tail: v9's ring over k tiles [z*T/splits,
    (z+1)*T/splits); its REGS accumulators to workspace slot u, thread-major (work[u][r][tid]: per r
    one STG of 4 bytes a lane, a warp's 128 contiguous bytes); split_k.cuh's last_to_arrive (thread 0's
    ATOMG, in no load or store counter, and in the last block the counter's reset, an STG); then the
    last block reads the tile's `splits` slots back (REGS LDG each, slice by slice) and stores the
    tile through v9's write-back. Which slice arrives last changes from run to run, its counts do not:
    slice splits-1 stands for it.

    A block class is a kind (whole, or slice z), a class of block-rows and a class of block-columns,
    counted over the rectangles the grouped order's id ranges make (_grouped_rects), so the model's
    cost grows with the block-rows and -columns, not with the blocks."""
    g = RingGrid(params, shape)
    M, N, K, T = g.M, g.N, g.K, g.T
    tail = g.tiles - whole
    regs = (g.WM // 16) * 4 * g.WNITER * 4  # a thread's accumulators (ACC_ROWS x ACC_COLS)
    # kind 0: a whole tile, every k tile; kind 1 + z: slice z of a tail tile
    first = np.array([0] + [z * g.ktiles // splits for z in range(splits)], dtype=np.int64)
    count = np.array([g.ktiles] + [(z + 1) * g.ktiles // splits for z in range(splits)], dtype=np.int64) - first
    last = splits  # the kind of the slice that stands for the last to arrive

    def kind(i):
        return np.where(i.bx < whole, 0, 1 + (i.bx - whole) // max(tail, 1))

    def pid(i):
        return np.where(i.bx < whole, i.bx, whole + (i.bx - whole) % max(tail, 1))

    blocks_n = whole + tail * splits
    # The block classes: a kind x a class of block-rows x a class of block-columns. The whole tiles
    # are the grouped ids [0, whole) and the tail's [whole, tiles), each a few rectangles of
    # (block-row, block-column), so a class's blocks are counted per rectangle, never listed.
    rows = _classes_of(list(zip(g.a_row_keys, g.c_row_keys)))
    cols = _classes_of(list(zip(g.b_col_keys, g.c_col_keys)))
    classes = [(int(g.pid_of(bm, bn)), n) for bm, bn, n in _rect_classes(_grouped_rects(g, 0, whole), rows, cols)]
    for bm, bn, n in _rect_classes(_grouped_rects(g, whole, g.tiles), rows, cols):
        u = int(g.pid_of(bm, bn)) - whole  # the tile's place in the tail: slice z is block whole + z*tail + u
        classes += [(whole + z * tail + u, n) for z in range(splits)]
    every_block = {"x": tuple(classes), "y": same(1)}
    w = RingWork(first, count, kind=kind, pid=pid, a=every_block, b=every_block, c=every_block, smem=every_block)
    base = buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N, W=F32 * max(1, tail * splits * g.BM * g.BN),
                   counters=4 * max(1, tail))

    def is_slice(i):
        return kind(i) > 0

    def is_last(i):
        return kind(i) == last

    out = ring_tiles(g, w)
    out += ring_writeback(g, w, writes=lambda i: kind(i) == 0)
    if splits > 1:
        def slot(i, u):  # work[u][r][tid]
            return base["W"] + F32 * ((u * regs + i.r) * T + i.tid)

        out += [
            Instruction("stg.cg work[u][r][tid] (the slice's partial tile)", "global", "store", F32,
                        address=lambda i: slot(i, i.bx - whole), active=is_slice,
                        loops=(Loop("r", regs, same(regs)),), blocks=every_block),
            Instruction("stg counter = 0 (thread 0, last block)", "global", "store", F32,
                        address=lambda i: base["counters"] + F32 * (pid(i) - whole),
                        active=lambda i: is_last(i) & (i.tid == 0), blocks=every_block),
            Instruction("ldg.cg work[slice p of the tile][r][tid] (fixup, __ldcg)", "global", "load", F32,
                        address=lambda i: slot(i, i.p * tail + pid(i) - whole), active=is_last,
                        loops=(Loop("p", splits, same(splits)), Loop("r", regs, same(regs))), blocks=every_block),
        ]
        out += ring_writeback(g, w, writes=is_last)
    return KernelAccess(grid=(blocks_n, 1, 1), block=(T, 1, 1), instructions=tuple(out), **work(M, N, K))
