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
