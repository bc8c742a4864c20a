"""Access models of the SGEMM variants: what each kernel asks of memory, for `gpulab predict`.

One `Instruction` per SASS memory instruction of the kernel (read off `nvdisasm` of the sm_90
cubin), with the index math of the `.cu` file. Row-major: A is M x K, B is K x N, C is M x N,
float32, so element (r, c) of a matrix with `cols` columns is at base + 4 * (r * cols + c).
See gpulab.model.predict for the API and for what the symmetry classes promise.
"""

from __future__ import annotations

from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import (
    Instruction,
    KernelAccess,
    Loop,
    buffers,
    cdiv,
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

    Assumes (checked in the SASS of every config of the param grid, NVRTC 13, sm_90): the tile
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

    Assumes (checked in the SASS of every config of the param grid, NVRTC 13, sm_90): the tile
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
