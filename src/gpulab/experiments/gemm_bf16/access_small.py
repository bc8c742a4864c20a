"""Access models of gemm_bf16's kernels for few output tiles: d0 (decode, M <= 16), kc (split-K
across a cluster) and ks (stream-K with the operands swapped, 8-128 tokens a tile), for `gpulab
predict`; the style of access.py (one `Instruction` per SASS memory
instruction, read off nvdisasm of NVRTC 13.5's sm_90 / sm_90a cubins at the default params)."""

from __future__ import annotations

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.experiments.gemm_bf16.access import BF16, F32, _by_key, _Grouped, _tma_sectors, _work, tma_access
from gpulab.experiments.gemm_bf16.staging import row_pitch
from gpulab.gpu.device import l2_bytes
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, every, ragged, same, shifted

D0_M_ROWS = 16  # rows of A a d0 partial holds (d0_decode.cu RED_ROWS)


def d0_access(params: Params, shape: Shape, slices: int) -> KernelAccess:
    """d0_decode.cu on a grid of cdiv(N, 16G) block columns by `slices` k slices (the host's S) by
    cdiv(M, 16) block rows of A.

    Block (bx, s, z), warp w of KW, lane l = 4 r + q: rows n = 16G bx + 16 g + r + 8 h of Bt (g < G,
    h < 2) and 16 z + 8 t + r of A (t < 1, or 2 where the block row holds more than 8 rows); warp-slice
    v = s KW + w runs steps [v T / (S KW), (v + 1) T / (S KW)) of the T = cdiv(K, 32 U), its step st
    reading chunk c = st 4U + 4u + q (u < U) of each row. K % 8 == 0: one LDG.128 per chunk (Bt
    LDG.E.NA.LTC256B.128.CONSTANT, A LDG.E.128.CONSTANT), guarded by row < rows and 8 c < K;
    otherwise 8 LDG.U16 per chunk (element e guarded by 8 c + e < K, the row by a branch). Then
    G x NM x 4 STS.32 of the fragment (acc[g][t][i] at m = 8t + 2q + i % 2, n = 16g + r + 8 (i / 2),
    rows 16G + 4 floats apart), a barrier, and a rolled loop over the elements e = tid + j 32 KW <
    rows x 16G (m = e / 16G, n = e % 16G): KW LDS.32 (warp order) and, with S = 1, the STG.32 of C
    (guard n0 + n < N); with S > 1 an STG.STRONG.GPU of the block's plane in the workspace. Then the
    ticket (split_k.cuh: ATOMG, not a load or store here; thread 0 of the last block stores the
    counter's zero) and the last block's rolled loop: 1 + (S - 1) LDG.STRONG.GPU of the S planes and
    the STG of C. Which block is last is a race; every block of a tile would run the same addresses,
    so the model gives the fixup to slice S - 1."""
    G, U, KW = params["G"], params["U"], params["KW"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    rows = 16 * G
    threads = 32 * KW
    nx, S, nz = cdiv(N, rows), slices, cdiv(M, D0_M_ROWS)
    steps = cdiv(K, 32 * U)
    trips = cdiv(steps, S * KW)  # the most steps a warp runs
    vec = K % 8 == 0
    pitch = rows + 4
    plane = D0_M_ROWS * rows
    base = buffers(A=BF16 * M * K, Bt=BF16 * N * K, C=F32 * M * N, work=F32 * nz * S * nx * plane,
                   counters=F32 * nz * nx)

    def rows_a(i):  # A's rows in block row z
        return np.minimum(M - D0_M_ROWS * i.bz, D0_M_ROWS)

    def has_tile(i):  # the second n8 tile of A runs only where the block row holds more than 8 rows
        return (i.t == 0) | (rows_a(i) > 8)

    def first_step(i):
        v = i.by * KW + i.warp
        return v * steps // (S * KW)

    def warp_steps(i):
        v = i.by * KW + i.warp
        return (v + 1) * steps // (S * KW) - v * steps // (S * KW)

    def chunk(i):
        return (first_step(i) + i.st) * 4 * U + 4 * i.u + i.lane % 4

    def bt_row(i):
        return i.bx * rows + 16 * i.g + i.lane // 4 + 8 * i.h

    def a_row(i):  # in the block row
        return 8 * i.t + i.lane // 4

    # Steps move every address by 64 U bytes; the last two may leave a warp idle or cross K.
    step_loop = Loop("st", trips, shifted(trips, 2 * 32 * U, edge=(trips - 2, trips - 1)))
    u_loop = Loop("u", U, every(U))
    ys = every(S)
    column_edge = ragged(nx, rows, N)
    row_edge = ragged(nz, D0_M_ROWS, M)  # the last block row, where M % 16 cuts it

    def zs(stride_bytes):
        return shifted(nz, stride_bytes, edge=row_edge)

    out = []
    loads = (
        ("Bt", base["Bt"], lambda i: bt_row(i), lambda i: N, lambda i: 0, lambda i: True,
         (step_loop, u_loop, Loop("g", G, every(G)), Loop("h", 2, every(2))),
         {"x": shifted(nx, BF16 * rows * K, edge=column_edge), "y": ys, "z": same(nz)}),
        ("A", base["A"], a_row, rows_a, lambda i: D0_M_ROWS * i.bz, has_tile,
         (step_loop, u_loop, Loop("t", 2, every(2))),
         {"x": same(nx), "y": ys, "z": zs(BF16 * D0_M_ROWS * K)}),
    )
    for name, src, row, extent, row0, runs, loops, blocks in loads:
        if vec:
            out.append(Instruction(
                f"ldg.128 {name}[row][8c..8c+7]", "global", "load", 16,
                address=lambda i, src=src, row=row, extent=extent, row0=row0:
                    src + BF16 * ((row0(i) + np.minimum(row(i), extent(i) - 1)) * K + 8 * chunk(i)),
                active=lambda i, row=row, extent=extent, runs=runs:
                    runs(i) & (i.st < warp_steps(i)) & (row(i) < extent(i)) & (8 * chunk(i) < K),
                loops=loops, blocks=blocks))
        else:
            out.append(Instruction(
                f"ldg.u16 {name}[row][8c+e] (K % 8 != 0)", "global", "load", BF16,
                address=lambda i, src=src, row=row, extent=extent, row0=row0:
                    src + BF16 * ((row0(i) + np.minimum(row(i), extent(i) - 1)) * K + 8 * chunk(i) + i.e),
                active=lambda i, row=row, extent=extent, runs=runs:
                    runs(i) & (i.st < warp_steps(i)) & (row(i) < extent(i)) & (8 * chunk(i) + i.e < K),
                loops=(*loops, Loop("e", 8, every(8))), blocks=blocks))

    smem_blocks = {"x": same(nx), "y": same(S), "z": zs(0)}
    out.append(Instruction(
        "sts red[w][m][n] (the warp's fragment)", "shared", "store", F32,
        address=lambda i: F32 * ((i.warp * D0_M_ROWS + 8 * i.t + 2 * (i.lane % 4) + i.c % 2) * pitch
                                 + 16 * i.g + i.lane // 4 + 8 * (i.c // 2)),
        active=has_tile,
        loops=(Loop("g", G, every(G)), Loop("t", 2, every(2)), Loop("c", 4, every(4))), blocks=smem_blocks))

    passes = cdiv(min(M, D0_M_ROWS) * rows, threads)
    element_loop = Loop("j", passes, every(passes))

    def element(i):
        return i.tid + i.j * threads

    def in_tile(i):
        return element(i) < rows_a(i) * rows

    out.append(Instruction(
        "lds red[v][m][n] (the block's sum)", "shared", "load", F32,
        address=lambda i: F32 * ((i.v * D0_M_ROWS + element(i) // rows) * pitch + element(i) % rows),
        active=in_tile, loops=(element_loop, Loop("v", KW, every(KW))), blocks=smem_blocks))

    def c_col(i):
        return i.bx * rows + element(i) % rows

    def c_address(i):
        m = np.minimum(D0_M_ROWS * i.bz + element(i) // rows, M - 1)
        return base["C"] + F32 * (m * N + np.minimum(c_col(i), N - 1))

    c_x = shifted(nx, F32 * rows, edge=column_edge)
    c_z = zs(F32 * D0_M_ROWS * N)
    if S == 1:
        out.append(Instruction("stg C[m][n0+n]", "global", "store", F32, address=c_address,
                               active=lambda i: in_tile(i) & (c_col(i) < N), loops=(element_loop,),
                               blocks={"x": c_x, "y": same(S), "z": c_z}))
        return KernelAccess(grid=(nx, S, nz), block=(threads, 1, 1), instructions=tuple(out), **_work(M, N, K))

    def first(i):  # the tile's slice-0 plane: [z][s][x]
        return base["work"] + F32 * ((i.bz * S * nx + i.bx) * plane + element(i))

    def last(i):
        return i.by == S - 1

    work_blocks = {"x": same(nx), "y": ys, "z": zs(0)}  # planes of 64 x 16G bytes: whole lines
    out.append(Instruction(
        "stg.strong.gpu work[z][s][x][e] (the block's plane)", "global", "store", F32,
        address=lambda i: first(i) + F32 * i.by * nx * plane, active=in_tile, loops=(element_loop,),
        blocks=work_blocks))
    out.append(Instruction(
        "stg counters[z][x] = 0 (the last block)", "global", "store", F32,
        address=lambda i: base["counters"] + F32 * (i.bz * nx + i.bx),
        active=lambda i: last(i) & (i.tid == 0), blocks={"x": shifted(nx, F32), "y": ys, "z": every(nz)}))
    out.append(Instruction(
        "ldg.strong.gpu work[z][0][x][e] (the fixup)", "global", "load", F32,
        address=first, active=lambda i: last(i) & in_tile(i), loops=(element_loop,), blocks=work_blocks))
    out.append(Instruction(
        "ldg.strong.gpu work[z][p][x][e] (the fixup, p = 1 ..)", "global", "load", F32,
        address=lambda i: first(i) + F32 * (i.p + 1) * nx * plane,
        active=lambda i: last(i) & in_tile(i), loops=(element_loop, Loop("p", S - 1, every(S - 1))),
        blocks=work_blocks))
    out.append(Instruction("stg C[m][n0+n] (the fixup)", "global", "store", F32, address=c_address,
                           active=lambda i: last(i) & in_tile(i) & (c_col(i) < N), loops=(element_loop,),
                           blocks={"x": c_x, "y": ys, "z": c_z}))
    return KernelAccess(grid=(nx, S, nz), block=(threads, 1, 1), instructions=tuple(out), **_work(M, N, K))


def kc_access(params: Params, shape: Shape) -> KernelAccess:
    """kc_split_k_cluster.cu: tile t = bx / SPLIT of the grouped order (hopper.cuh grouped_tile's), k
    slice s = bx % SPLIT (the cluster rank). SPLIT = 1 is t3's model: one TMA load of A's and one of
    Bt's box per k-tile (kc waits one wgmma group deeper, which moves nothing) and the register
    epilogue. SPLIT > 1: the same TMA boxes and wgmma in all (each k-tile of a tile loaded by one
    block of its cluster), then, per consumer thread t of warpgroup c (threads 128 ..), Q = BN / 8
    STS.128 of its partial at [c][q][t] (16 bytes, 128 threads apart: 512 contiguous bytes a warp);
    then for its band q = s Q / SPLIT + j < (s + 1) Q / SPLIT (a rolled loop) SPLIT loads of 16 bytes
    at the same offset in ranks 0 .. SPLIT - 1 (ld.shared::cluster, SASS LD.E.128 on the cluster
    window) and two stores of C, rows 16 w + l / 4 (+ 8) of its 64-row half, columns 8 q + 2 (l % 4):
    STG.64 where N is even, else two STG.32 (col, col + 1), each guarded by the matrix's edge.
    Of the SPLIT cluster loads, the one to the block's own rank is declared a shared load (a 16-byte
    LSU request, 512 contiguous bytes a warp); those to its peers' shared memory are not: Nsight
    Compute's shared-load counts leave them out (H200, 2026-12-05, call 24: 4,096 requests and
    16,384 wavefronts at 16x4096x4096 in SPLIT = 2, where all SPLIT declared gave twice each), so
    they are the distributed-shared-memory traffic no counted quantity holds."""
    SPLIT = params["SPLIT"]
    base_model = tma_access(params, shape, consumer_first=128, threads=384)
    if SPLIT == 1:
        return base_model
    BM, BN = params["BM"], params["BN"]
    M, N = shape["M"], shape["N"]
    grid = _Grouped(M, N, BM, BN, params["GROUP_M"])
    quads = BN // 8
    band = cdiv(quads, SPLIT)  # the most float4s a block's band holds
    blocks = grid.blocks * SPLIT
    base = buffers(C=F32 * M * N)

    def slice_of(i):
        return i.bx % SPLIT

    def band_first(i):
        return slice_of(i) * quads // SPLIT

    def in_band(i):
        return (i.tid >= 128) & (i.j < (slice_of(i) + 1) * quads // SPLIT - band_first(i))

    def own_rank(i):  # the load a shared-memory counter sees: the block's own partial
        return in_band(i) & (i.r == slice_of(i))

    def partial_offset(i, q):
        c, t = (i.tid - 128) // 128, i.tid % 128
        return 16 * ((c * quads + q) * 128 + t)

    by_slice = {"x": tuple((s, grid.blocks) for s in range(SPLIT))}  # shared offsets: the slice alone
    out = [
        Instruction("sts.128 partial[c][q][t]", "shared", "store", 16,
                    address=lambda i: partial_offset(i, i.q), active=lambda i: i.tid >= 128,
                    loops=(Loop("q", quads, every(quads)),), blocks={"x": same(blocks)}),
        Instruction("ld.shared::cluster.v4 partial[c][q][t] of its own rank (LD.E.128)", "shared", "load", 16,
                    address=lambda i: partial_offset(i, band_first(i) + i.j), active=own_rank,
                    loops=(Loop("j", band, every(band)), Loop("r", SPLIT, every(SPLIT))), blocks=by_slice),
    ]

    def c_rc(i):
        bm, bn = grid.bm_bn(i.bx // SPLIT)
        t = i.tid % 128
        row = bm * BM + 64 * ((i.tid - 128) // 128) + 16 * (t // 32) + (t % 32) // 4 + 8 * i.h
        col = bn * BN + 8 * (band_first(i) + i.j) + 2 * (t % 4)
        return row, col

    def c_addr(i, plus=0):
        row, col = c_rc(i)
        return base["C"] + F32 * (np.minimum(row, M - 1) * N + np.minimum(col + plus, N - 1))

    def stores(i, plus):
        row, col = c_rc(i)
        return in_band(i) & (row < M) & (col + plus < N)

    tiles = grid.by_block(grid.row_classes(F32 * BM * N), grid.col_classes(F32 * BN))["x"]
    c_blocks = {"x": tuple((pid * SPLIT + s, n) for pid, n in tiles for s in range(SPLIT))}
    loops = (Loop("j", band, every(band)), Loop("h", 2, every(2)))
    if N % 2 == 0:
        out.append(Instruction("stg.64 C[row][col..col+1] (the band)", "global", "store", 8, address=c_addr,
                               active=lambda i: stores(i, 0), loops=loops, blocks=c_blocks))
    else:
        out += [Instruction(f"stg C[row][col+{plus}] (the band, N odd)", "global", "store", F32,
                            address=lambda i, plus=plus: c_addr(i, plus), active=lambda i, plus=plus: stores(i, plus),
                            loops=loops, blocks=c_blocks) for plus in (0, 1)]
    return KernelAccess(grid=(blocks, 1, 1), block=(384, 1, 1), instructions=tuple(out), bulk=base_model.bulk,
                        **_work(M, N, shape["K"]))


KS_BW = 128  # rows of Bt a ks tile holds (ks_stream_k_swap.cu BW): two consumer warpgroups of 64
KS_CONSUMERS = 256  # ks's consumer threads; thread 256 (warp 8, the producer) issues the TMA loads


class _KsSchedule:
    """ks's stream-K schedule (ks_stream_k_swap.cu owner, range_start, partial_slot, tile_origin), per
    tile and per block, as numpy arrays. Tile t: m0 = (t % m_tiles) TN, n0 = (t / m_tiles) 128; unit
    u = t KT + kt; block b of G runs units [b U / G, (b + 1) U / G). Tile t's contributors are blocks
    first[t] .. last[t] (the owners of its first and last unit); it is whole where they are one block.

    The fixup: the last contributor to arrive at a tile's counter adds the partials, a race. The model
    gives it to the tile's first contributor, `first[t]`: the tile's start is the end of that block's
    range, so it reaches the tile last of all its work, while the block that holds the tile's end
    starts its range there and arrives early; a contributor whose whole range lies inside the tile
    arrives about when the first does. Whoever adds, the same partials are read and the same C tile
    stored: only which block issues them moves."""

    def __init__(self, M: int, N: int, K: int, TN: int, blocks: int):
        self.M, self.N, self.TN = M, N, TN
        self.m_tiles, self.n_tiles, self.k_tiles = cdiv(M, TN), cdiv(N, KS_BW), cdiv(K, 64)
        self.tiles = self.m_tiles * self.n_tiles
        self.units = U = self.tiles * self.k_tiles
        G, KT = blocks, self.k_tiles
        t = np.arange(self.tiles, dtype=np.int64)
        self.first = ((t * KT + 1) * G - 1) // U  # owner(t KT)
        self.last = ((t + 1) * KT * G - 1) // U  # owner((t + 1) KT - 1)
        self.whole = self.first == self.last
        b = np.arange(G, dtype=np.int64)
        self.start = b * U // G  # range_start(b)
        end = (b + 1) * U // G
        first_tile, last_tile = self.start // KT, (end - 1) // KT

        # C: every tile stored once, by first[t] (whole: its only block; split: the fixup). A block's
        # C tiles are a run of tiles (first[] never decreases), here ordered by their class (c_key) so
        # that the s-th of every block of a class is alike.
        lo = np.searchsorted(self.first, b, "left")
        self.c_count = np.searchsorted(self.first, b, "right") - lo
        s = np.arange(max(1, int(self.c_count.max())), dtype=np.int64)
        held = s[None, :] < self.c_count[:, None]
        tiles_of = np.where(held, lo[:, None] + s[None, :], 0)
        keys = np.where(held, self.c_key(tiles_of), np.iinfo(np.int64).max)
        order = np.argsort(keys, axis=1, kind="stable")
        self.c_tile = np.where(held, np.take_along_axis(tiles_of, order, axis=1), -1)  # [b][s], -1: none
        self.c_keys = np.where(held, np.take_along_axis(keys, order, axis=1), -1)

        # Partials: a block's first tile where it is not whole (slot 2b), its last where that is another
        # tile and not whole (slot 2b + 1); the tiles between are whole.
        first_split = ~self.whole[first_tile]
        last_split = (last_tile != first_tile) & ~self.whole[last_tile]
        self.p_slot = np.stack([np.where(first_split, 2 * b, -1), np.where(last_split, 2 * b + 1, -1)], axis=1)
        self.p_count = first_split.astype(np.int64) + last_split

        # The fixup of block b: the split tile it is the first contributor of (its last tile, at most
        # one), its own slot of that tile and the tile's number of contributors.
        self.fix_tile = np.full(G, -1, dtype=np.int64)
        split = np.flatnonzero(~self.whole)
        assert np.unique(self.first[split]).size == split.size, "a block adds up two split tiles"
        self.fix_tile[self.first[split]] = split
        has = self.fix_tile >= 0
        ft = np.maximum(self.fix_tile, 0)
        self.fix_slot = np.where(has, 2 * b + (self.start != ft * KT), -1)  # partial_slot(first[t], t)
        self.contributors = np.where(has, self.last[ft] - self.first[ft] + 1, 0)

    def c_key(self, t):
        """What a tile's C stores depend on: C's rows of the tile start (m0 N 4) mod 128 bytes into a line
        (n0 4 is a multiple of 512), and whether M cuts the tile (the last token tile, M % TN != 0) or N
        does (the last tile of Bt rows, N % 128 != 0)."""
        tm, tn = t % self.m_tiles, t // self.m_tiles
        cut_m = (tm == self.m_tiles - 1) & (self.M % self.TN != 0)
        cut_n = (tn == self.n_tiles - 1) & (self.N % KS_BW != 0)
        return ((tm * self.TN * self.N * F32) % 128) * 4 + 2 * cut_m + cut_n

    def origin(self, t):
        return (t % self.m_tiles) * self.TN, (t // self.m_tiles) * KS_BW


def ks_rereads(sched: _KsSchedule, TN: int, l2: int) -> int:
    """The bytes of Bt that ks reads from DRAM again. Each 64-k chunk of a tile of Bt rows is read
    once per token tile, by the units t KT + kt of its consecutive tiles (token tiles fastest), which
    stream-K gives to blocks that reach them at different moments: unit u runs u - range_start(owner)
    units into its block's range. Between two reads of a chunk the card's G blocks read about that
    many units' Bt and A apiece; where that is more than the L2 (`l2` bytes) holds, the later read
    comes from DRAM. At 32x3584x18944 in 16-token tiles (two passes over Bt's 136 MB, 125.6 units a
    block on 132 blocks) the two reads of a chunk are 45 or 81 units apart, 106 MB and more between:
    ks ran 99.9 us against kc's 70.7 on an H100, as if it read Bt twice (2026-12-06)."""
    if sched.m_tiles == 1:
        return 0
    G, U, KT = len(sched.start), sched.units, sched.k_tiles
    u = np.arange(U, dtype=np.int64)
    at = u - sched.start[((u + 1) * G - 1) // U]  # units into its block's range (owner(u), range_start)
    again = u[(u // KT) % sched.m_tiles > 0]  # a token tile past the first: its chunk was read at u - KT
    between = np.abs(at[again] - at[again - KT]) * G * (KS_BW + TN) * 64 * BF16
    return int(np.count_nonzero(between > l2)) * KS_BW * 64 * BF16


def _thresholds(limits, n: int) -> tuple[tuple[int, int], ...]:
    """Classes of range(n) for a loop index p that a block runs while p < limit (one limit per block
    class): the indices between two consecutive limits are alike for every block."""
    cuts = sorted({int(x) for x in limits if 0 < x < n} | {0, n})
    return tuple((a, b - a) for a, b in zip(cuts, cuts[1:]) if b > a)


def ks_access(params: Params, shape: Shape, blocks: int) -> KernelAccess:
    """ks_stream_k_swap.cu on its single wave of `blocks` blocks (swap_stream_k.ks_blocks) of 288
    threads: consumer warpgroups 0 and 1 (threads 0-255), then the producer warp (its lane 0 issues
    every TMA load). The schedule (tiles of 128 Bt rows x TN tokens, token tiles fastest; stream-K
    units (tile, k-tile) cut evenly over the blocks) is _KsSchedule, which also says which block the
    model gives a split tile's fixup to (the race's convention: the tile's first contributor).

    Bulk counts: per unit the producer issues 2 UTMALDG, Bt's box (128 rows x 64 k) and A's (TN rows x
    64 k); the bytes are _tma_sectors' rule, Bt's 128-row boxes read once per token tile and A's
    TN-row boxes once per tile of Bt rows (box rows past M or N counted as Nsight Compute counts them on
    the H200, 4 sectors a k-tile; K not a multiple of 8 reads the staged pitch, row_pitch(K)). Per unit
    each of the 8 consumer warps issues 4 HGMMA (m64nTNk16, one per 16 k).

    Warp memory instructions, per segment (a block's run of units inside one tile), read off nvdisasm
    of NVRTC 13.5's sm_90a cubin (TN = 16 and 128: ACC = TN / 2 of each, scalar 32-bit, none
    vectorized). Consumer thread ct (warp w = ct / 32 % 4 of warpgroup c = ct / 128, lane l):
    - C (a whole tile, or a split tile's fixup): ACC STG.E, accumulator i = 4 q + r at
      n = n0 + 64 c + 16 w + l / 4 + 8 (r / 2), m = m0 + 8 q + 2 (l % 4) + r % 2, under m < M, n < N;
    - a split tile's partial: ACC STG.E.STRONG.GPU (__stcg) at work[slot][j 256 + ct], then thread 0's
      ATOMG on the tile's counter (an atomic: neither a load nor a store here), its STS of the verdict
      and every consumer thread's LDS of it (one shared word);
    - the fixup block: thread 0's STG.E of the counter's zero, ACC LDG.E.STRONG.GPU (__ldcg) of the first
      contributor's partial and ACC of each further contributor's, in block order (the kernel issues
      them FIXUP_CHUNK contributors at a time, unrolled: the same loads, here one loop over p).
    A block's partial of its first tile is in slot 2b, of its last in 2b + 1: 128 TN floats apart, so
    every partial access is one 128-byte line a warp."""
    TN = params["TN"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    acc = TN // 2
    sched = _KsSchedule(M, N, K, TN, blocks)
    G, KT = blocks, sched.k_tiles
    partial = KS_BW * TN  # floats
    base = buffers(C=F32 * M * N, work=F32 * 2 * G * partial, counters=F32 * sched.tiles)

    def consumer(i):
        return i.tid < KS_CONSUMERS

    # -- C: block b's C tiles (s < c_count[b]), ordered by class --------------------------------------
    rows_last = M - (sched.m_tiles - 1) * TN  # rows of A in the last token tile
    q = np.arange(TN // 8)
    state = np.where(8 * q + 8 <= rows_last, 0, np.where(8 * q < rows_last, 1, 2))  # in, cut, out
    q_loop = Loop("q", TN // 8, _by_key(np.stack([state, (8 * F32 * N * q) % 128], axis=1)))
    c_blocks = {"x": _by_key(sched.c_keys)}
    reps = [r for r, _ in c_blocks["x"]]
    s_loop = Loop("s", sched.c_tile.shape[1], _by_key(sched.c_keys[reps].T))

    def c_mn(i):
        t = sched.c_tile[i.bx, i.s]
        m0, n0 = sched.origin(np.maximum(t, 0))
        w, lane = (i.tid // 32) % 4, i.tid % 32
        n = n0 + 64 * (i.tid // 128) + 16 * w + lane // 4 + 8 * (i.r // 2)
        m = m0 + 8 * i.q + 2 * (lane % 4) + i.r % 2
        return t, m, n

    def c_address(i):
        _, m, n = c_mn(i)
        return base["C"] + F32 * (np.minimum(m, M - 1) * N + np.minimum(n, N - 1))

    def c_stores(i):
        t, m, n = c_mn(i)
        return consumer(i) & (t >= 0) & (m < M) & (n < N)

    out = [Instruction("stg C[m][n] (a whole tile, or a split tile's fixup)", "global", "store", F32,
                       address=c_address, active=c_stores, loops=(s_loop, q_loop, Loop("r", 4, every(4))),
                       blocks=c_blocks)]

    # -- the partials, the counter, the fixup ---------------------------------------------------------
    j_loop = Loop("j", acc, shifted(acc, F32 * KS_CONSUMERS))  # 1024 bytes apart: one class

    def work(slot, i):
        return base["work"] + F32 * (np.maximum(slot, 0) * partial + KS_CONSUMERS * i.j + i.tid)

    if sched.p_count.any():
        p_blocks = {"x": _by_key(sched.p_slot >= 0)}
        seg_loop = Loop("s", 2, every(2))

        def splits(i):
            return sched.p_slot[i.bx, i.s] >= 0

        out += [
            Instruction("stg.strong.gpu work[slot][j][ct] (__stcg, the block's partial)", "global", "store", F32,
                        address=lambda i: work(sched.p_slot[i.bx, i.s], i), active=lambda i: consumer(i) & splits(i),
                        loops=(seg_loop, j_loop), blocks=p_blocks),
            Instruction("sts last_here (thread 0, after the counter's atomic)", "shared", "store", F32,
                        address=lambda i: 0 * i.tid, active=lambda i: (i.tid == 0) & splits(i), loops=(seg_loop,),
                        blocks=p_blocks),
            Instruction("lds last_here (every consumer thread)", "shared", "load", F32, address=lambda i: 0 * i.tid,
                        active=lambda i: consumer(i) & splits(i), loops=(seg_loop,), blocks=p_blocks),
        ]
        f_blocks = {"x": _by_key(sched.contributors)}
        more = int(sched.contributors.max()) - 1  # contributors past the first

        def fixes(i):
            return sched.fix_tile[i.bx] >= 0

        out += [
            Instruction("stg counters[t] = 0 (thread 0 of the fixup block)", "global", "store", F32,
                        address=lambda i: base["counters"] + F32 * np.maximum(sched.fix_tile[i.bx], 0) + 0 * i.tid,
                        active=lambda i: (i.tid == 0) & fixes(i), blocks={"x": _by_key(sched.fix_tile >= 0)}),
            Instruction("ldg.strong.gpu work[slot(first)][j][ct] (__ldcg, the fixup)", "global", "load", F32,
                        address=lambda i: work(sched.fix_slot[i.bx], i), active=lambda i: consumer(i) & fixes(i),
                        loops=(j_loop,), blocks=f_blocks),
            # contributor b + 1 + p starts its range inside the tile: its partial is in its slot 2 (b + 1 + p)
            Instruction("ldg.strong.gpu work[slot(p)][j][ct] (__ldcg, the fixup, p = first + 1 ..)", "global", "load",
                        F32, address=lambda i: work(2 * (i.bx + 1 + i.p), i),
                        active=lambda i: consumer(i) & fixes(i) & (i.p < sched.contributors[i.bx] - 1),
                        loops=(Loop("p", more, _thresholds(sched.contributors - 1, more)), j_loop), blocks=f_blocks),
        ]

    pitch = row_pitch(K)
    bulk = {
        "tma_load_requests": 2 * sched.units,
        "tma_load_bytes": 32 * (sched.m_tiles * _tma_sectors(sched.n_tiles * KS_BW, N, pitch, KT)
                                + sched.n_tiles * _tma_sectors(sched.m_tiles * TN, M, pitch, KT)),
        "gmma_requests": sched.units * (KS_CONSUMERS // 32) * 4,
    }
    floor = _work(M, N, K)
    # Its DRAM floor: the inputs once, and the passes over Bt the L2 does not keep
    floor["dram_compulsory_bytes"] += ks_rereads(sched, TN, l2_bytes())
    return KernelAccess(grid=(G, 1, 1), block=(KS_CONSUMERS + 32, 1, 1), instructions=tuple(out), bulk=bulk, **floor)
