"""Access models of the coalesce variants: what each copy asks of memory, for `gpulab predict`.

One `Instruction` per SASS memory instruction, read off `nvdisasm` of the sm_90 cubins of NVRTC
13.0 (the H200's) and 13.5, which issue the same memory instructions:
every variant is one LDG and one STG per element, behind the early `return` of threads past the
end (`@P0 EXIT`), except rows VEC=4, whose fast path is one LDG.128 / STG.128 per thread and whose
(one) tail thread copies its 1-3 leftover floats with a scalar loop. `in` and `out` are separate
allocations, laid out by `buffers` (256-byte aligned bases). See gpulab.model.predict for the API.
"""

from __future__ import annotations

import math

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, periodic, shifted

F32 = 4
THREADS = 256


def _copy(name_load: str, name_store: str, width: int, base: dict, elem, active, blocks, loops=()):
    """The LDG in[e] and STG out[e] pair of one copy path, e = elem(i) in floats (or float4s)."""
    return (
        Instruction(name_load, "global", "load", width, address=lambda i: base["in"] + width * elem(i),
                    active=active, blocks=blocks, loops=loops),
        Instruction(name_store, "global", "store", width, address=lambda i: base["out"] + width * elem(i),
                    active=active, blocks=blocks, loops=loops),
    )


def _work(total: int) -> dict:
    return {"flops": 0.0, "dram_compulsory_bytes": 2 * F32 * total}


def cols_access(params: Params, shape: Shape) -> KernelAccess:
    """v0_cols.cu: thread t < M*N copies element (row t % M, col t / M), so lane l of a warp sits N
    floats from lane l-1 (32 sectors per instruction once N >= 8).

    Symmetry: moving t by 32*M moves every lane to the column 32 further on, the same rows: +128 B.
    So block bx and bx + 32M/gcd(256, 32M) count the same; the last block (the `t < M*N` guard)
    stands alone.
    """
    M, N = shape["M"], shape["N"]
    total = M * N
    nb = cdiv(total, THREADS)
    base = buffers(**{"in": F32 * total, "out": F32 * total})

    def t(i):
        return i.bx * THREADS + i.tid

    def elem(i):
        return (t(i) % M) * N + t(i) // M

    period = 32 * M // math.gcd(THREADS, 32 * M)
    blocks = {"x": periodic(nb, period, edge=(nb - 1,))}
    instructions = _copy("ldg in[row][col]", "stg out[row][col]", F32, base, elem,
                         lambda i: t(i) < total, blocks)
    return KernelAccess(grid=(nb, 1, 1), block=(THREADS, 1, 1), instructions=instructions, **_work(total))


def rows_access(params: Params, shape: Shape) -> KernelAccess:
    """v1_rows.cu: VEC=1, thread t copies element t (LDG/STG.32); VEC=4, thread t copies float4 t
    (LDG.128/STG.128) when 4t + 4 <= M*N, and the one thread with 4t < M*N < 4t + 4 copies the last
    M*N - 4t floats with a scalar loop (one LDG.32/STG.32 per trip: Loop m, 3 trips at most)."""
    M, N, vec = shape["M"], shape["N"], params["VEC"]
    total = M * N
    nb = cdiv(total, THREADS * vec)
    base = buffers(**{"in": F32 * total, "out": F32 * total})

    def t(i):
        return i.bx * THREADS + i.tid

    blocks = {"x": shifted(nb, F32 * vec * THREADS, edge=(nb - 1,))}  # only the last block is cut
    if vec == 1:
        instructions = _copy("ldg in[t]", "stg out[t]", F32, base, t, lambda i: t(i) < total, blocks)
    else:
        tail = Loop("m", vec - 1)

        def in_tail(i):
            return (vec * t(i) < total) & (vec * t(i) + vec > total) & (vec * t(i) + i.m < total)

        instructions = (
            *_copy("ldg.128 in[4t..4t+3]", "stg.128 out[4t..4t+3]", F32 * vec, base, t,
                   lambda i: vec * t(i) + vec <= total, blocks),
            *_copy("ldg in[4t+m] (tail)", "stg out[4t+m] (tail)", F32, base, lambda i: vec * t(i) + i.m,
                   in_tail, blocks, loops=(tail,)),
        )
    return KernelAccess(grid=(nb, 1, 1), block=(THREADS, 1, 1), instructions=instructions, **_work(total))


def stride_access(params: Params, shape: Shape) -> KernelAccess:
    """v2_stride.cu: below `full` = M*N rounded down to a chunk of 32*STRIDE floats, lane l of
    warp w copies element (w / S) * 32S + l*S + w % S; from `full` on, thread t copies element t.

    Symmetry: moving a block by j blocks moves its warps by 8j; when S divides 8j each lane moves by
    256j floats (a multiple of 128 B). So whole blocks below `full` repeat every max(1, S/8) blocks;
    the blocks that reach `full` or the end stand alone (at most 17 of them).
    """
    M, N, S = shape["M"], shape["N"], params["STRIDE"]
    total = M * N
    chunk = 32 * S
    full = total // chunk * chunk
    nb = cdiv(total, THREADS)
    base = buffers(**{"in": F32 * total, "out": F32 * total})

    def t(i):
        return i.bx * THREADS + i.tid

    def elem(i):
        tt = t(i)
        w, lane = tt // 32, tt % 32
        return (tt < full) * ((w // S) * chunk + lane * S + w % S) + (tt >= full) * tt

    edge = range(full // THREADS, nb)  # blocks that are not wholly below `full`
    blocks = {"x": periodic(nb, max(1, S // 8), edge=edge)}
    instructions = _copy("ldg in[i]", "stg out[i]", F32, base, elem, lambda i: t(i) < total, blocks)
    return KernelAccess(grid=(nb, 1, 1), block=(THREADS, 1, 1), instructions=instructions, **_work(total))
