"""Access models of gemm_bf16's kernels for few output tiles: d0 (decode, M <= 16) and kc (split-K
across a cluster), for `gpulab predict`; the style of access.py (one `Instruction` per SASS memory
instruction, read off nvdisasm of NVRTC 13.5's sm_90 / sm_90a cubins at the default params)."""

from __future__ import annotations

import numpy as np

from gpulab.arith import cdiv
from gpulab.errors import NotModelled
from gpulab.experiments.base import Params, Shape
from gpulab.experiments.gemm_bf16.access import BF16, F32, _work, tma_access
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, every, ragged, same, shifted

D0_M_ROWS = 16  # rows of A a d0 partial holds (d0_decode.cu RED_ROWS)


def d0_access(params: Params, shape: Shape, slices: int) -> KernelAccess:
    """d0_decode.cu on a grid of cdiv(N, 16G) block columns by `slices` k slices (the host's S).

    Block (bx, s), warp w of KW, lane l = 4 r + q: rows n = 16G bx + 16 g + r + 8 h of Bt (g < G,
    h < 2) and m = 8 t + r of A (t < 1, or 2 where M > 8); warp-slice v = s KW + w runs steps
    [v T / (S KW), (v + 1) T / (S KW)) of the T = cdiv(K, 32 U), its step st reading chunk
    c = st 4U + 4u + q (u < U) of each row. K % 8 == 0: one LDG.128 per chunk (Bt
    LDG.E.NA.LTC256B.128.CONSTANT, A LDG.E.128.CONSTANT), guarded by row < rows and 8 c < K;
    otherwise 8 LDG.U16 per chunk (element e guarded by 8 c + e < K, the row by a branch). Then
    G x NM x 4 STS.32 of the fragment (acc[g][t][i] at m = 8t + 2q + i % 2, n = 16g + r + 8 (i / 2),
    rows 16G + 4 floats apart), a barrier, and a rolled loop over the elements e = tid + j 32 KW <
    M x 16G (m = e / 16G, n = e % 16G): KW LDS.32 (warp order) and, with S = 1, the STG.32 of C
    (guard n0 + n < N); with S > 1 an STG.STRONG.GPU of the block's plane in the workspace. Then the
    ticket (split_k.cuh: ATOMG, not a load or store here; thread 0 of the last block stores the
    counter's zero) and the last block's rolled loop: 1 + (S - 1) LDG.STRONG.GPU of the S planes and
    the STG of C. Which block is last is a race; every block of a column would run the same
    addresses, so the model gives the fixup to slice S - 1."""
    G, U, KW = params["G"], params["U"], params["KW"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    rows = 16 * G
    threads = 32 * KW
    nx, S = cdiv(N, rows), slices
    steps = cdiv(K, 32 * U)
    trips = cdiv(steps, S * KW)  # the most steps a warp runs
    nm = 2 if M > 8 else 1
    vec = K % 8 == 0
    pitch = rows + 4
    base = buffers(A=BF16 * M * K, Bt=BF16 * N * K, C=F32 * M * N, work=F32 * S * nx * D0_M_ROWS * rows,
                   counters=F32 * nx)

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

    def a_row(i):
        return 8 * i.t + i.lane // 4

    # Steps move every address by 64 U bytes; the last two may leave a warp idle or cross K.
    step_loop = Loop("st", trips, shifted(trips, 2 * 32 * U, edge=(trips - 2, trips - 1)))
    u_loop = Loop("u", U, every(U))
    ys = every(S)
    column_edge = ragged(nx, rows, N)
    bt_blocks = {"x": shifted(nx, BF16 * rows * K, edge=column_edge), "y": ys}
    a_blocks = {"x": same(nx), "y": ys}
    out = []
    for name, src, row, extent, loops, blocks in (
        ("Bt", base["Bt"], bt_row, N, (step_loop, u_loop, Loop("g", G, every(G)), Loop("h", 2, every(2))), bt_blocks),
        ("A", base["A"], a_row, M, (step_loop, u_loop, Loop("t", nm, every(nm))), a_blocks),
    ):
        if vec:
            out.append(Instruction(
                f"ldg.128 {name}[row][8c..8c+7]", "global", "load", 16,
                address=lambda i, src=src, row=row, extent=extent:
                    src + BF16 * (np.minimum(row(i), extent - 1) * K + 8 * chunk(i)),
                active=lambda i, row=row, extent=extent:
                    (i.st < warp_steps(i)) & (row(i) < extent) & (8 * chunk(i) < K),
                loops=loops, blocks=blocks))
        else:
            out.append(Instruction(
                f"ldg.u16 {name}[row][8c+e] (K % 8 != 0)", "global", "load", BF16,
                address=lambda i, src=src, row=row, extent=extent:
                    src + BF16 * (np.minimum(row(i), extent - 1) * K + 8 * chunk(i) + i.e),
                active=lambda i, row=row, extent=extent:
                    (i.st < warp_steps(i)) & (row(i) < extent) & (8 * chunk(i) + i.e < K),
                loops=(*loops, Loop("e", 8, every(8))), blocks=blocks))

    smem_blocks = {"x": same(nx), "y": same(S)}
    out.append(Instruction(
        "sts red[w][m][n] (the warp's fragment)", "shared", "store", F32,
        address=lambda i: F32 * ((i.warp * D0_M_ROWS + 8 * i.t + 2 * (i.lane % 4) + i.c % 2) * pitch
                                 + 16 * i.g + i.lane // 4 + 8 * (i.c // 2)),
        loops=(Loop("g", G, every(G)), Loop("t", nm, every(nm)), Loop("c", 4, every(4))), blocks=smem_blocks))

    elements = M * rows
    passes = cdiv(elements, threads)
    element_loop = Loop("j", passes, every(passes))

    def element(i):
        return i.tid + i.j * threads

    def in_tile(i):
        return element(i) < elements

    out.append(Instruction(
        "lds red[v][m][n] (the block's sum)", "shared", "load", F32,
        address=lambda i: F32 * ((i.v * D0_M_ROWS + element(i) // rows) * pitch + element(i) % rows),
        active=in_tile, loops=(element_loop, Loop("v", KW, every(KW))), blocks=smem_blocks))

    def c_col(i):
        return i.bx * rows + element(i) % rows

    def c_address(i):
        return base["C"] + F32 * ((element(i) // rows) * N + np.minimum(c_col(i), N - 1))

    c_blocks = {"x": shifted(nx, F32 * rows, edge=column_edge), "y": same(S)}
    if S == 1:
        out.append(Instruction("stg C[m][n0+n]", "global", "store", F32, address=c_address,
                               active=lambda i: in_tile(i) & (c_col(i) < N), loops=(element_loop,), blocks=c_blocks))
        return KernelAccess(grid=(nx, S, 1), block=(threads, 1, 1), instructions=tuple(out), **_work(M, N, K))

    plane = D0_M_ROWS * rows

    def last(i):
        return i.by == S - 1

    work_blocks = {"x": same(nx), "y": ys}  # planes of 64 x 16G bytes: whole lines
    out.append(Instruction(
        "stg.strong.gpu work[s][bx][e] (the block's plane)", "global", "store", F32,
        address=lambda i: base["work"] + F32 * ((i.by * nx + i.bx) * plane + element(i)),
        active=in_tile, loops=(element_loop,), blocks=work_blocks))
    out.append(Instruction(
        "stg counters[bx] = 0 (the last block)", "global", "store", F32,
        address=lambda i: base["counters"] + F32 * i.bx,
        active=lambda i: last(i) & (i.tid == 0), blocks={"x": shifted(nx, F32), "y": ys}))
    out.append(Instruction(
        "ldg.strong.gpu work[0][bx][e] (the fixup)", "global", "load", F32,
        address=lambda i: base["work"] + F32 * (i.bx * plane + element(i)),
        active=lambda i: last(i) & in_tile(i), loops=(element_loop,), blocks=work_blocks))
    out.append(Instruction(
        "ldg.strong.gpu work[p][bx][e] (the fixup, p = 1 ..)", "global", "load", F32,
        address=lambda i: base["work"] + F32 * (((i.p + 1) * nx + i.bx) * plane + element(i)),
        active=lambda i: last(i) & in_tile(i), loops=(element_loop, Loop("p", S - 1, every(S - 1))),
        blocks=work_blocks))
    out.append(Instruction("stg C[m][n0+n] (the fixup)", "global", "store", F32, address=c_address,
                           active=lambda i: last(i) & in_tile(i) & (c_col(i) < N), loops=(element_loop,),
                           blocks={"x": c_blocks["x"], "y": ys}))
    return KernelAccess(grid=(nx, S, 1), block=(threads, 1, 1), instructions=tuple(out), **_work(M, N, K))
