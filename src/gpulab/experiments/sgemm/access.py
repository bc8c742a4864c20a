"""Access models of the SGEMM variants: what each kernel asks of memory, for `gpulab predict`.

One `Instruction` per SASS memory instruction of the kernel (read off `nvdisasm` of the sm_90
cubin), with the index math of the `.cu` file. Row-major: A is M x K, B is K x N, C is M x N,
float32, so element (r, c) of a matrix with `cols` columns is at base + 4 * (r * cols + c).
See gpulab.model.predict for the API and for what the symmetry classes promise.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import (
    Classes,
    Instruction,
    KernelAccess,
    Loop,
    buffers,
    every,
    ragged,
    same,
    shifted,
)

F32 = 4


def _work(M: int, N: int, K: int) -> dict:
    # 2 flops per multiply-add; A and B read once and C written once is the DRAM floor.
    return {"flops": 2.0 * M * N * K, "dram_compulsory_bytes": F32 * (M * K + K * N + M * N)}


def v0_access(params: Params, shape: Shape) -> KernelAccess:
    """v0_naive.cu: thread (tx, ty) of block (bx, by) computes C[row][col], row = by*B + ty,
    col = bx*B + tx, and returns first when it is outside C.

    Per k step a warp issues one LDG A[row][p] (one address per row: BLOCK=16 puts two rows in a
    warp, so 2 sectors; BLOCK=32, one row, 1 sector) and one LDG B[p][col] (BLOCK consecutive
    floats: 2 or 4 sectors). The compiler unrolls the p loop by 4 but keeps scalar LDG.32 (the
    alignment of row*K + p is unknown), so there are exactly K of each per thread.
    """
    B = params["BLOCK"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    nx, ny = cdiv(N, B), cdiv(M, B)
    base = buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N)

    def row(i):
        return i.by * B + i.ty

    def col(i):
        return i.bx * B + i.tx

    def inside(i):  # the early return: threads outside C do nothing
        return (row(i) < M) & (col(i) < N)

    x_edge, y_edge = ragged(nx, B, N), ragged(ny, B, M)
    p_loop_a = Loop("p", K, shifted(K, F32))  # A moves one float per step: 32 residues mod 128 B
    p_loop_b = Loop("p", K, shifted(K, F32 * N))  # B moves one row per step
    instructions = (
        Instruction(
            "ldg A[row][p]", "global", "load", F32,
            address=lambda i: base["A"] + F32 * (row(i) * K + i.p),
            active=inside, loops=(p_loop_a,),
            blocks={"x": shifted(nx, 0, x_edge), "y": shifted(ny, F32 * B * K, y_edge)},
        ),
        Instruction(
            "ldg B[p][col]", "global", "load", F32,
            address=lambda i: base["B"] + F32 * (i.p * N + col(i)),
            active=inside, loops=(p_loop_b,),
            blocks={"x": shifted(nx, F32 * B, x_edge), "y": shifted(ny, 0, y_edge)},
        ),
        Instruction(
            "stg C[row][col]", "global", "store", F32,
            address=lambda i: base["C"] + F32 * (row(i) * N + col(i)),
            active=inside,
            blocks={"x": shifted(nx, F32 * B, x_edge), "y": shifted(ny, F32 * B * N, y_edge)},
        ),
    )
    return KernelAccess(grid=(nx, ny, 1), block=(B, B, 1), instructions=instructions, **_work(M, N, K))


def v1_access(params: Params, shape: Shape) -> KernelAccess:
    """v1_smem_tiling.cu: per tile step kt, each thread loads one element of A and of B (guarded
    ternaries: predicated LDG, unconditional STS of the value or 0), then reads As[ty][p] and
    Bs[p][tx] for p < TILE.

    The SASS differs from the source in one way that matters to the counts: the unrolled p loop
    reads As[ty][p..p+3] with one LDS.128 (the row is 16-byte aligned), so a warp issues TILE/4
    LDS.128 for As and TILE LDS.32 for Bs per step, not 2*TILE LDS.32. Every lane of an LDS.128
    of one row reads the same address, so the pair rule merges its quarter-warps: 2 wavefronts.
    As and Bs are each a multiple of 128 bytes, so their order in shared memory changes no bank.
    """
    T = params["TILE"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    nx, ny, nk = cdiv(N, T), cdiv(M, T), cdiv(K, T)
    base = buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N)
    As, Bs = 0, F32 * T * T  # shared-memory offsets of the two tiles

    def row(i):
        return i.by * T + i.ty

    def col(i):
        return i.bx * T + i.tx

    x_edge, y_edge, k_edge = ragged(nx, T, N), ragged(ny, T, M), ragged(nk, T, K)
    every_step = Loop("kt", nk, same(nk))  # shared addresses do not depend on the tile step

    instructions = (
        Instruction(
            "ldg A[row][kt*T+tx]", "global", "load", F32,
            address=lambda i: base["A"] + F32 * (row(i) * K + i.kt * T + i.tx),
            active=lambda i: (row(i) < M) & (i.kt * T + i.tx < K),
            loops=(Loop("kt", nk, shifted(nk, F32 * T, k_edge)),),
            blocks={"x": same(nx), "y": shifted(ny, F32 * T * K, y_edge)},
        ),
        Instruction(
            "ldg B[kt*T+ty][col]", "global", "load", F32,
            address=lambda i: base["B"] + F32 * ((i.kt * T + i.ty) * N + col(i)),
            active=lambda i: (i.kt * T + i.ty < K) & (col(i) < N),
            loops=(Loop("kt", nk, shifted(nk, F32 * T * N, k_edge)),),
            blocks={"x": shifted(nx, F32 * T, x_edge), "y": same(ny)},
        ),
        Instruction(
            "sts As[ty][tx]", "shared", "store", F32,
            address=lambda i: As + F32 * (i.ty * T + i.tx),
            loops=(every_step,), blocks={"x": same(nx), "y": same(ny)},
        ),
        Instruction(
            "sts Bs[ty][tx]", "shared", "store", F32,
            address=lambda i: Bs + F32 * (i.ty * T + i.tx),
            loops=(every_step,), blocks={"x": same(nx), "y": same(ny)},
        ),
        Instruction(
            "lds.128 As[ty][4q..4q+3]", "shared", "load", 4 * F32,
            address=lambda i: As + F32 * (i.ty * T + 4 * i.q),
            loops=(every_step, Loop("q", T // 4, every(T // 4))),
            blocks={"x": same(nx), "y": same(ny)},
        ),
        Instruction(
            "lds Bs[p][tx]", "shared", "load", F32,
            address=lambda i: Bs + F32 * (i.p * T + i.tx),
            loops=(every_step, Loop("p", T, shifted(T, F32 * T))),
            blocks={"x": same(nx), "y": same(ny)},
        ),
        Instruction(
            "stg C[row][col]", "global", "store", F32,
            address=lambda i: base["C"] + F32 * (row(i) * N + col(i)),
            active=lambda i: (row(i) < M) & (col(i) < N),
            blocks={"x": shifted(nx, F32 * T, x_edge), "y": shifted(ny, F32 * T * N, y_edge)},
        ),
    )
    return KernelAccess(grid=(nx, ny, 1), block=(T, T, 1), instructions=instructions, **_work(M, N, K))


# -- the ladder above v1 --------------------------------------------------------------------------
# The SASS facts each model below states were read with nvdisasm from NVRTC 13.5's sm_90 cubins
# (param grids as each docstring says); NVRTC 13.0, the H200's, issues the same memory instructions
# at every default config (v7: the same ones in another order).
# What v2 and later share. Every tile dimension is a power of two, so a strided fill loop
# `for (e = tid; e < E; e += THREADS)` gives every thread the same number of trips (E a multiple of
# THREADS) or at most one (E < THREADS): the compiler's remainder-then-unrolled loop then runs the
# trips in source order, all lanes of a warp together, and a model that walks e = tid + l*THREADS
# for l < ceil(E / THREADS) is the SASS's order.


class _Tiles:
    """The launch geometry and the symmetry classes every rung from v2 on uses: a BM x BN tile of C
    per block (grid ceil(N/BN) x ceil(M/BM)), K walked in steps of BK."""

    def __init__(self, params: Params, shape: Shape, threads: int):
        self.BM, self.BN, self.BK = params["BM"], params["BN"], params["BK"]
        self.M, self.N, self.K = shape["M"], shape["N"], shape["K"]
        self.threads = threads
        self.WM, self.WN = params.get("WM"), params.get("WN")  # v6 and later: the warp tile
        self.nx, self.ny, self.nk = cdiv(self.N, self.BN), cdiv(self.M, self.BM), cdiv(self.K, self.BK)
        self.base = buffers(A=F32 * self.M * self.K, B=F32 * self.K * self.N, C=F32 * self.M * self.N)
        self.x_edge = ragged(self.nx, self.BN, self.N)
        self.y_edge = ragged(self.ny, self.BM, self.M)
        self.k_edge = ragged(self.nk, self.BK, self.K)

    def grid(self) -> tuple[int, int, int]:
        return (self.nx, self.ny, 1)

    # classes: A moves with the block row and the k step; B with the block column and the k step
    def a_blocks(self):
        return {"x": same(self.nx), "y": shifted(self.ny, F32 * self.BM * self.K, self.y_edge)}

    def b_blocks(self):
        return {"x": shifted(self.nx, F32 * self.BN, self.x_edge), "y": same(self.ny)}

    def c_blocks(self):
        return {"x": shifted(self.nx, F32 * self.BN, self.x_edge), "y": shifted(self.ny, F32 * self.BM * self.N, self.y_edge)}

    def smem_blocks(self):
        return {"x": same(self.nx), "y": same(self.ny)}

    def a_steps(self, name="kt"):
        return Loop(name, self.nk, shifted(self.nk, F32 * self.BK, self.k_edge))

    def b_steps(self, name="kt"):
        return Loop(name, self.nk, shifted(self.nk, F32 * self.BK * self.N, self.k_edge))

    def smem_steps(self, name="kt"):
        return Loop(name, self.nk, same(self.nk))

    def work(self) -> dict:
        return _work(self.M, self.N, self.K)


def _scalar_fills(t: _Tiles, As: int, Bs: int) -> tuple[Instruction, ...]:
    """v2/v3's tile loads: element e of the BM x BK tile of A (row e / BK, column e % BK) and of the
    BK x BN tile of B (row e / BN, column e % BN), e = tid + l*THREADS; one LDG.32 predicated on the
    element being inside the matrix, one STS.32 of it (or of 0) into As[BM][BK] / Bs[BK][BN]."""
    BM, BN, BK, M, N, K, T = t.BM, t.BN, t.BK, t.M, t.N, t.K, t.threads
    ea, eb = BM * BK, BK * BN
    la, lb = Loop("la", cdiv(ea, T), every(cdiv(ea, T))), Loop("lb", cdiv(eb, T), every(cdiv(eb, T)))

    def ea_(i):
        return i.tid + i.la * T

    def eb_(i):
        return i.tid + i.lb * T

    def a_row(i):
        return i.by * BM + ea_(i) // BK

    def a_col(i):
        return i.kt * BK + ea_(i) % BK

    def b_row(i):
        return i.kt * BK + eb_(i) // BN

    def b_col(i):
        return i.bx * BN + eb_(i) % BN

    return (
        Instruction("ldg A (tile fill)", "global", "load", F32,
                    address=lambda i: t.base["A"] + F32 * (a_row(i) * K + a_col(i)),
                    active=lambda i: (ea_(i) < ea) & (a_row(i) < M) & (a_col(i) < K),
                    loops=(t.a_steps(), la), blocks=t.a_blocks()),
        Instruction("sts As[e/BK][e%BK]", "shared", "store", F32, address=lambda i: As + F32 * ea_(i),
                    active=lambda i: ea_(i) < ea, loops=(t.smem_steps(), la), blocks=t.smem_blocks()),
        Instruction("ldg B (tile fill)", "global", "load", F32,
                    address=lambda i: t.base["B"] + F32 * (b_row(i) * N + b_col(i)),
                    active=lambda i: (eb_(i) < eb) & (b_row(i) < K) & (b_col(i) < N),
                    loops=(t.b_steps(), lb), blocks=t.b_blocks()),
        Instruction("sts Bs[e/BN][e%BN]", "shared", "store", F32, address=lambda i: Bs + F32 * eb_(i),
                    active=lambda i: eb_(i) < eb, loops=(t.smem_steps(), lb), blocks=t.smem_blocks()),
    )


def v2_access(params: Params, shape: Shape) -> KernelAccess:
    """v2_1d_blocktiling.cu: THREADS = BM*BN/TM; thread (tx = tid % BN, ty = tid / BN) keeps TM
    accumulators for rows ty*TM .. ty*TM+TM-1 of column tx.

    Assumes (checked in the SASS of every config of the param grid): the tile
    fills of `_scalar_fills`; per tile step, the unrolled k loop reads As[ty*TM+i][4q..4q+3] with
    TM*BK/4 LDS.128 (a row of As is BK floats, 16-byte aligned) and Bs[k][tx] with BK LDS.32; the
    epilogue exits when col >= N and writes each of the TM rows with its own guarded STG.32.
    As (BM*BK floats, a multiple of 128 B) sits before Bs in shared memory.
    """
    TM = params["TM"]
    threads = params["BM"] * params["BN"] // TM
    t = _Tiles(params, shape, threads)
    BN, BK, M, N = t.BN, t.BK, t.M, t.N
    As, Bs = 0, F32 * t.BM * BK

    def tx(i):
        return i.tid % BN

    def ty(i):
        return i.tid // BN

    def row(i):
        return i.by * t.BM + ty(i) * TM + i.m

    def col(i):
        return i.bx * BN + tx(i)

    instructions = (
        *_scalar_fills(t, As, Bs),
        Instruction("lds.128 As[ty*TM+m][4q..4q+3]", "shared", "load", 4 * F32,
                    address=lambda i: As + F32 * ((ty(i) * TM + i.m) * BK + 4 * i.q),
                    loops=(t.smem_steps(), Loop("m", TM, every(TM)), Loop("q", BK // 4, every(BK // 4))),
                    blocks=t.smem_blocks()),
        Instruction("lds Bs[k][tx]", "shared", "load", F32, address=lambda i: Bs + F32 * (i.k * BN + tx(i)),
                    loops=(t.smem_steps(), Loop("k", BK, every(BK))), blocks=t.smem_blocks()),
        Instruction("stg C[row][col]", "global", "store", F32,
                    address=lambda i: t.base["C"] + F32 * (row(i) * N + col(i)),
                    active=lambda i: (row(i) < M) & (col(i) < N),
                    loops=(Loop("m", TM, every(TM)),), blocks=t.c_blocks()),
    )
    return KernelAccess(grid=t.grid(), block=(threads, 1, 1), instructions=instructions, **t.work())


def v3_access(params: Params, shape: Shape) -> KernelAccess:
    """v3_2d_blocktiling.cu: THREADS = (BM/TM)*(BN/TN); thread (tc = tid % (BN/TN), tr = tid /
    (BN/TN)) owns rows tr*TM .. +TM-1 and columns tc*TN .. +TN-1 of the block tile.

    Assumes (checked in the SASS of every config of the param grid): the tile
    fills of `_scalar_fills`; per tile step, TM*BK/4 LDS.128 of As[tr*TM+i][4q..4q+3] and
    BK*TN/4 LDS.128 of Bs[k][tc*TN+4j..+3] (TN contiguous floats, 16-byte aligned); the epilogue
    writes each of the TM x TN outputs with its own STG.32, guarded by row < M and col < N.
    """
    TM, TN = params["TM"], params["TN"]
    threads = (params["BM"] // TM) * (params["BN"] // TN)
    t = _Tiles(params, shape, threads)
    BN, BK, M, N = t.BN, t.BK, t.M, t.N
    As, Bs = 0, F32 * t.BM * BK
    strips = BN // TN

    def tc(i):
        return i.tid % strips

    def tr(i):
        return i.tid // strips

    def row(i):
        return i.by * t.BM + tr(i) * TM + i.m

    def col(i):
        return i.bx * BN + tc(i) * TN + i.n

    instructions = (
        *_scalar_fills(t, As, Bs),
        Instruction("lds.128 As[tr*TM+m][4q..4q+3]", "shared", "load", 4 * F32,
                    address=lambda i: As + F32 * ((tr(i) * TM + i.m) * BK + 4 * i.q),
                    loops=(t.smem_steps(), Loop("m", TM, every(TM)), Loop("q", BK // 4, every(BK // 4))),
                    blocks=t.smem_blocks()),
        Instruction("lds.128 Bs[k][tc*TN+4j..+3]", "shared", "load", 4 * F32,
                    address=lambda i: Bs + F32 * (i.k * BN + tc(i) * TN + 4 * i.j),
                    loops=(t.smem_steps(), Loop("k", BK, every(BK)), Loop("j", TN // 4, every(TN // 4))),
                    blocks=t.smem_blocks()),
        Instruction("stg C[row][col]", "global", "store", F32,
                    address=lambda i: t.base["C"] + F32 * (row(i) * N + col(i)),
                    active=lambda i: (row(i) < M) & (col(i) < N),
                    loops=(Loop("m", TM, every(TM)), Loop("n", TN, every(TN))), blocks=t.c_blocks()),
    )
    return KernelAccess(grid=t.grid(), block=(threads, 1, 1), instructions=instructions, **t.work())


@dataclasses.dataclass(frozen=True)
class _Float4Layout:
    """What distinguishes v4 .. v8, which share one skeleton: float4 tile loads (LDG.128, or four
    guarded LDG.32 when K % 4 or N % 4 rules the float4 path out), A stored transposed with four
    STS.32, B with one STS.128, LDS.128 fragments, and a write-back of float4s (STG.128, or four
    STG.32 per float4 when N % 4 != 0).

    a_map(idx) -> (r, kq): the row of the A tile and the float4 along k that element idx of a thread's
    share loads. ld_a: the row length of the transposed As[BK][ld_a]. a_frag(i, f) / b_frag(i, g):
    the column (in As / Bs rows) of the f-th A / g-th B float4 fragment a thread reads for one k.
    slices: C goes through a per-warp shared slice of 16 x 36 floats (v7, v8) instead of straight
    from registers. stages: tile buffers in shared memory (2 for v8's double buffer)."""

    threads: int
    a_map: Callable
    ld_a: int
    n_afrag: int
    a_frag: Callable
    n_bfrag: int
    b_frag: Callable
    slices: bool = False
    stages: int = 1


def _float4_model(params: Params, shape: Shape, lay: _Float4Layout) -> KernelAccess:
    T = lay.threads
    t = _Tiles(params, shape, T)
    BM, BN, BK, M, N, K = t.BM, t.BN, t.BK, t.M, t.N, t.K
    vec_a, vec_bc = K % 4 == 0, N % 4 == 0  # the kernel's run-time choice (bases are 256-byte aligned)
    a_loads, b_loads = BM * BK // 4 // T, BK * BN // 4 // T
    tile_bytes = F32 * (BK * lay.ld_a + BK * BN)
    As, Bs = 0, F32 * BK * lay.ld_a
    la, lb = Loop("la", a_loads, every(a_loads)), Loop("lb", b_loads, every(b_loads))
    four = Loop("c", 4, every(4))

    def stage(i):  # tile kt lives in buffer kt % stages
        return (i.kt % lay.stages) * tile_bytes

    def smem_steps():
        return Loop("kt", t.nk, shifted(t.nk, tile_bytes) if lay.stages > 1 else same(t.nk))

    def a_rk(i):
        return lay.a_map(i.tid + i.la * T)

    def a_row(i):
        return i.by * BM + a_rk(i)[0]

    def a_k(i):
        return i.kt * BK + 4 * a_rk(i)[1]

    def b_idx(i):
        return i.tid + i.lb * T

    def b_row(i):
        return i.kt * BK + b_idx(i) // (BN // 4)

    def b_col(i):
        return i.bx * BN + 4 * (b_idx(i) % (BN // 4))

    A, B = t.base["A"], t.base["B"]
    out = []
    if vec_a:
        out.append(Instruction("ldg.128 A (tile)", "global", "load", 16,
                               address=lambda i: A + F32 * (a_row(i) * K + a_k(i)),
                               active=lambda i: (a_row(i) < M) & (a_k(i) < K),
                               loops=(t.a_steps(), la), blocks=t.a_blocks()))
    else:
        out.append(Instruction("ldg A (tile, scalar path)", "global", "load", F32,
                               address=lambda i: A + F32 * (a_row(i) * K + a_k(i) + i.c),
                               active=lambda i: (a_row(i) < M) & (a_k(i) + i.c < K),
                               loops=(t.a_steps(), la, four), blocks=t.a_blocks()))
    out.append(Instruction("sts As[4kq+c][r] (transpose)", "shared", "store", F32,
                           address=lambda i: stage(i) + As + F32 * ((4 * a_rk(i)[1] + i.c) * lay.ld_a + a_rk(i)[0]),
                           loops=(smem_steps(), la, four), blocks=t.smem_blocks()))
    if vec_bc:
        out.append(Instruction("ldg.128 B (tile)", "global", "load", 16,
                               address=lambda i: B + F32 * (b_row(i) * N + b_col(i)),
                               active=lambda i: (b_row(i) < K) & (b_col(i) < N),
                               loops=(t.b_steps(), lb), blocks=t.b_blocks()))
    else:
        out.append(Instruction("ldg B (tile, scalar path)", "global", "load", F32,
                               address=lambda i: B + F32 * (b_row(i) * N + b_col(i) + i.c),
                               active=lambda i: (b_row(i) < K) & (b_col(i) + i.c < N),
                               loops=(t.b_steps(), lb, four), blocks=t.b_blocks()))
    out.append(Instruction("sts.128 Bs[r][4cq..]", "shared", "store", 16,
                           address=lambda i: stage(i) + Bs + 16 * b_idx(i),
                           loops=(smem_steps(), lb), blocks=t.smem_blocks()))
    k_loop = Loop("k", BK, every(BK))
    out.append(Instruction("lds.128 As[k][a fragment]", "shared", "load", 16,
                           address=lambda i: stage(i) + As + F32 * (i.k * lay.ld_a + lay.a_frag(i, i.f)),
                           loops=(smem_steps(), k_loop, Loop("f", lay.n_afrag, every(lay.n_afrag))),
                           blocks=t.smem_blocks()))
    out.append(Instruction("lds.128 Bs[k][b fragment]", "shared", "load", 16,
                           address=lambda i: stage(i) + Bs + F32 * (i.k * BN + lay.b_frag(i, i.g)),
                           loops=(smem_steps(), k_loop, Loop("g", lay.n_bfrag, every(lay.n_bfrag))),
                           blocks=t.smem_blocks()))
    frags = (Loop("f", lay.n_afrag, every(lay.n_afrag)), Loop("g", lay.n_bfrag, every(lay.n_bfrag)))
    out += _slices_writeback(t, frags, vec_bc) if lay.slices else _direct_writeback(t, lay, frags, vec_bc)
    return KernelAccess(grid=t.grid(), block=(T, 1, 1), instructions=tuple(out), **t.work())


def _direct_writeback(t: _Tiles, lay: _Float4Layout, frags, vec_bc: bool) -> list[Instruction]:
    """v4-v6: row a_frag(f) + r (r < 4) of the block tile, columns b_frag(g) .. + 3, straight from
    registers; a row past M is skipped."""
    M, N, C = t.M, t.N, t.base["C"]

    def row(i):
        return i.by * t.BM + lay.a_frag(i, i.f) + i.r

    def col(i):
        return i.bx * t.BN + lay.b_frag(i, i.g)

    loops = (frags[0], Loop("r", 4, every(4)), frags[1])
    if vec_bc:
        return [Instruction("stg.128 C[row][col..col+3]", "global", "store", 16,
                            address=lambda i: C + F32 * (row(i) * N + col(i)),
                            active=lambda i: (row(i) < M) & (col(i) < N), loops=loops, blocks=t.c_blocks())]
    return [Instruction("stg C[row][col+c] (scalar path)", "global", "store", F32,
                        address=lambda i: C + F32 * (row(i) * N + col(i) + i.c),
                        active=lambda i: (row(i) < M) & (col(i) + i.c < N),
                        loops=loops + (Loop("c", 4, every(4)),), blocks=t.c_blocks())]


CS_LD = 36  # v7/v8: a warp's write-back slice is 16 rows of 32 floats, padded to 36


def _slices_writeback(t: _Tiles, frags, vec_bc: bool, origin=None, stored=None, c_blocks=None,
                      smem_blocks=None, dst=None, writes=None) -> list[Instruction]:
    """v7-v9: for each 16 x 32 sub-tile (f, g) of its warp tile, a warp writes its accumulators into
    its slice (four unguarded STS.128, lane row lr*4 + r, column lc*4), then reads rows back: the
    float4 path has lane (p = lane/8 + 4s, q = lane % 8) read slice[p][4q..] (LDS.128) and store it
    (STG.128), s < 4; the scalar path has lane l read slice[p][l] (LDS.32) and store it (STG.32),
    p < 16. Each read-and-store pair is guarded by `stored(i, row, col)` (the LDS too: it sits inside
    the guard in the SASS): row < M and col < N unless the rung says otherwise. `origin(i)` is the
    (row, col) of the block's tile of C: (by*BM, bx*BN) unless the rung says otherwise (v9: a 1D
    grid whose edge blocks move inward). `c_blocks` / `smem_blocks` are the block classes. `dst(i)`:
    the byte address of the matrix written (C unless the rung says otherwise: sx's workspace plane).
    `writes(i)`: the blocks that write back at all (every block unless given: v13's slices do not)."""
    M, N = t.M, t.N
    dst = dst or (lambda i: t.base["C"])
    writes_ = writes or (lambda i: True)
    wm_, wn_, lr_, lc_ = _warp_lane(t)
    origin = origin or (lambda i: (i.by * t.BM, i.bx * t.BN))
    stored = stored or (lambda i, row, col: (row < M) & (col < N))
    c_blocks = c_blocks or t.c_blocks()
    smem_blocks = smem_blocks or t.smem_blocks()

    def slice_base(i):
        return F32 * (i.warp * 16 * CS_LD)

    stored_by = stored

    def stored(i, row, col):
        return stored_by(i, row, col) & writes_(i)

    def rbase(i):
        return origin(i)[0] + wm_(i) + 16 * i.f

    def cbase(i):
        return origin(i)[1] + wn_(i) + 32 * i.g

    out = [Instruction("sts.128 slice[lr*4+r][lc*4..]", "shared", "store", 16,
                       address=lambda i: slice_base(i) + F32 * ((lr_(i) * 4 + i.r) * CS_LD + lc_(i) * 4),
                       active=writes, loops=frags + (Loop("r", 4, every(4)),), blocks=smem_blocks)]
    if vec_bc:
        def p(i):
            return i.lane // 8 + 4 * i.s

        def col(i):
            return cbase(i) + 4 * (i.lane % 8)

        def guard(i):
            return stored(i, rbase(i) + p(i), col(i))

        loops = frags + (Loop("s", 4, every(4)),)
        out += [
            Instruction("lds.128 slice[p][4q..]", "shared", "load", 16,
                        address=lambda i: slice_base(i) + F32 * (p(i) * CS_LD + 4 * (i.lane % 8)),
                        active=guard, loops=loops, blocks=c_blocks),
            Instruction("stg.128 C[row][col..col+3]", "global", "store", 16,
                        address=lambda i: dst(i) + F32 * ((rbase(i) + p(i)) * N + col(i)),
                        active=guard, loops=loops, blocks=c_blocks),
        ]
    else:
        def col(i):
            return cbase(i) + i.lane

        def guard(i):
            return stored(i, rbase(i) + i.p, col(i))

        loops = frags + (Loop("p", 16, every(16)),)
        out += [
            Instruction("lds slice[p][lane] (scalar path)", "shared", "load", F32,
                        address=lambda i: slice_base(i) + F32 * (i.p * CS_LD + i.lane),
                        active=guard, loops=loops, blocks=c_blocks),
            Instruction("stg C[row][col] (scalar path)", "global", "store", F32,
                        address=lambda i: dst(i) + F32 * ((rbase(i) + i.p) * N + col(i)),
                        active=guard, loops=loops, blocks=c_blocks),
        ]
    return out


def _warp_lane(t: _Tiles):
    """v6-v8's warp tile origin (wm, wn) and zig-zag lane grid (lr, lc) as functions of the index."""
    WM, WN = t.WM, t.WN

    def wm_(i):
        return (i.warp // (t.BN // WN)) * WM

    def wn_(i):
        return (i.warp % (t.BN // WN)) * WN

    def lr_(i):
        return (i.lane & 1) | ((i.lane >> 4) << 1)

    def lc_(i):
        return (i.lane >> 1) & 7

    return wm_, wn_, lr_, lc_


def v4_access(params: Params, shape: Shape) -> KernelAccess:
    """v4_vectorized.cu: THREADS = (BM/TM)*(BN/TN), thread (tc = tid % (BN/TN), tr = tid / (BN/TN));
    element idx = tid + l*THREADS of the A tile is row idx / (BK/4), float4 idx % (BK/4) along k;
    As[BK][BM] (no padding); the thread's fragments are As[k][tr*TM + 4f] and Bs[k][tc*TN + 4g].

    Assumes (the SASS of all 119 configs of the param grid, counted per path): per
    tile and thread, A_LOADS LDG.128 (K % 4 == 0; else 4 guarded LDG.32 each, behind a branch on
    the row), 4*A_LOADS STS.32, B_LOADS LDG.128 (N % 4 == 0; else 4 LDG.32) and B_LOADS STS.128;
    BK*(TM+TN)/4 LDS.128; TM*TN/4 STG.128 (else TM*TN STG.32) in the epilogue.
    """
    TM, TN = params["TM"], params["TN"]
    strips, kq = params["BN"] // TN, params["BK"] // 4
    return _float4_model(params, shape, _Float4Layout(
        threads=(params["BM"] // TM) * strips,
        a_map=lambda idx: (idx // kq, idx % kq), ld_a=params["BM"],
        n_afrag=TM // 4, a_frag=lambda i, f: (i.tid // strips) * TM + 4 * f,
        n_bfrag=TN // 4, b_frag=lambda i, g: (i.tid % strips) * TN + 4 * g,
    ))


def _interleaved_a(BM: int):
    """v5-v8's A-tile map: lane pairs take the two float4s of 8 consecutive k of one row."""
    return lambda idx: ((idx >> 1) % BM, ((idx // (2 * BM)) << 1) | (idx & 1))


def v5_access(params: Params, shape: Shape) -> KernelAccess:
    """v5_conflict_free.cu: as v4 with As[BK][BM+4] (padded), the interleaved A map of
    `_interleaved_a`, and fragments spaced apart: As[k][f*STRIP_M + 4*tr], Bs[k][g*STRIP_N + 4*tc]
    (STRIP_M = 4*BM/TM, STRIP_N = 4*BN/TN); output rows f*STRIP_M + 4*tr + r.

    Assumes the same instruction counts per path as v4 (checked on all 119 configs).
    """
    TM, TN, BM, BN = params["TM"], params["TN"], params["BM"], params["BN"]
    strips = BN // TN
    strip_m, strip_n = 4 * BM // TM, 4 * BN // TN
    return _float4_model(params, shape, _Float4Layout(
        threads=(BM // TM) * strips, a_map=_interleaved_a(BM), ld_a=BM + 4,
        n_afrag=TM // 4, a_frag=lambda i, f: f * strip_m + 4 * (i.tid // strips),
        n_bfrag=TN // 4, b_frag=lambda i, g: g * strip_n + 4 * (i.tid % strips),
    ))


def _warp_layout(params: Params, **extra) -> _Float4Layout:
    """v6-v8: warps of WM x WN; a warp's fragments for one k are As[k][wm + 16f + 4*lr] (f < WM/16)
    and Bs[k][wn + 32g + 4*lc] (g < WNITER), lr and lc the zig-zag lane grid."""
    BM, BN, WM, WN = params["BM"], params["BN"], params["WM"], params["WN"]
    warps = (BM // WM) * (BN // WN)

    def wm_(i):
        return (i.warp // (BN // WN)) * WM

    def wn_(i):
        return (i.warp % (BN // WN)) * WN

    return _Float4Layout(
        threads=32 * warps, a_map=_interleaved_a(BM), ld_a=BM + 4,
        n_afrag=WM // 16, a_frag=lambda i, f: wm_(i) + 16 * f + 4 * ((i.lane & 1) | ((i.lane >> 4) << 1)),
        n_bfrag=params["WNITER"], b_frag=lambda i, g: wn_(i) + 32 * g + 4 * ((i.lane >> 1) & 7),
        **extra,
    )


def v6_access(params: Params, shape: Shape) -> KernelAccess:
    """v6_warptiling.cu: v5's tile loads (padded As, interleaved A map), warp tiles with the zig-zag
    lane grid (`_warp_layout`), C straight from registers: row wm + 16f + 4*lr + r, float4 column
    wn + 32g + 4*lc.

    Assumes (SASS of the default and 25 sampled configs): v4's counts per path with
    WM/16 + WNITER LDS.128 per k and WM/16*4*WNITER STG.128 (or 4x as many STG.32).
    """
    return _float4_model(params, shape, _warp_layout(params))


def v7_access(params: Params, shape: Shape) -> KernelAccess:
    """v7_coalesced_store.cu: v6's main loop; C leaves through the per-warp slices of
    `_slices_writeback` (the tiles and the slices share one shared array from offset 0).

    Assumes (SASS of the default and 25 sampled configs; one sampled config duplicates
    two LDS.32 on exclusive branches, which changes no executed count): per (f, g) sub-tile, 4
    STS.128, then 4 guarded LDS.128 + STG.128 pairs (N % 4 == 0) or 16 LDS.32 + STG.32 pairs.
    """
    return _float4_model(params, shape, _warp_layout(params, slices=True))


def v8_access(params: Params, shape: Shape) -> KernelAccess:
    """v8_double_buffer.cu: v7 with two tile buffers: tile t is loaded (prologue for t = 0, else
    during step t-1) and stored into buffer t % 2, and read from it in step t, so per tile the same
    LDG/STS/LDS as v7, at buffer offsets that differ by a multiple of 128 bytes. MINB changes
    registers only.

    Assumes (SASS of the default and 25 sampled configs): v7's counts, the tile load and
    store appearing twice (prologue, loop) and executed ktiles times in all.
    """
    return _float4_model(params, shape, _warp_layout(params, slices=True, stages=2))


# -- v9: cp.async ---------------------------------------------------------------------------------


def _classes_by(keys) -> tuple[tuple[int, int], ...]:
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
    v6-v8. Write-back through the per-warp slices as v7 (`_slices_writeback`), the guard being
    row_lo <= row < M and col_lo <= col < N.

    Assumes (SASS of NVRTC 13.5 sm_90, and of 13.0 on the H200 per its source page, at the default
    and the tuned configs of results/h200/tuned.json:
    BM=64, BN=64|128, WM=32|64, STAGES=2|3): A_COPIES LDGSTS.E and B_COPIES LDGSTS.E.BYPASS.128 or
    LDGSTS.E per issued tile, none predicated; the epilogue's LDS and STG predicated by the guard;
    the `@!PT LDS RZ, [RZ]` the compiler puts before LDGSTS never execute.
    """
    return _ring_access(params, shape, slices=1)


class _RingGrid:
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


@dataclasses.dataclass(frozen=True)
class _RingWork:
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


def _ring_tiles(g: _RingGrid, w: _RingWork) -> list[Instruction]:
    """The ring's work on each of a block's k tiles (v9_access says how): A's and B's cp.async copies
    into the tile's slot and the fragments' LDS.128 from it, k tile j of kind k being tile first[k] + j
    of K, run where j < count[k]."""
    BK, BN, T, M, N, K = g.BK, g.BN, g.T, g.M, g.N, g.K
    t = _Tiles(g.params, g.shape, T)
    wm_, wn_, lr_, lc_ = _warp_lane(t)
    A, B = t.base["A"], t.base["B"]
    most = int(w.count.max())
    local = np.arange(most)
    steps = w.first[None, :] + local[:, None]  # [local tile, kind] -> the tile of K
    runs = local[:, None] < w.count[None, :]  # whether kind k has a local tile j

    def keys(*columns):  # one hashable key per local tile, over every kind
        return [tuple(map(tuple, row)) for row in zip(*columns)]

    # the copies' global addresses: tile 0 alone (its k may start below 0), the rest by k0 mod 128
    # bytes; the ring slot by the local tile; each in every kind, with whether the kind runs it
    a_tiles = Loop("j", most, _classes_by(keys(runs, steps == 0, (F32 * BK * steps) % 128)))
    b_tiles = Loop("j", most, _classes_by(keys(runs, steps == 0, (F32 * BK * N * steps) % 128)))
    smem_tiles = Loop("t", most, _classes_by(zip(map(tuple, runs), (g.slot(local) % 128).tolist())))

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


def _ring_writeback(g: _RingGrid, w: _RingWork, dst=None, writes=None) -> list[Instruction]:
    """v9's write-back of a block's tile through the per-warp slices (v7's), guarded by the rows and
    columns it stores (row_lo <= row < M, col_lo <= col < N); `dst(i)`: the matrix written (C unless
    given); `writes(i)`: the blocks that run it (all unless given)."""
    t = _Tiles(g.params, g.shape, g.T)

    def stored(i, row, col):
        _, _, row_lo, col_lo = g.origin(w.pid(i))
        return (row >= row_lo) & (row < g.M) & (col >= col_lo) & (col < g.N)

    frags = (Loop("f", g.WM // 16, every(g.WM // 16)), Loop("g", g.WNITER, every(g.WNITER)))
    return _slices_writeback(t, frags, g.vec, origin=lambda i: g.origin(w.pid(i))[:2], stored=stored,
                             c_blocks=w.c, smem_blocks=w.smem, dst=dst, writes=writes)


def _ring_access(params: Params, shape: Shape, slices: int) -> KernelAccess:
    """v9's model (see v9_access), with K cut into `slices` slices by blockIdx.y as sx_split_k.cu
    cuts it: slice z runs v9's ring over the k tiles [z*T/S, (z+1)*T/S) of the T = ceil(K/BK) and,
    with S > 1, writes its partial tile to workspace plane z instead of C; the fixup follows
    (`_ring_fixup`). slices=1 is v9 exactly (grid.y = 1, C written, no fixup)."""
    g = _RingGrid(params, shape)
    S, M, N, K = slices, g.M, g.N, g.K
    # slice z's k tiles: [first[z], first[z] + count[z])
    first = np.array([z * g.ktiles // S for z in range(S)], dtype=np.int64)
    count = np.array([(z + 1) * g.ktiles // S for z in range(S)], dtype=np.int64) - first
    # A block's row origin depends on its block-row alone and its column origin on its block-column,
    # so the classes are worked out over the grid_m block-rows and grid_n block-columns and combined
    # (every pair is one block): never one entry per block, whose number grows as M x N (134 million
    # at 1048576^3).

    def by_block(rows, cols):  # classes of block-rows x classes of block-columns -> classes of pids
        # each slice its own class along y: its tiles and its workspace plane are its own
        return {"x": tuple((int(g.pid_of(bm, bn)), m * n) for bm, m in rows for bn, n in cols), "y": every(S)}

    w = _RingWork(first, count, kind=lambda i: i.by, pid=lambda i: i.bx,
                  a=by_block(_classes_by(g.a_row_keys), same(g.grid_n)),
                  b=by_block(same(g.grid_m), _classes_by(g.b_col_keys)),
                  c=by_block(_classes_by(g.c_row_keys), _classes_by(g.c_col_keys)),
                  smem={"x": same(g.tiles), "y": every(S)})
    out = _ring_tiles(g, w)
    # S > 1: slice z's partial tile goes to workspace plane z
    split = _split_bases(M, N, K, S, g.tiles)
    out += _ring_writeback(g, w, dst=None if S == 1 else (lambda i: split["W"] + F32 * M * N * i.by))
    if S > 1:
        out += _ring_fixup(_Tiles(params, shape, g.T), S, g.T, g.vec, split, g.bm_bn, g.grid_n, by_block(
            _classes_by(zip((F32 * g.row_los * N) % 128, np.minimum(g.BM, M - g.row_los))),
            _classes_by(zip((F32 * g.col_los) % 128, np.minimum(g.BN, N - g.col_los))))["x"])
    return KernelAccess(grid=(g.tiles, S, 1), block=(g.T, 1, 1), instructions=tuple(out), **_work(M, N, K))


def _classes_of(keys: list) -> np.ndarray:
    """One class id per index: equal keys, equal ids."""
    ids: dict = {}
    return np.array([ids.setdefault(k, len(ids)) for k in keys], dtype=np.int64)


def _grouped_rects(g: _RingGrid, lo: int, hi: int) -> list[tuple[int, int, int, int]]:
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
    """v13_split_tail.cu on its host plan (sgemm.split_tail_plan: the first `whole` tiles in grouped
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
    g = _RingGrid(params, shape)
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
    w = _RingWork(first, count, kind=kind, pid=pid, a=every_block, b=every_block, c=every_block, smem=every_block)
    base = buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N, W=F32 * max(1, tail * splits * g.BM * g.BN),
                   counters=4 * max(1, tail))

    def is_slice(i):
        return kind(i) > 0

    def is_last(i):
        return kind(i) == last

    out = _ring_tiles(g, w)
    out += _ring_writeback(g, w, writes=lambda i: kind(i) == 0)
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
        out += _ring_writeback(g, w, writes=is_last)
    return KernelAccess(grid=(blocks_n, 1, 1), block=(T, 1, 1), instructions=tuple(out), **_work(M, N, K))


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


def gt_access(params: Params, shape: Shape) -> KernelAccess:
    """gt_gemv_cols.cu: warp w = bx*WARPS + warp owns rows w*RW + rr (rr < RW; a warp past M returns),
    for the BN columns from col0 = by*BN. Three paths, chosen per launch (allocations are 256-byte
    aligned, so the kernel's alignment tests pass and K % 4 decides):

    K % 4 == 0: a main loop of K // (128*U) steps; per step U LDG.128 of A (lane l reads the float4
    at k + (u*32 + l)*4) and, when N == 1, U LDG.128 of B's column at the same k; for N > 1, 4*BN
    scalar LDG of B per float4 of A (B[kk+q][col0+n], predicated on col0+n < N). Then a tail of
    whole float4s: one LDG.128 of A per 128 k, lanes whose float4 is inside K, 4*BN scalar B loads.
    K % 4 != 0: one scalar LDG of A per 32 k (lane l at k + l, k + l < K) and BN scalar B loads.
    The compiler unrolls these loops (2x and 4x in the sm_90 SASS) without changing how many times
    each load runs. Last, BN shuffle sums and one STG per column by lane n (col0+n < N).
    """
    BN_, W, RW, U = params["BN"], params["WARPS"], params["RW"], params["U"]
    M, N, K = shape["M"], shape["N"], shape["K"]
    grid = (cdiv(M, W * RW), cdiv(N, BN_), 1)
    base = buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N)

    def row(i):
        return (i.bx * W + i.warp) * RW + i.rr

    def live(i):
        return row(i) < M

    nx, ny = grid[0], grid[1]
    # Symmetry: every loop moves its addresses by whole multiples of 128 B per step (128 k of A per
    # float4 step and 32 per scalar step; B rows N apart, as many), so its steps are one class but
    # for the last, whose guard cuts lanes. Blocks along y move B and C by BN columns (classes by
    # address mod 128, the ragged last one alone) and leave A alone; blocks along x move A and C by
    # W*RW rows, B not at all, and cut rows only in the last block. Rows of a warp (RW <= 4) are
    # each their own class.
    x_edge, y_edge = ragged(nx, W * RW, M), ragged(ny, BN_, N)
    a_blocks = {"x": shifted(nx, F32 * W * RW * K, x_edge), "y": same(ny)}
    b_blocks = {"x": shifted(nx, 0, x_edge), "y": shifted(ny, F32 * BN_, y_edge)}
    c_blocks = {"x": shifted(nx, F32 * W * RW * N, x_edge), "y": shifted(ny, F32 * BN_, y_edge)}
    rows = Loop("rr", RW)

    def steps(name, trips):
        return Loop(name, trips, shifted(trips, 0, (trips - 1,)))

    b_cols = [n for n in range(BN_)]
    instructions: list[Instruction] = []

    def b_scalar(name, k_of, loops, active):
        # B[k][col0 + n] for the 4 k of a float4 (vec paths) or the one k (scalar path)
        for n in b_cols:
            instructions.append(Instruction(
                f"ldg B[{name}][col0+{n}]", "global", "load", F32,
                address=lambda i, n=n: base["B"] + F32 * (k_of(i) * N + i.by * BN_ + n),
                active=lambda i, n=n: active(i) & (i.by * BN_ + n < N), loops=loops, blocks=b_blocks))

    if K % 4 == 0:
        step = 128 * U
        main, rest = K // step, K - (K // step) * step
        loops = (rows, steps("t", main))
        for u in range(U):
            def kk(i, u=u):
                return i.t * step + (u * 32 + i.lane) * 4

            instructions.append(Instruction(
                f"ldg.128 A[row][k+{u}]", "global", "load", 16,
                address=lambda i, kk=kk: base["A"] + F32 * (row(i) * K + kk(i)), active=live, loops=loops,
                blocks=a_blocks))
            if N == 1:
                instructions.append(Instruction(
                    f"ldg.128 B[k+{u}]", "global", "load", 16,
                    address=lambda i, kk=kk: base["B"] + F32 * kk(i), active=live, loops=loops,
                    blocks={"x": b_blocks["x"], "y": same(ny)}))
            else:
                for q in range(4):
                    b_scalar(f"k+{u}.{q}", lambda i, kk=kk, q=q: kk(i) + q, loops, live)
        tail = (rows, steps("r", cdiv(rest, 128)))

        def tk(i):
            return main * step + i.r * 128 + 4 * i.lane

        def in_tail(i):
            return live(i) & (tk(i) + 4 <= K)

        instructions.append(Instruction(
            "ldg.128 A[row][tail]", "global", "load", 16,
            address=lambda i: base["A"] + F32 * (row(i) * K + tk(i)), active=in_tail, loops=tail, blocks=a_blocks))
        for q in range(4):
            b_scalar(f"tail.{q}", lambda i, q=q: tk(i) + q, tail, in_tail)
    else:
        loops = (rows, steps("s", cdiv(K, 32)))

        def sk(i):
            return i.s * 32 + i.lane

        def in_k(i):
            return live(i) & (sk(i) < K)

        instructions.append(Instruction(
            "ldg A[row][k]", "global", "load", F32,
            address=lambda i: base["A"] + F32 * (row(i) * K + sk(i)), active=in_k, loops=loops, blocks=a_blocks))
        b_scalar("k", sk, loops, in_k)
    for n in b_cols:
        instructions.append(Instruction(
            f"stg C[row][col0+{n}]", "global", "store", F32,
            address=lambda i, n=n: base["C"] + F32 * (row(i) * N + i.by * BN_ + n),
            active=lambda i, n=n: live(i) & (i.lane == n) & (i.by * BN_ + n < N), loops=(rows,), blocks=c_blocks))
    return KernelAccess(grid=grid, block=(32 * W, 1, 1), instructions=tuple(instructions), **_work(M, N, K))


# -- split-K across blocks (gv, sx): the workspace, the arrival counter, the ordered fixup ----------


def _split_bases(M: int, N: int, K: int, S: int, tiles: int) -> dict[str, int]:
    """A, B, C and the split kernels' extra arguments (sgemm's _split_buffers: S planes of M x N
    floats and a counter per tile, one-element stand-ins when S = 1), each cudaMalloc'd: 256-byte
    aligned, which is all the counts depend on."""
    return buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N, W=F32 * S * M * N if S > 1 else F32,
                   counters=4 * tiles if S > 1 else 4)


def _last_slice(S: int) -> Classes:
    """Classes of the slices (blockIdx.y) for what only the block that arrives last at a tile runs:
    which of the S blocks that is changes from run to run, but its counts do not (it reads every
    slice's plane, whichever it is), so slice S-1 stands for it and the other S-1 run none of it."""
    return ((0, S - 1), (S - 1, 1)) if S > 1 else ((0, 1),)


def _last_to_arrive(S: int, every_block: dict, counter: Callable) -> list[Instruction]:
    """split_k.cuh's last_to_arrive, as the SASS runs it (gv and sx, sm_90): thread 0 of each block
    adds 1 to its tile's counter (ATOMG: an atomic, in none of the load or store counters) and, in
    the last block, resets the counter (STG of 0); the answer reaches every warp through the barrier
    (BAR.RED.OR: no shared memory). The fences (MEMBAR, and in gv CCTL.IVALL, which invalidates L1)
    move no data through the counted pipes. `every_block`: the classes of every block axis;
    `counter(i)`: the byte address of its counter."""
    last = {**every_block, "y": _last_slice(S)}
    return [
        Instruction("stg counter = 0 (thread 0, last block)", "global", "store", F32, address=counter,
                    active=lambda i: (i.tid == 0) & (i.by == S - 1), blocks=last),
    ]


def _ring_fixup(t: _Tiles, S: int, T: int, vec: bool, bases: dict, bm_bn: Callable, grid_n: int,
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
    fix = {"x": tile_classes, "y": _last_slice(S)}
    loops = (Loop("q", trips, every(trips)),)
    kind = ".128" if vec else ""
    return _last_to_arrive(S, {"x": same(blocks), "y": same(S)}, counter) + [
        Instruction(f"ldg{kind} work[p][e] (fixup, __ldcg)", "global", "load", F32 * width,
                    address=lambda i: bases["W"] + F32 * (i.p * plane + at(i)), active=live,
                    loops=loops + (Loop("p", S, every(S)),), blocks=fix),
        Instruction(f"stg{kind} C[e] (fixup)", "global", "store", F32 * width,
                    address=lambda i: bases["C"] + F32 * at(i), active=live, loops=loops, blocks=fix),
    ]


def sx_access(params: Params, shape: Shape) -> KernelAccess:
    """sx_split_k.cu: v9's ring, copies, fragments and write-back in each of S slices of K
    (`_ring_access`), the partial tiles into the workspace, and the ordered fixup (`_ring_fixup`).

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
    return _ring_access(params, shape, slices=params["S"])



def _tile_grid_classes(M: int, N: int, K: int, BM: int, BN: int) -> Classes:
    """Classes of a 1D row-major grid over BM x BN tiles (block b: tile row b // tiles_n, column
    b % tiles_n): tile rows by where A's and C's rows start modulo 128 bytes, tile columns by where
    B's and C's columns do, each tile cut by M or N (the last row or column) its own class; a class
    of blocks is a pair of them (never one entry per block: their number grows as M x N)."""
    tiles_m, tiles_n = cdiv(M, BM), cdiv(N, BN)
    r0, c0 = np.arange(tiles_m, dtype=np.int64) * BM, np.arange(tiles_n, dtype=np.int64) * BN
    rows = _classes_by(zip((F32 * r0 * K) % 128, (F32 * r0 * N) % 128, np.where(r0 + BM > M, r0, -1)))
    cols = _classes_by(zip((F32 * c0) % 128, np.where(c0 + BN > N, c0, -1)))
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
    return KernelAccess(grid=(blocks, 1, 1), block=(T, 1, 1), instructions=tuple(out), **_work(M, N, K))



def gv_access(params: Params, shape: Shape) -> KernelAccess:
    """gv_gemv_rows.cu: grid (ceil(N/BN), S, ceil(M/BM)), BN = 4*CT, THREADS = CT*KT; thread (tn =
    tid % CT, tk = tid / CT) of block (bx, z, bz) takes k = kb + tk, kb + tk + KT, ... < ke of slice z
    (kb = z*per_slice, per_slice = ceil(ceil(K/S) / (KT*U)) * KT*U, ke = min(K, kb + per_slice)) and
    4 columns of rows row0 = bz*BM .. +BM-1 (rows past M read row M-1, never stored).

    float4 path (N % 4 == 0; cudaMalloc'd B is 16-byte aligned), lanes whose float4 at cfirst = col0 +
    4*tn is inside N: a main loop of U LDG.128 of B (rows k + u*KT) and U*BM LDG.32 of A (one address
    per thread row: a broadcast) while k + (U-1)*KT < ke, step KT*U; then a rolled tail (`#pragma
    unroll 1`) of one LDG.128 and BM LDG.32 per k < ke. Scalar path (N % 4 != 0): per k, 4 LDG.32 of
    B (columns col0 + tn + j*CT, each predicated on being < N) and BM of A. Then 4*BM STS.32 of the
    partials part[tk][m][cfirst - col0 + j*cstep] (every thread, unguarded), and for o = tid + i*T <
    BM*BN: KT LDS.32 of part[t][o] (predicated on o < BM*BN) and, inside o < BM*BN, r < M, c < N,
    one STG.32 to C (S = 1) or to the workspace plane z. S > 1: last_to_arrive (`_last_to_arrive`),
    then in the last block per o, S LDG.32 .STRONG.GPU (__ldcg) of the planes and one STG.32 of C.

    Read off the SASS (NVRTC 13.5, sm_90) at the default and at BM = 4. Not exact in one case: the
    scalar path's k loop (N % 4 != 0) is unrolled x4 by the compiler with the leftover trips first;
    with CT = 16 a warp holds two thread rows, whose trip counts differ by one in a slice where the k
    range is not a multiple of KT (the last slice of a ragged K), and there the leftover trips run
    apart from the main ones: the model (one warp instruction per trip) then counts fewer requests
    than the kernel issues. CT >= 32 (one thread row per warp) is exact everywhere."""
    BM, CT, KT, U, S = (params[k] for k in ("BM", "CT", "KT", "U", "S"))
    M, N, K = shape["M"], shape["N"], shape["K"]
    BN, T = 4 * CT, CT * KT
    nx, nz = cdiv(N, BN), cdiv(M, BM)
    step = KT * U
    per_slice = cdiv(cdiv(K, S), step) * step
    base = _split_bases(M, N, K, S, nx * nz)
    vec = N % 4 == 0
    cstep = 1 if vec else CT
    plane = M * N
    kbs = np.arange(S, dtype=np.int64) * per_slice
    kes = np.minimum(K, kbs + per_slice)

    def tn(i):
        return i.tid % CT

    def tk(i):
        return i.tid // CT

    def col0(i):
        return i.bx * BN

    def cfirst(i):
        return col0(i) + (4 * tn(i) if vec else tn(i))

    def arow(i, m):  # the row of A that row0 + m reads: clamped to M-1
        return np.minimum(i.bz * BM + m, M - 1)

    def kb(i):
        return kbs[i.by]

    def ke(i):
        return kes[i.by]

    def trips(first, last, stride):  # trips of `for (k = first; k < last; k += stride)`
        return np.maximum(0, -((first - last) // stride))

    # the k loops' trip counts per (slice, thread row): the most any thread runs, and from which
    # trip on some thread has stopped (those trips are each their own class)
    tks = np.arange(KT, dtype=np.int64)
    main_n = trips(kbs[:, None] + tks[None, :] + (U - 1) * KT, kes[:, None], step)
    tail_n = trips(kbs[:, None] + tks[None, :] + main_n * step, kes[:, None], KT)
    scalar_n = trips(kbs[:, None] + tks[None, :], kes[:, None], KT)

    def loop(name, n, stride_bytes):
        most, least = int(n.max()), int(n.min())
        return Loop(name, most, shifted(most, stride_bytes, range(least, most)))

    # blocks: along x B and C move BN columns (>= 64 floats: whole lines), the last block cut by N;
    # slices (y) and row blocks (z) each their own class where they move A / C, alike where not
    x_cols = shifted(nx, F32 * BN, ragged(nx, BN, N))
    a_blocks = {"x": x_cols, "y": every(S), "z": shifted(nz, F32 * BM * K, ragged(nz, BM, M))}
    b_blocks = {"x": x_cols, "y": every(S), "z": same(nz)}  # B's loads do not depend on the row block
    c_blocks = {"x": x_cols, "y": every(S), "z": shifted(nz, F32 * BM * N, ragged(nz, BM, M))}
    all_blocks = {"x": same(nx), "y": same(S), "z": same(nz)}
    rows = range(BM)
    out: list[Instruction] = []

    def a_loads(name, k_of, loops, active, count):
        for m in rows:
            for u in range(count):
                out.append(Instruction(
                    f"ldg A[row0+{m}][{name}{f'+{u}*KT' if count > 1 else ''}]", "global", "load", F32,
                    address=lambda i, m=m, u=u: base["A"] + F32 * (arow(i, m) * K + k_of(i) + u * KT),
                    active=active, loops=loops, blocks=a_blocks))

    if vec:
        def live(i):
            return cfirst(i) < N

        def k_main(i):
            return kb(i) + tk(i) + i.j * step

        def in_main(i):
            return live(i) & (i.j < main_n[i.by, tk(i)])

        main = (loop("j", main_n, F32 * step * N),)
        for u in range(U):
            out.append(Instruction(
                f"ldg.128 B[k+{u}*KT][cfirst..+3] (__ldcs)", "global", "load", 16,
                address=lambda i, u=u: base["B"] + F32 * ((k_main(i) + u * KT) * N + cfirst(i)),
                active=in_main, loops=main, blocks=b_blocks))
        a_loads("k", k_main, (loop("j", main_n, F32 * step),), in_main, U)

        def k_tail(i):
            return kb(i) + tk(i) + main_n[i.by, tk(i)] * step + i.r * KT

        def in_tail(i):
            return live(i) & (i.r < tail_n[i.by, tk(i)])

        tail = (Loop("r", int(tail_n.max()), every(int(tail_n.max()))),)
        out.append(Instruction(
            "ldg.128 B[k][cfirst..+3] (tail)", "global", "load", 16,
            address=lambda i: base["B"] + F32 * (k_tail(i) * N + cfirst(i)), active=in_tail, loops=tail,
            blocks=b_blocks))
        a_loads("k (tail)", k_tail, tail, in_tail, 1)
    else:
        def k_s(i):
            return kb(i) + tk(i) + i.j * KT

        def in_s(i):
            return i.j < scalar_n[i.by, tk(i)]

        for jj in range(4):
            out.append(Instruction(
                f"ldg B[k][col0+tn+{jj}*CT] (scalar path)", "global", "load", F32,
                address=lambda i, jj=jj: base["B"] + F32 * (k_s(i) * N + cfirst(i) + jj * CT),
                active=lambda i, jj=jj: in_s(i) & (cfirst(i) + jj * CT < N),
                loops=(loop("j", scalar_n, F32 * KT * N),), blocks=b_blocks))
        a_loads("k", k_s, (loop("j", scalar_n, F32 * KT),), in_s, 1)

    # the KT thread rows' partials, added in order; the block's sums stored where inside C
    smem = {"x": same(nx), "y": same(S), "z": same(nz)}
    out.append(Instruction(
        "sts part[tk][m][cfirst-col0 + j*cstep]", "shared", "store", F32,
        address=lambda i: F32 * ((tk(i) * BM + i.m) * BN + cfirst(i) - col0(i) + i.jj * cstep),
        loops=(Loop("m", BM, every(BM)), Loop("jj", 4, every(4))), blocks=smem))
    sums = cdiv(BM * BN, T)

    def o(i):
        return i.tid + i.s * T

    def r(i):
        return i.bz * BM + o(i) // BN

    def c(i):
        return col0(i) + o(i) % BN

    def stored(i):
        return (o(i) < BM * BN) & (r(i) < M) & (c(i) < N)

    per_sum = Loop("s", sums, every(sums))
    out.append(Instruction(
        "lds part[t][o]", "shared", "load", F32, address=lambda i: F32 * (i.t * BM * BN + o(i)),
        active=lambda i: o(i) < BM * BN, loops=(per_sum, Loop("t", KT, every(KT))), blocks=smem))
    if S == 1:
        out.append(Instruction("stg C[r][c]", "global", "store", F32,
                               address=lambda i: base["C"] + F32 * (r(i) * N + c(i)), active=stored,
                               loops=(per_sum,), blocks=c_blocks))
    else:
        out.append(Instruction("stg work[z][r][c]", "global", "store", F32,
                               address=lambda i: base["W"] + F32 * (i.by * plane + r(i) * N + c(i)), active=stored,
                               loops=(per_sum,), blocks=c_blocks))
        out += _last_to_arrive(S, all_blocks, counter=lambda i: base["counters"] + F32 * (i.bz * nx + i.bx))
        fix = {**c_blocks, "y": _last_slice(S)}

        def fixing(i):
            return stored(i) & (i.by == S - 1)

        out += [
            Instruction("ldg work[p][r][c] (fixup, __ldcg)", "global", "load", F32,
                        address=lambda i: base["W"] + F32 * (i.p * plane + r(i) * N + c(i)), active=fixing,
                        loops=(per_sum, Loop("p", S, every(S))), blocks=fix),
            Instruction("stg C[r][c] (fixup)", "global", "store", F32,
                        address=lambda i: base["C"] + F32 * (r(i) * N + c(i)), active=fixing,
                        loops=(per_sum,), blocks=fix),
        ]
    return KernelAccess(grid=(nx, S, nz), block=(T, 1, 1), instructions=tuple(out), **_work(M, N, K))

