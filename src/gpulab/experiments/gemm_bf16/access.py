"""Access models of the gemm_bf16 rungs: what each kernel asks of memory, for `gpulab predict`.

One `Instruction` per SASS memory instruction (nvdisasm of NVRTC 13.5's sm_90 cubins at the default
params), with the index math of the `.cu` file. A is M x K and Bt is N x K, BF16 (2 bytes), C is
M x N FP32, all row-major, so element (r, k) of A is at base + 2 * (r * K + k). ldmatrix (SASS LDSM)
is declared as kind 'ldsm': one lane per 16-byte row of an 8x8 matrix (gpulab.model.warp.ldsm_counts).

What the counts depend on and the SASS does not show: the order in which a wmma load's LDSM lanes
name their rows (t0) is the compiler's; the counts depend only on which 8 rows each matrix (each
8-lane phase) reads, which the fragment fixes: 8 consecutive rows at one half of the 16 k. Likewise
wmma's FP32 store to shared memory is 4 STS.64 per 16x16 fragment, lane l holding rows l/4 and
l/4 + 8 at columns 2*(l%4) (+8 for the second n8 half): the mma.sync accumulator layout.
"""

from __future__ import annotations

import math

import numpy as np

from gpulab.arith import cdiv
from gpulab.errors import NotModelled
from gpulab.experiments.base import Params, Shape
from gpulab.experiments.gemm_bf16.edge import t4_main_dims
from gpulab.experiments.gemm_bf16.staging import row_pitch
from gpulab.model.predict import (
    LDSM, Instruction, KernelAccess, Loop, buffers, every, periodic, ragged, same, shifted,
)

BF16, F32 = 2, 4


def _work(M: int, N: int, K: int) -> dict:
    # 2 flops per multiply-add; A and Bt read once (BF16) and C written once (FP32) is the DRAM floor.
    return {"flops": 2.0 * M * N * K, "dram_compulsory_bytes": BF16 * (M * K + N * K) + F32 * M * N}


def _swizzled(rows: int, r, c):
    """t1's shared offset of 16-byte chunk c (8 k) of tile row r: 128-byte row-panels of 64 k, the
    chunk XOR-swizzled by the row's low 3 bits (swz in t1_mma_ldmatrix.cu)."""
    return (((c >> 3) * rows + r) * 8 + ((c & 7) ^ (r & 7))) * 16


def _by_key(keys) -> tuple[tuple[int, int], ...]:
    """Classes that group the indices with equal keys: (first index, how many) per distinct key."""
    _, first, counts = np.unique(np.asarray(keys), axis=0, return_index=True, return_counts=True)
    order = np.argsort(first)
    return tuple((int(first[i]), int(counts[i])) for i in order)


def _per_element_loads(name, src, grow, k, rows: int, K: int, loops, blocks) -> Instruction:
    """The copy path of both rungs when K % 8 != 0 (rows not 16-byte aligned): the 8 elements of a
    chunk one LDG.U16 each (loop e), guarded by the matrix row grow(i) < rows and k(i) + e < K."""
    return Instruction(
        f"ldg.u16 {name}[row][k+e] (K % 8 != 0)", "global", "load", BF16,
        address=lambda i: src + BF16 * (np.minimum(grow(i), rows - 1) * K + k(i) + i.e),
        active=lambda i: (grow(i) < rows) & (k(i) + i.e < K),
        loops=(*loops, Loop("e", 8, every(8))), blocks=blocks)


class _Grouped:
    """The grouped rasterization of a 1D grid (hopper.cuh grouped_tile, t1's own copy): GROUP_M
    block-rows at a time, column-major inside; block pid computes the tile (bm, bn)."""

    def __init__(self, M: int, N: int, BM: int, BN: int, group_m: int):
        self.M, self.N, self.BM, self.BN, self.group_m = M, N, BM, BN, group_m
        self.grid_m, self.grid_n = cdiv(M, BM), cdiv(N, BN)
        self.blocks = self.grid_m * self.grid_n

    def bm_bn(self, pid):
        per_group = self.group_m * self.grid_n
        first_m = (pid // per_group) * self.group_m
        rows = np.minimum(self.grid_m - first_m, self.group_m)
        return first_m + (pid % per_group) % rows, (pid % per_group) // rows

    def pid_of(self, bm: int, bn: int) -> int:  # the inverse of bm_bn
        first_m = bm - bm % self.group_m
        return first_m * self.grid_n + bn * min(self.grid_m - first_m, self.group_m) + bm - first_m

    def row_classes(self, stride_bytes: int):
        """Block-rows grouped by their origin's offset mod 128 bytes (stride_bytes per block-row) and
        whether M cuts them."""
        bms = np.arange(self.grid_m, dtype=np.int64)
        return _by_key(np.stack([(stride_bytes * bms) % 128, np.where((bms + 1) * self.BM > self.M, bms, -1)], axis=1))

    def col_classes(self, stride_bytes: int):
        bns = np.arange(self.grid_n, dtype=np.int64)
        return _by_key(np.stack([(stride_bytes * bns) % 128, np.where((bns + 1) * self.BN > self.N, bns, -1)], axis=1))

    def by_block(self, rows, cols) -> dict:
        """The block classes of the product of block-row and block-column classes."""
        return {"x": tuple((int(self.pid_of(bm, bn)), m * n) for bm, m in rows for bn, n in cols)}


def t0_access(params: Params, shape: Shape) -> KernelAccess:
    """t0_wmma.cu: block (bx, by) computes C[by*BM.., bx*BN..]; per tile kt each thread copies
    BM*BK/8/T chunks of A and BN*BK/8/T of Bt (chunk e = tid + l*T: row e / (BK/8), k 8*(e % (BK/8)))
    into the padded As[BM][BK+8] / Bs[BN][BK+8]: when K % 8 == 0 one LDG.128 (guard: row < rows and
    k < K) and one STS.128 each, else 8 LDG.U16 (guard: row < rows and k+e < K) and the STS.128.
    Then per 16 k each warp issues WM/16 + WN/16 LDSM.x4 (wmma loads) and (WM/16)*(WN/16) HMMA pairs.
    After the k loop: 4 STS.64 per fragment into Cs[BM][BN], then BM*BN/T LDS.32 + STG.32 per thread
    (idx = tid + l*T; row idx / BN, column idx % BN; both guarded by row < M and column < N).
    Rows of As/Bs are 16*(BK/8+1) bytes apart: the 8 rows a phase reads fall in 8 different bank
    groups; the Cs rows are 4*BN bytes apart (a multiple of 128), so a half-warp's 4 rows of STS.64
    land on the same banks: 4 wavefronts where 1 would do, by the layout, every tile of C once."""
    BM, BN, BK, WM, WN = params["BM"], params["BN"], params["BK"], params["WM"], params["WN"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    warps_n = BN // WN
    T = 32 * (BM // WM) * warps_n
    nx, ny, nk = cdiv(N, BN), cdiv(M, BM), cdiv(K, BK)
    LDS = BK + 8
    chunks = BK // 8
    vec = K % 8 == 0
    base = buffers(A=BF16 * M * K, Bt=BF16 * N * K, C=F32 * M * N)
    As, Bs = 0, BF16 * BM * LDS

    x_edge, y_edge, k_edge = ragged(nx, BN, N), ragged(ny, BM, M), ragged(nk, BK, K)
    a_blocks = {"x": same(nx), "y": shifted(ny, BF16 * BM * K, y_edge)}
    b_blocks = {"x": shifted(nx, BF16 * BN * K, x_edge), "y": same(ny)}
    c_blocks = {"x": shifted(nx, F32 * BN, x_edge), "y": shifted(ny, F32 * BM * N, y_edge)}
    smem_blocks = {"x": same(nx), "y": same(ny)}
    k_tiles = Loop("kt", nk, shifted(nk, BF16 * BK, k_edge))
    each_tile = Loop("kt", nk, same(nk))

    def wm(i):
        return (i.warp // warps_n) * WM

    def wn(i):
        return (i.warp % warps_n) * WN

    out = []
    for name, src, rows, rows_total, row0, dst, blocks in (
        ("A", base["A"], BM, M, lambda i: i.by * BM, As, a_blocks),
        ("Bt", base["Bt"], BN, N, lambda i: i.bx * BN, Bs, b_blocks),
    ):
        copies = rows * chunks // T
        copy_loop = Loop("l", copies, every(copies))

        def row(i, rows=rows):  # tile row of copy l
            return (i.tid + i.l * T) // chunks

        def k(i):
            return i.kt * BK + 8 * ((i.tid + i.l * T) % chunks)

        def grow(i, row0=row0, row=row):
            return row0(i) + row(i)

        if vec:
            out.append(Instruction(
                f"ldg.128 {name}[row][k..k+7]", "global", "load", 16,
                address=lambda i, src=src, grow=grow, rows_total=rows_total:
                    src + BF16 * (np.minimum(grow(i), rows_total - 1) * K + k(i)),
                active=lambda i, grow=grow, rows_total=rows_total: (grow(i) < rows_total) & (k(i) < K),
                loops=(k_tiles, copy_loop), blocks=blocks))
        else:
            out.append(_per_element_loads(name, src, grow, k, rows_total, K, (k_tiles, copy_loop), blocks))
        out.append(Instruction(
            f"sts.128 {name}s[row][k..k+7]", "shared", "store", 16,
            address=lambda i, dst=dst, row=row: dst + BF16 * (row(i) * LDS + 8 * ((i.tid + i.l * T) % chunks)),
            loops=(each_tile, copy_loop), blocks=smem_blocks))

    # The wmma loads: matrix q = lane / 8 of a 16x16 fragment reads rows 8*(q % 2).. of k half q / 2.
    def frag_row(i):
        return i.lane % 16

    def frag_half(i):
        return i.lane // 16

    k16 = Loop("kk", BK // 16, every(BK // 16))
    out.append(Instruction(
        "ldsm.x4 As (wmma.load.a)", "shared", LDSM, 16,
        address=lambda i: As + BF16 * ((wm(i) + 16 * i.f + frag_row(i)) * LDS + 16 * i.kk + 8 * frag_half(i)),
        loops=(each_tile, k16, Loop("f", WM // 16, every(WM // 16))), blocks=smem_blocks))
    out.append(Instruction(
        "ldsm.x4 Bs (wmma.load.b)", "shared", LDSM, 16,
        address=lambda i: Bs + BF16 * ((wn(i) + 16 * i.g + frag_row(i)) * LDS + 16 * i.kk + 8 * frag_half(i)),
        loops=(each_tile, k16, Loop("g", WN // 16, every(WN // 16))), blocks=smem_blocks))

    # wmma.store of each fragment: 4 STS.64 (row half h, n8 half n).
    frags = (Loop("f", WM // 16, every(WM // 16)), Loop("g", WN // 16, every(WN // 16)),
             Loop("h", 2, every(2)), Loop("n", 2, every(2)))
    out.append(Instruction(
        "sts.64 Cs[row][col] (wmma.store)", "shared", "store", 8,
        address=lambda i: F32 * ((wm(i) + 16 * i.f + i.lane // 4 + 8 * i.h) * BN
                                 + wn(i) + 16 * i.g + 8 * i.n + 2 * (i.lane % 4)),
        loops=frags, blocks=smem_blocks))

    per_thread = cdiv(BM * BN, T)
    c_loop = Loop("l", per_thread, every(per_thread))

    def idx(i):
        return i.tid + i.l * T

    def c_row(i):
        return i.by * BM + idx(i) // BN

    def c_col(i):
        return i.bx * BN + idx(i) % BN

    # The compiler moves the store's guard over the load: a lane whose element of C lies past M or N
    # does not read Cs either (300x388x200 on the H200: 3,900 LDS, not the 4,480 of every lane).
    out.append(Instruction(
        "lds Cs[idx]", "shared", "load", F32, address=lambda i: F32 * idx(i),
        active=lambda i: (idx(i) < BM * BN) & (c_row(i) < M) & (c_col(i) < N), loops=(c_loop,),
        blocks={"x": shifted(nx, 0, x_edge), "y": shifted(ny, 0, y_edge)}))  # same addresses, edge blocks apart

    out.append(Instruction(
        "stg C[row][col]", "global", "store", F32,
        address=lambda i: base["C"] + F32 * (np.minimum(c_row(i), M - 1) * N + np.minimum(c_col(i), N - 1)),
        active=lambda i: (idx(i) < BM * BN) & (c_row(i) < M) & (c_col(i) < N),
        loops=(c_loop,), blocks=c_blocks))
    return KernelAccess(grid=(nx, ny, 1), block=(T, 1, 1), instructions=tuple(out), **_work(M, N, K))


def t1_access(params: Params, shape: Shape) -> KernelAccess:
    """t1_mma_ldmatrix.cu: a 1D grid of grid_m x grid_n blocks in groups of GROUP_M block-rows;
    block (bm, bn) computes C[bm*BM.., bn*BN..]. Tile kt is copied once (prologue or main loop) into
    ring slot kt % STAGES: per thread, copy i of A moves chunk c = tid % (BK/8) of tile row
    r = tid / (BK/8) + i * (T / (BK/8)): with K % 8 == 0 one 16-byte LDGSTS (every lane issues it;
    rows past M or k past K have src-size 0: they read nothing), else 8 LDG.U16 (guard: row < M and
    k+e < K) and one STS.128; the same for Bt. Per tile and 16 k each warp issues WM/16 LDSM.x4 for
    A (lane l: row l % 16 at k half l / 16) and WN/16 for Bt (lane l: row 8*(l/16) + l % 8 at k half
    (l / 8) % 2), at the swizzled offsets, then (WM/16)*(WN/8) HMMA. Epilogue per m16n8 tile and row
    half h: one STG.64 of two floats (guard: row < M and col + 1 < N) when N is even, else two STG.32
    (guards col < N, col + 1 < N).
    The swizzle puts the 8 rows of every ldmatrix phase and the 8 chunks of a tile row in 8 different
    16-byte bank groups: 4 wavefronts per LDSM.x4, no conflicts (the model computes it from the
    addresses, it does not assume it)."""
    BM, BN, BK, WM, WN = params["BM"], params["BN"], params["BK"], params["WM"], params["WN"]
    STAGES, GROUP_M = params["STAGES"], params["GROUP_M"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    warps_n = BN // WN
    T = 32 * (BM // WM) * warps_n
    MI, NI = WM // 16, WN // 8
    chunks = BK // 8
    step = T // chunks
    vec = K % 8 == 0
    grid = _Grouped(M, N, BM, BN, GROUP_M)
    grid_m, grid_n, blocks = grid.grid_m, grid.grid_n, grid.blocks
    bm_bn, by_block = grid.bm_bn, grid.by_block
    ktiles = cdiv(K, BK)
    base = buffers(A=BF16 * M * K, Bt=BF16 * N * K, C=F32 * M * N)
    slot_bytes = BF16 * (BM + BN) * BK
    a_bytes = BF16 * BM * BK

    # A block's counts depend on its block-row through the row origin (mod 128 bytes) and whether it
    # is cut by M, and on its block-column likewise: classes over block-rows x block-columns.
    a_rows = grid.row_classes(BF16 * BM * K)
    b_cols = grid.col_classes(BF16 * BN * K)
    c_rows, c_cols = grid.row_classes(F32 * BM * N), grid.col_classes(F32 * BN)

    smem_blocks = {"x": same(blocks)}
    # Global copies move 2*BK bytes a tile (a multiple of 128: BK is a multiple of 64); the last
    # tile is cut by K when K % BK != 0. Shared slots are multiples of 128 bytes apart: one class.
    k_tiles = Loop("kt", ktiles, periodic(ktiles, 1, ragged(ktiles, BK, K)))
    each_tile = Loop("kt", ktiles, same(ktiles))

    def slot(i):
        return (i.kt % STAGES) * slot_bytes

    out = []
    for name, src, rows, rows_total, origin, dst, blocks_of in (
        ("A", base["A"], BM, M, lambda i: bm_bn(i.bx)[0] * BM, 0, by_block(a_rows, same(grid_n))),
        ("Bt", base["Bt"], BN, N, lambda i: bm_bn(i.bx)[1] * BN, a_bytes, by_block(same(grid_m), b_cols)),
    ):
        copies = rows * chunks // T
        copy_loop = Loop("i", copies, every(copies))

        def r(i):
            return i.tid // chunks + i.i * step

        def k(i):
            return i.kt * BK + 8 * (i.tid % chunks)

        def grow(i, origin=origin):
            return origin(i) + r(i)

        def inside(i, grow=grow, rows_total=rows_total):
            return (grow(i) < rows_total) & (k(i) < K)

        def counted_past_k(i, src=src, grow=grow, inside=inside, rows_total=rows_total):
            # A zero-filled chunk (src-size 0, its address the matrix's start) that the H200's L1
            # still counts a sector for, at its own place past K: the first chunk past K of a row whose
            # clipped k-tile holds an odd number of chunks, starts 16 bytes into a sector (o % 32 ==
            # 16), so that the chunk past K begins a sector, and runs past the first 128-byte line it
            # starts in (o + 16 c > 128). Found, not derived: it fits all 19 launches of
            # notebook/probes/probe_ragged_counts.py --set t1 (H200, ncu 2025.3.1, 2026-12-04: one
            # block at K = 72..120 and 968..1024, and 256x256x1000, 300x388x200, 1536x2560x1000,
            # where it is the 64 sectors a block the model lacked), and no 16-byte-aligned K adds any.
            c = (K - i.kt * BK) // 8  # chunks of this tile inside K (>= chunks: a whole tile)
            o = (src + BF16 * (grow(i) * K + i.kt * BK)) % 128
            return (~inside(i) & (grow(i) < rows_total) & (i.tid % chunks == c) & (c % 2 == 1)
                    & (o % 32 == 16) & (o + 16 * c > 128))

        def counted(i, inside=inside, counted_past_k=counted_past_k):
            return inside(i) | counted_past_k(i)

        if vec:
            out.append(Instruction(
                f"ldgsts {name} -> {name}s (cp.async.cg 16 B)", "global", "ldgsts", 16,
                address=lambda i, src=src, grow=grow, counted=counted: np.where(
                    counted(i), src + BF16 * (grow(i) * K + k(i)), src),
                reads=counted, loops=(k_tiles, copy_loop), blocks=blocks_of))
        else:
            out.append(_per_element_loads(name, src, grow, k, rows_total, K, (k_tiles, copy_loop), blocks_of))
            out.append(Instruction(
                f"sts.128 {name}s (swizzled, K % 8 != 0)", "shared", "store", 16,
                address=lambda i, dst=dst, rows=rows: slot(i) + dst + _swizzled(rows, r(i), i.tid % chunks),
                loops=(each_tile, copy_loop), blocks=smem_blocks))

    def wm(i):
        return (i.warp // warps_n) * WM

    def wn(i):
        return (i.warp % warps_n) * WN

    k16 = Loop("kk", BK // 16, every(BK // 16))
    out.append(Instruction(
        "ldsm.x4 As (A fragment)", "shared", LDSM, 16,
        address=lambda i: slot(i) + _swizzled(BM, wm(i) + 16 * i.f + i.lane % 16, 2 * i.kk + i.lane // 16),
        loops=(each_tile, k16, Loop("f", MI, every(MI))), blocks=smem_blocks))
    out.append(Instruction(
        "ldsm.x4 Bs (two n8 B fragments)", "shared", LDSM, 16,
        address=lambda i: slot(i) + a_bytes + _swizzled(
            BN, wn(i) + 16 * i.g + 8 * (i.lane // 16) + i.lane % 8, 2 * i.kk + (i.lane // 8) % 2),
        loops=(each_tile, k16, Loop("g", NI // 2, every(NI // 2))), blocks=smem_blocks))

    def c_rc(i):
        bm, bn = bm_bn(i.bx)
        row = bm * BM + wm(i) + 16 * i.f + i.lane // 4 + 8 * i.h
        col = bn * BN + wn(i) + 8 * i.g + 2 * (i.lane % 4)
        return row, col

    def c_addr(i, plus=0):
        row, col = c_rc(i)
        return base["C"] + F32 * (np.minimum(row, M - 1) * N + np.minimum(col + plus, N - 1))

    tiles = (Loop("f", MI, every(MI)), Loop("g", NI, every(NI)), Loop("h", 2, every(2)))
    c_blocks = by_block(c_rows, c_cols)
    if N % 2 == 0:
        out.append(Instruction(
            "stg.64 C[row][col..col+1]", "global", "store", 8, address=c_addr,
            active=lambda i: (c_rc(i)[0] < M) & (c_rc(i)[1] + 1 < N), loops=tiles, blocks=c_blocks))
    else:
        for plus in (0, 1):
            out.append(Instruction(
                f"stg C[row][col+{plus}] (N odd)", "global", "store", F32,
                address=lambda i, plus=plus: c_addr(i, plus),
                active=lambda i, plus=plus: (c_rc(i)[0] < M) & (c_rc(i)[1] + plus < N),
                loops=tiles, blocks=c_blocks))
    return KernelAccess(grid=(blocks, 1, 1), block=(T, 1, 1), instructions=tuple(out), **_work(M, N, K))


def _sectors(start: int, end: int) -> int:
    """32-byte sectors the bytes [start, end) touch."""
    return (end - 1) // 32 - start // 32 + 1 if end > start else 0


def _sectors_per_line(start: int, end: int, least: int) -> int:
    """The sectors of [start, end) counted line by line (128 bytes), each line's at least `least`."""
    total, at = 0, start
    while at < end:
        stop = min(end, (at // 128 + 1) * 128)
        total += max(_sectors(at, stop), least)
        at = stop
    return total


def _box_row_sectors(offset: int, inside: int, multicast: bool) -> int:
    """Sectors Nsight Compute counts for one 128-byte TMA box row of a k-tile that starts `offset`
    bytes into a line and holds `inside` bytes inside K (128 in a whole k-tile), the rest past K.

    Loaded by its own block: the part inside K and the part past it, each the sectors it touches (a
    sector K ends inside counts in both). Multicast (t4's Bt with CLUSTER = 2): the part inside K
    line by line, at least 2 sectors a line, and the part past K at least 3 sectors. Both fitted to
    every capture of notebook/probes/probe_tma_bytes.py on the H200 (tests/fixtures/h200/
    probe-tma-bytes.csv, 2026-12-02: 10 runs in clusters of one, 45 in clusters of two; _tma_sectors
    has the story)."""
    end = offset + inside
    if not multicast:
        return _sectors(offset, end) + _sectors(end, offset + 128)
    past = _sectors(end, offset + 128)
    return _sectors_per_line(offset, end, 2) + (max(past, 3) if inside < 128 else 0)


def _tma_sectors(rows: int, matrix_rows: int, pitch: int, k_tiles: int, multicast: bool = False) -> int:
    """32-byte sectors Nsight Compute counts the TMA boxes (64 BF16 wide, one per k-tile) reading from
    `rows` box rows of a BF16 matrix of `matrix_rows` rows and row pitch `pitch` (the tensor map's K
    extent), once over all k-tiles, as received by one block (`multicast`: by each block of a cluster
    that a multicast box reaches). `rows` counts every box row the tiles cover, the matrix's and
    those past its last row (a last tile row or column holding fewer rows than its box).

    What the counter shows on the H200 (l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld), in
    every capture at whole and ragged K (_box_row_sectors per box row):
    - a box row inside the matrix, in a k-tile wholly inside K, reads the sectors its 128 bytes touch:
      row r starts at 2 (r pitch + 64 kt) bytes, 0 or 16 bytes into a sector (16-byte aligned: the
      pitch is a multiple of 8), so 4 sectors, or 5 at the rows that start 16 bytes in;
    - in the k-tile that K ends inside, the part of the row inside K and the part past it count
      apart, each the sectors it touches: 5 where 2 pitch is not a multiple of 32 (at every row: a
      row that starts on a sector has a sector K ends inside, counted twice), else 4; however few of
      its bytes lie inside K (16 to 112);
    - a box row past the matrix's last row counts 4 sectors in every k-tile, as if read whole;
    - multicast (Bt in t4's clusters of two) counts each 128-byte line of a row's part inside K as
      at least 2 sectors, and the part past K as at least 3: at whole K nothing changes (every box
      row is one whole line), but where the pitch is not a multiple of 128 bytes a row that puts 1
      sector in a line counts 2 there, and the k-tile K ends inside counts more. At 1536x2560x1000
      (t4, pitch 2000 bytes) that is 8.3% over the rule without multicast, which Nsight Compute
      measured (issue 42).
    notebook/probes/probe_tma_bytes.py took the rule apart at small shapes (tests/fixtures/h200/probe-tma-bytes.csv,
    2026-12-02): in clusters of one and two, N = 1 .. 8 rows at four pitches and 256 rows at ten;
    notebook/probes/probe_ragged_counts.py (--set tma) takes it row by row at wider pitches."""
    # Row r starts (2 pitch r) % 128 bytes into a line (the base is 256-byte aligned); the offsets
    # repeat every `period` rows. Counted by class, not row by row: memory and time stay bounded at
    # the largest shapes (tests/test_predict_memory.py).
    assert pitch % 8 == 0, "TMA rows are a multiple of 16 bytes"
    inside = min(rows, matrix_rows)
    step = (BF16 * pitch) % 128
    period = 128 // math.gcd(step, 128) if step else 1
    whole = pitch // 64  # k-tiles wholly inside K
    clipped = k_tiles - whole  # 0 or 1: the k-tile K ends inside
    tail = BF16 * (pitch - 64 * whole)  # its bytes inside K
    total = (rows - inside) * 4 * k_tiles
    for r in range(min(period, inside)):
        offset = (step * r) % 128
        per_row = (whole * _box_row_sectors(offset, 128, multicast)
                   + clipped * _box_row_sectors(offset, tail, multicast))
        total += per_row * len(range(r, inside, period))
    return total


def tma_access(params: Params, shape: Shape, consumer_first: int, threads: int) -> KernelAccess:
    """The TMA rungs (t2_wgmma_tma.cu, t3_warp_specialized.cu): a 1D grid of BM x BN tiles in groups
    of GROUP_M block-rows (grouped_tile). The k loop issues no warp memory instruction: per k-tile one
    thread issues 2 TMA loads (UTMALDG: the A box 64 x BM, the Bt box 64 x BN) and each consumer warp
    4 wgmma (HGMMA, operands read from shared memory by the tensor cores); those are KernelAccess.bulk
    counts. The epilogue (hopper.cuh store_accumulators) is the only warp memory instruction: consumer
    warpgroup c (threads consumer_first + 128 c ..) stores its 64 rows of the tile, thread t (warp
    w = t / 32 % 4, lane l) rows 16 w + l / 4 + 8 h at columns 8 j + 2 (l % 4), j < BN / 8: one STG.64
    (guard row < M and col < N) when N is even, else STG.32 of col (guard col < N) and of col + 1
    (guard col + 1 < N).
    K not a multiple of 8: the tensor maps describe staged copies whose rows are K rounded up to 64
    (gemm_bf16.staging.row_pitch), so the TMA reads that pitch; the staging kernel is another launch, not
    counted here."""
    BM, BN, GROUP_M = params["BM"], params["BN"], params["GROUP_M"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    grid = _Grouped(M, N, BM, BN, GROUP_M)
    k_tiles = cdiv(K, 64)
    pitch = row_pitch(K)
    consumers = BM // 64
    base = buffers(C=F32 * M * N)

    def c_rc(i):
        bm, bn = grid.bm_bn(i.bx)
        c = (i.tid - consumer_first) // 128
        row = bm * BM + 64 * c + 16 * (i.warp % 4) + i.lane // 4 + 8 * i.h
        col = bn * BN + 8 * i.j + 2 * (i.lane % 4)
        return row, col

    def c_addr(i, plus=0):
        row, col = c_rc(i)
        return base["C"] + F32 * (np.minimum(row, M - 1) * N + np.minimum(col + plus, N - 1))

    def stores(i, plus):
        row, col = c_rc(i)
        return (i.tid >= consumer_first) & (row < M) & (col + plus < N)

    tiles = (Loop("j", BN // 8, every(BN // 8)), Loop("h", 2, every(2)))
    c_blocks = grid.by_block(grid.row_classes(F32 * BM * N), grid.col_classes(F32 * BN))
    if N % 2 == 0:
        out = [Instruction("stg.64 C[row][col..col+1]", "global", "store", 8, address=c_addr,
                           active=lambda i: stores(i, 0), loops=tiles, blocks=c_blocks)]
    else:
        out = [Instruction(f"stg C[row][col+{plus}] (N odd)", "global", "store", F32,
                           address=lambda i, plus=plus: c_addr(i, plus), active=lambda i, plus=plus: stores(i, plus),
                           loops=tiles, blocks=c_blocks) for plus in (0, 1)]
    bulk = {
        "tma_load_requests": grid.blocks * k_tiles * 2,
        # Each block-row's A rows are read by every block-column, each Bt row by every block-row.
        "tma_load_bytes": 32 * (grid.grid_n * _tma_sectors(grid.grid_m * BM, M, pitch, k_tiles)
                                + grid.grid_m * _tma_sectors(grid.grid_n * BN, N, pitch, k_tiles)),
        "gmma_requests": grid.blocks * consumers * 4 * k_tiles * 4,
    }
    return KernelAccess(grid=(grid.blocks, 1, 1), block=(threads, 1, 1), instructions=tuple(out), bulk=bulk,
                        **_work(M, N, K))


def t2_access(params: Params, shape: Shape) -> KernelAccess:
    """t2: BM / 64 warpgroups, each a consumer that also waits on the ring (thread 0 issues the TMA)."""
    return tma_access(params, shape, consumer_first=0, threads=128 * (params["BM"] // 64))


def t3_access(params: Params, shape: Shape) -> KernelAccess:
    """t3: warpgroup 0 is the producer (stores nothing), warpgroups 1 and 2 the consumers."""
    return tma_access(params, shape, consumer_first=128, threads=384)


class _PersistentClusters:
    """t4's schedule with SCHEDULE = 0 (t4_persistent_cluster.cu cluster_tile and WorkList): cluster
    c of `clusters` takes cluster tiles c, c + clusters, ... (round u: tile c + u clusters), each
    CLUSTER x BM rows by BN columns in groups of GROUP_M cluster-rows, column-major inside a group;
    block rank r of the cluster takes rows r BM .. of it."""

    def __init__(self, M: int, N: int, BM: int, BN: int, cluster: int, group_m: int, blocks: int):
        self.BM, self.BN, self.cluster, self.group_m = BM, BN, cluster, group_m
        self.tiles_m, self.tiles_n = cdiv(M, BM * cluster), cdiv(N, BN)
        self.tiles = self.tiles_m * self.tiles_n
        self.clusters = blocks // cluster
        self.rounds = cdiv(self.tiles, self.clusters)

    def tile(self, bx, u):
        """(cluster tile, whether this round has one) of block bx in round u."""
        t = bx // self.cluster + u * self.clusters
        return t, t < self.tiles

    def origin(self, bx, u):
        """(m0, n0) of block bx's share of its round-u tile (meaningless where it has none)."""
        t, _ = self.tile(bx, u)
        per_group = self.group_m * self.tiles_n
        first_m = (t // per_group) * self.group_m
        group_rows = np.maximum(np.minimum(self.tiles_m - first_m, self.group_m), 1)
        in_group = t % per_group
        m0 = ((first_m + in_group % group_rows) * self.cluster + bx % self.cluster) * self.BM
        return m0, (in_group // group_rows) * self.BN

    def block_classes(self) -> tuple[tuple[int, int], ...]:
        """Blocks grouped by how many rounds have a tile for them: where an instruction's address
        does not depend on the block, only that count does."""
        long = (self.tiles - (self.rounds - 1) * self.clusters) * self.cluster  # blocks with every round
        blocks = self.clusters * self.cluster
        return tuple((first, n) for first, n in ((0, long), (long, blocks - long)) if n > 0)


def t4_access(params: Params, shape: Shape, blocks: int) -> KernelAccess:
    """t4_persistent_cluster.cu with SCHEDULE = 0 on its persistent grid of `blocks` blocks
    (tma_rungs.t4_launch), its tiles over the rows and columns gemm_bf16.edge gives them, the edge
    past them (EDGE) as _edge_instructions. Threads 0-127 are the producer warpgroup (thread 0 issues every TMA load),
    128-255 and 256-383 consumers 0 and 1.

    Warp memory instructions: thread 0 stores the tile grid once (one STS.64); for every tile it
    handles, thread 0 and every consumer warp that computes the tile read it back (two LDS.32,
    cluster_tile: all consumer warps, or with PINGPONG = 1 the four of the consumer whose turn it is).
    The epilogue of each 64-row half of a tile (consumer c's rows 64 c .., or with PINGPONG = 1 the
    consumer's acc0 and acc1): with STORE = 1, per 64 x 32 chunk j, 8 STS.64 per thread into the
    chunk's 128-byte-swizzled buffer (thread t of the warpgroup, warp w = t / 32, lane l: row
    r = 16 w + l / 4 + 8 half, at step g its group g ^ (r % 4): 16-byte chunk q = 2 (g ^ (r % 4)) +
    (l % 4) / 2, stored at q ^ (r % 8)); the chunk then goes
    out by TMA where N % 4 == 0, else by 16 LDS.32 + STG.32 per thread (row w + 4 i, column l; both
    under the store's guard row < M and column < N, as the compiler places it). With STORE = 0 the
    register stores of hopper.cuh store_accumulators (as t3); with STORE = 1 and BN = 200 those of
    its last 8 columns (BN % 32: no 32-column TMA box fits them inside the tile).

    Bulk counts: every block loads its A box and its share of the Bt box per k-tile of each tile
    (2 UTMALDG); Nsight Compute's TMA instruction count also holds each chunk's TMA store and its
    bulk-group commit (2 per chunk where C has a map). Bytes: each block receives its 128 rows of A
    and, by multicast, all BN rows of Bt per k-tile (counted at every receiving block). wgmma: t3's,
    4 per warp per k-tile of each tile."""
    if params.get("SCHEDULE"):
        raise NotModelled(
            "t4 SCHEDULE=1 is not modelled: its stream-K flags are polled, so its global loads depend on "
            "timing; predict SCHEDULE=0 (profile measures SCHEDULE=1, without predictions)")
    BM, BN, CLUSTER, STORE = params["BM"], params["BN"], params["CLUSTER"], params["STORE"]
    pingpong = bool(params.get("PINGPONG"))
    M, N, K = shape["M"], shape["N"], shape["K"]
    m_main, n_main = t4_main_dims(params, shape)
    grid = _PersistentClusters(m_main, n_main, BM, BN, CLUSTER, params["GROUP_M"], blocks)
    k_tiles = cdiv(K, 64)
    tma_store = STORE and N % 4 == 0
    pitch = row_pitch(K)
    base = buffers(C=F32 * M * N, A=BF16 * M * pitch, Bt=BF16 * N * pitch)
    rounds = Loop("u", grid.rounds, every(grid.rounds))
    # For instructions whose address does not depend on the tile, only whether a block has one in
    # round u (every block but in the last round) and, with PINGPONG = 1, whose turn it is (u % 2):
    # the rounds fall into a few classes, and the model stays quick at the largest shapes.
    tile_free_rounds = Loop("u", grid.rounds, periodic(grid.rounds, 2, edge=(grid.rounds - 1,)))
    by_rounds = {"x": grid.block_classes()}  # for addresses that do not depend on the tile

    def consumer(i):
        return i.tid // 128 - 1  # -1: the producer warpgroup

    def computes(i):
        """This thread's warp computes (and stores) its block's round-u tile."""
        _, has = grid.tile(i.bx, i.u)
        turn = (consumer(i) == i.u % 2) if pingpong else True
        return has & (consumer(i) >= 0) & turn

    out = [
        Instruction("sts.64 tile_grid (thread 0, once)", "shared", "store", 8, address=lambda i: 0 * i.tid,
                    active=lambda i: i.tid == 0, blocks={"x": same(blocks)}),
    ]
    for word in (0, 1):
        out.append(Instruction(
            f"lds tile_grid[{word}] (cluster_tile, per tile)", "shared", "load", F32,
            address=lambda i, word=word: F32 * word + 0 * i.tid,
            active=lambda i: computes(i) | ((i.tid == 0) & grid.tile(i.bx, i.u)[1]),
            loops=(tile_free_rounds,), blocks=by_rounds))

    # The 64-row halves of a tile a consumer stores: its own (cooperative), or acc0 and acc1 (pingpong).
    halves = Loop("a", 2 if pingpong else 1, every(2 if pingpong else 1))

    def half_row0(i):
        m0, _ = grid.origin(i.bx, i.u)
        return m0 + 64 * (i.a if pingpong else consumer(i))

    def register_stores(first_group: int, what: str) -> list[Instruction]:
        """hopper.cuh store_accumulators from 8-column group `first_group` on: per group j and half h,
        one STG.64 of the thread's column pair (row 16 w + l / 4 + 8 h, column 8 j + 2 (l % 4)), or
        two scalar STGs where N is odd; each under its guard row < M and column < N."""
        def c_rc(i):
            _, n0 = grid.origin(i.bx, i.u)
            return (half_row0(i) + 16 * (i.warp % 4) + i.lane // 4 + 8 * i.h,
                    n0 + 8 * (first_group + i.j) + 2 * (i.lane % 4))

        def c_addr(i, plus=0):
            row, col = c_rc(i)
            return base["C"] + F32 * (np.minimum(row, M - 1) * N + np.minimum(col + plus, N - 1))

        def stores(i, plus):
            row, col = c_rc(i)
            return computes(i) & (row < M) & (col + plus < N)

        groups = BN // 8 - first_group
        tiles = (rounds, halves, Loop("j", groups, every(groups)), Loop("h", 2, every(2)))
        if N % 2 == 0:
            return [Instruction(f"stg.64 C[row][col..col+1]{what}", "global", "store", 8, address=c_addr,
                                active=lambda i: stores(i, 0), loops=tiles, blocks={"x": every(blocks)})]
        return [Instruction(f"stg C[row][col+{plus}] (N odd){what}", "global", "store", F32,
                            address=lambda i, plus=plus: c_addr(i, plus),
                            active=lambda i, plus=plus: stores(i, plus), loops=tiles, blocks={"x": every(blocks)})
                for plus in (0, 1)]

    if STORE:
        chunks = Loop("j", BN // 32, periodic(BN // 32, 2))
        groups = (Loop("g", 4, every(4)), Loop("h", 2, every(2)))

        def buffer_row(i):
            return 16 * (i.warp % 4) + i.lane // 4 + 8 * i.h

        def chunk_address(i):
            r = buffer_row(i)
            q = 2 * (i.g ^ (r % 4)) + (i.lane % 4) // 2  # step g stores group g ^ (r % 4)
            buffer = (consumer(i) * 2 + i.j % 2) * 64 * 128
            return buffer + r * 128 + (q ^ (r % 8)) * 16 + (i.lane % 2) * 8

        out.append(Instruction("sts.64 C chunk (swizzled buffer)", "shared", "store", 8, address=chunk_address,
                               active=computes, loops=(tile_free_rounds, halves, chunks, *groups), blocks=by_rounds))
        if not tma_store:
            rows = Loop("r", 16, every(16))

            def copy_row(i):
                return i.warp % 4 + 4 * i.r

            def copy_rc(i):
                _, n0 = grid.origin(i.bx, i.u)
                return half_row0(i) + copy_row(i), n0 + 32 * i.j + i.lane

            def copies(i):
                row, col = copy_rc(i)
                return computes(i) & (row < M) & (col < N)

            every_chunk = Loop("j", BN // 32, every(BN // 32))
            out.append(Instruction(
                "lds C chunk (copy-out, N % 4 != 0)", "shared", "load", F32,
                address=lambda i: (consumer(i) * 2 + i.j % 2) * 64 * 128 + copy_row(i) * 128
                + ((i.lane // 4) ^ (copy_row(i) % 8)) * 16 + (i.lane % 4) * 4,
                active=copies, loops=(rounds, halves, every_chunk, rows), blocks={"x": every(blocks)}))
            out.append(Instruction(
                "stg C[row][col] (copy-out, N % 4 != 0)", "global", "store", F32,
                address=lambda i: base["C"] + F32 * (np.minimum(copy_rc(i)[0], M - 1) * N
                                                     + np.minimum(copy_rc(i)[1], N - 1)),
                active=copies, loops=(rounds, halves, every_chunk, rows), blocks={"x": every(blocks)}))
        if BN % 32:  # BN = 200: its last 8 columns from registers, no TMA box being that narrow
            out += register_stores(BN // 32 * 4, " (the last BN % 32 columns)")
    else:
        out += register_stores(0, "")

    out += _edge_instructions(M, N, K, m_main, n_main, blocks, base)

    block_tiles = grid.tiles * CLUSTER
    bulk = {
        "tma_load_requests": block_tiles * k_tiles * 2 + (block_tiles * 2 * (BN // 32) * 2 if tma_store else 0),
        "tma_load_bytes": 32 * (grid.tiles_n * _tma_sectors(grid.tiles_m * CLUSTER * BM, M, pitch, k_tiles)
                                + grid.tiles_m * CLUSTER * _tma_sectors(grid.tiles_n * BN, N, pitch, k_tiles,
                                                                        multicast=CLUSTER > 1)),
        "gmma_requests": block_tiles * 2 * 4 * 4 * k_tiles,
    }
    return KernelAccess(grid=(blocks, 1, 1), block=(384, 1, 1), instructions=tuple(out), bulk=bulk,
                        **_work(M, N, K))


EDGE_WARPS = 3  # warps 1-3 of t4's producer warpgroup (EDGE_WARPS in its source)
EDGE_UNROLL = {1: 2, 2: 1}  # edge rows R -> chunks U a lane loads before using them (edge_item_of)


def _edge_instructions(M: int, N: int, K: int, m_main: int, n_main: int, blocks: int, base: dict) -> list:
    """t4's edge (gemm_bf16.edge; edge_dots in its source), none where the tiles cover all of C.

    Warp w = 3 bx + warp - 1 (warps 1-3 of each block) takes items w, w + 3 blocks, ... (round v):
    item b < N (with rows past m_main) is C's column b of those rows, Bt row b against A's edge rows;
    then item N + a is C's row a of the columns past n_main, A row a against Bt's edge rows. Each item
    runs edge_item<R, U> for its R edge rows: per iteration i of 32 U chunks, U LDG.128 of the item's
    row (lane l: chunk 32 (U i + u) + l, under c < chunks) and U x R of the edge rows' same chunks;
    then lanes e < R store edge row e's sum (STG.32). Rows lie gemm_bf16.staging.row_pitch(K) apart;
    an item reads the cdiv(K, 8) chunks that hold K. The L2 prefetches of the next item's row (CCTL)
    are not loads and are not counted."""
    rows_m, cols_n = M - m_main, N - n_main
    if rows_m == 0 and cols_n == 0:
        return []
    chunks = cdiv(K, 8)
    pitch = BF16 * row_pitch(K)
    bottom = N if rows_m else 0
    items = bottom + (m_main if cols_n else 0)
    step = blocks * EDGE_WARPS
    rounds = Loop("v", cdiv(items, step), every(cdiv(items, step)))
    x_blocks = {"x": every(blocks)}

    def item(i):
        return i.bx * EDGE_WARPS + i.warp - 1 + i.v * step

    def edge_rows(i):  # R of this warp's item: the bottom's rows or the right edge's columns
        return np.where(item(i) < bottom, rows_m, cols_n)

    out = []
    for R, U in EDGE_UNROLL.items():
        if R not in (rows_m, cols_n):
            continue
        trips = cdiv(chunks, 32 * U)
        chunk_loops = (rounds, Loop("i", trips, shifted(trips, 16 * 32 * U, edge=(trips - 1,))), Loop("u", U, every(U)))

        def takes(i, R=R):
            return (i.warp >= 1) & (i.warp <= EDGE_WARPS) & (item(i) < items) & (edge_rows(i) == R)

        def chunk(i, U=U):
            return 32 * (U * i.i + i.u) + i.lane

        def row_address(i):
            it = item(i)
            return np.where(it < bottom, base["Bt"] + it * pitch, base["A"] + (it - bottom) * pitch) + 16 * chunk(i)

        def edge_address(i):
            first = np.where(item(i) < bottom, base["A"] + m_main * pitch, base["Bt"] + n_main * pitch)
            return first + i.e * pitch + 16 * chunk(i)

        def in_row(i, takes=takes):
            return takes(i) & (chunk(i) < chunks)

        def store_address(i):
            it = item(i)
            return base["C"] + F32 * np.where(it < bottom, (m_main + i.lane) * N + it, (it - bottom) * N + n_main + i.lane)

        out += [
            Instruction(f"ldg.128 edge item row (R={R}, evict first)", "global", "load", 16, address=row_address,
                        active=in_row, loops=chunk_loops, blocks=x_blocks),
            Instruction(f"ldg.128 edge rows (R={R})", "global", "load", 16, address=edge_address, active=in_row,
                        loops=(*chunk_loops, Loop("e", R, every(R))), blocks=x_blocks),
            Instruction(f"stg edge sums (R={R}, lanes < R)", "global", "store", F32, address=store_address,
                        active=lambda i, takes=takes, R=R: takes(i) & (i.lane < R), loops=(rounds,), blocks=x_blocks),
        ]
    return out
