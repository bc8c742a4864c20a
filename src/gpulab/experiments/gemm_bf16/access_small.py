"""Access models of gemm_bf16's kernels for few output tiles: d0 (decode, M <= 16) and kc (split-K
across a cluster), for `gpulab predict`; the style of access.py (one `Instruction` per SASS memory
instruction, read off nvdisasm of NVRTC 13.5's sm_90 / sm_90a cubins at the default params)."""

from __future__ import annotations

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.experiments.gemm_bf16.access import BF16, F32, _Grouped, _work, tma_access
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
    The cluster loads are declared as shared loads: they are 16-byte LSU requests to a block's shared
    memory, 512 contiguous bytes a warp. How Nsight Compute counts loads to a peer's shared memory is
    not measured on the H200 yet; fidelity holds this declaration to the card."""
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

    def partial_offset(i, q):
        c, t = (i.tid - 128) // 128, i.tid % 128
        return 16 * ((c * quads + q) * 128 + t)

    by_slice = {"x": tuple((s, grid.blocks) for s in range(SPLIT))}  # shared offsets: the slice alone
    out = [
        Instruction("sts.128 partial[c][q][t]", "shared", "store", 16,
                    address=lambda i: partial_offset(i, i.q), active=lambda i: i.tid >= 128,
                    loops=(Loop("q", quads, every(quads)),), blocks={"x": same(blocks)}),
        Instruction("ld.shared::cluster.v4 partial[c][q][t] of rank r (LD.E.128)", "shared", "load", 16,
                    address=lambda i: partial_offset(i, band_first(i) + i.j), active=in_band,
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
