"""Access models of the ladder's rungs v0-v8: what each kernel asks of memory, for `gpulab predict`,
and what the models of the later rungs and of the other families build on (F32, work, Tiles,
warp_lane, slices_writeback).

One `Instruction` per SASS memory instruction of the kernel (read off `nvdisasm` of the sm_90
cubin), with the index math of the `.cu` file. Row-major: A is M x K, B is K x N, C is M x N,
float32, so element (r, c) of a matrix with `cols` columns is at base + 4 * (r * cols + c).
See gpulab.model.predict for the API and for what the symmetry classes promise.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, every, ragged, same, shifted

F32 = 4


def work(M: int, N: int, K: int) -> dict:
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
    return KernelAccess(grid=(nx, ny, 1), block=(B, B, 1), instructions=instructions, **work(M, N, K))


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
    return KernelAccess(grid=(nx, ny, 1), block=(T, T, 1), instructions=instructions, **work(M, N, K))


# -- the ladder above v1 --------------------------------------------------------------------------
# The SASS facts each model below states were read with nvdisasm from NVRTC 13.5's sm_90 cubins
# (param grids as each docstring says); NVRTC 13.0, the H200's, issues the same memory instructions
# at every default config (v7: the same ones in another order).
# What v2 and later share. Every tile dimension is a power of two, so a strided fill loop
# `for (e = tid; e < E; e += THREADS)` gives every thread the same number of trips (E a multiple of
# THREADS) or at most one (E < THREADS): the compiler's remainder-then-unrolled loop then runs the
# trips in source order, all lanes of a warp together, and a model that walks e = tid + l*THREADS
# for l < ceil(E / THREADS) is the SASS's order.


class Tiles:
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
        return work(self.M, self.N, self.K)


def _scalar_fills(t: Tiles, As: int, Bs: int) -> tuple[Instruction, ...]:
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
    t = Tiles(params, shape, threads)
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
    t = Tiles(params, shape, threads)
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
    t = Tiles(params, shape, T)
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
    out += slices_writeback(t, frags, vec_bc) if lay.slices else _direct_writeback(t, lay, frags, vec_bc)
    return KernelAccess(grid=t.grid(), block=(T, 1, 1), instructions=tuple(out), **t.work())


def _direct_writeback(t: Tiles, lay: _Float4Layout, frags, vec_bc: bool) -> list[Instruction]:
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


def slices_writeback(t: Tiles, frags, vec_bc: bool, origin=None, stored=None, c_blocks=None,
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
    wm_, wn_, lr_, lc_ = warp_lane(t)
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


def warp_lane(t: Tiles):
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
    `slices_writeback` (the tiles and the slices share one shared array from offset 0).

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
