"""Access models of the transpose variants, for `gpulab predict`, `profile` and `fidelity`.

One Instruction per SASS memory instruction, read off `nvdisasm` of the sm_90 cubins (NVRTC 13.x):
- naive: one LDG and one STG per thread behind `@P0 EXIT` (row < M and col < N).
- tile, padded: the 32/ROWS passes are unrolled; each pass is an LDG and an STS predicated on the
  thread's guard, then after the barrier an LDS and an STG behind a branch on the write guard.
- vec, M and N multiples of 4: per pass one LDG.128 and four STS.32 (the padded row stride of 33
  or 65 floats rules out wider shared stores), then four LDS.32 and one STG.128; otherwise the
  scalar passes of padded, 32 lanes across each 32-column group and one tile row per warp.
The shared tile is the kernel's only shared array, at offset 0; `in` and `out` are separate
allocations laid out by `buffers`. Symmetry: blocks inside the matrix are alike up to a shift of
whole 128-byte lines (x by 128 B for reads, y by 128 B for writes); the blocks of the cut tiles at
the right and bottom edges stand alone.
"""

from __future__ import annotations

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, every, ragged, shifted

F32 = 4
TILE = 32


def _layout(shape: Shape):
    M, N = shape["M"], shape["N"]
    return M, N, buffers(**{"in": F32 * M * N, "out": F32 * M * N})


def _work(M: int, N: int) -> dict:
    return {"flops": 0.0, "dram_compulsory_bytes": 2 * F32 * M * N}


def _blocks(nx: int, ny: int, M: int, N: int, cols_per_block: int, rows_per_block: int, x_stride: int,
            y_stride: int) -> dict:
    """Classes of the block axes for an instruction whose address moves x_stride bytes per block
    along x and y_stride along y; the blocks that reach past N (x) or M (y) stand alone."""
    return {"x": shifted(nx, x_stride, edge=ragged(nx, cols_per_block, N)),
            "y": shifted(ny, y_stride, edge=ragged(ny, rows_per_block, M))}


def naive_access(params: Params, shape: Shape) -> KernelAccess:
    """naive.cu: thread (tx, ty) of block (bx, by) copies in[row][col] to out[col][row], with
    row = 8*by + ty and col = 32*bx + tx, when row < M and col < N."""
    M, N, base = _layout(shape)
    nx, ny = cdiv(N, 32), cdiv(M, 8)

    def row(i):
        return i.by * 8 + i.ty

    def col(i):
        return i.bx * 32 + i.tx

    def inside(i):
        return (row(i) < M) & (col(i) < N)

    instructions = (
        Instruction("ldg in[row][col]", "global", "load", F32, address=lambda i: base["in"] + F32 * (row(i) * N + col(i)),
                    active=inside, blocks=_blocks(nx, ny, M, N, 32, 8, F32 * 32, F32 * 8 * N)),
        Instruction("stg out[col][row]", "global", "store", F32,
                    address=lambda i: base["out"] + F32 * (col(i) * M + row(i)),
                    active=inside, blocks=_blocks(nx, ny, M, N, 32, 8, F32 * 32 * M, F32 * 8)),
    )
    return KernelAccess(grid=(nx, ny, 1), block=(32, 8, 1), instructions=instructions, **_work(M, N))


def _tile_passes(M, N, base, tile, pad, lane, row, passes, step, blocks_of, groups=1):
    """The scalar tile copy shared by tile, padded and vec's scalar path: for each 32-column group
    g (loop `g`) pass k moves tile row (row + k*step) in and tile column (row + k*step) out, lane
    `lane` taking one column (row) each. `blocks_of(x_stride, y_stride)` gives the block classes."""
    stride = tile + pad  # floats per shared row
    loops = (Loop("g", groups, every(groups)), Loop("k", passes, every(passes)))

    def trow(i):  # row of the tile this pass fills (and the tile column it empties)
        return row(i) + i.k * step

    def tcol(i):  # column of the tile this lane fills (and the tile row it reads out)
        return 32 * i.g + lane(i)

    def r(i):  # row of `in`
        return i.by * tile + trow(i)

    def c(i):
        return i.bx * tile + tcol(i)

    def orow(i):  # row of `out` = column of `in`
        return i.bx * tile + trow(i)

    def ocol(i):
        return i.by * tile + tcol(i)

    def read_guard(i):
        return (r(i) < M) & (c(i) < N)

    def write_guard(i):
        return (orow(i) < N) & (ocol(i) < M)

    return (
        Instruction("ldg in[r][c]", "global", "load", F32, address=lambda i: base["in"] + F32 * (r(i) * N + c(i)),
                    active=read_guard, loops=loops, blocks=blocks_of(F32 * tile, F32 * tile * N)),
        Instruction("sts tile[r][c]", "shared", "store", F32, address=lambda i: F32 * (trow(i) * stride + tcol(i)),
                    active=read_guard, loops=loops, blocks=blocks_of(0, 0)),
        Instruction("lds tile[c][r]", "shared", "load", F32, address=lambda i: F32 * (tcol(i) * stride + trow(i)),
                    active=write_guard, loops=loops, blocks=blocks_of(0, 0)),
        Instruction("stg out[c][r]", "global", "store", F32,
                    address=lambda i: base["out"] + F32 * (orow(i) * M + ocol(i)),
                    active=write_guard, loops=loops, blocks=blocks_of(F32 * tile * M, F32 * tile)),
    )


def tile_access(pad: int):
    """tile.cu (pad 0) and padded.cu (pad 1): block (32, ROWS), 32/ROWS passes of ROWS tile rows."""

    def access(params: Params, shape: Shape) -> KernelAccess:
        rows = params["ROWS"]
        M, N, base = _layout(shape)
        nx, ny = cdiv(N, TILE), cdiv(M, TILE)
        instructions = _tile_passes(M, N, base, TILE, pad, lambda i: i.tx, lambda i: i.ty, TILE // rows, rows,
                                    lambda xs, ys: _blocks(nx, ny, M, N, TILE, TILE, xs, ys))
        return KernelAccess(grid=(nx, ny, 1), block=(32, rows, 1), instructions=instructions, **_work(M, N))

    access.__name__ = f"{'padded' if pad else 'tile'}_access"
    return access


def vec_access(params: Params, shape: Shape) -> KernelAccess:
    """vec.cu: TILE/32 groups of 8*ROWS threads. M and N multiples of 4: thread t of group g =
    t / (8*ROWS) moves float4 column j = t % 8 of the group (tile column 32g + 4j) in tile row
    (t % 8*ROWS) / 8 + k*ROWS (one LDG.128, four STS.32, q = 0..3 the float of the four), then the
    float4 of that out row gathered from tile[32g+4j+q][row] (four LDS.32, one STG.128). Otherwise:
    padded's scalar passes, lane t % 32, tile row t / 32 + k*(warps per block), per column group."""
    rows, tile = params["ROWS"], params["TILE"]
    M, N, base = _layout(shape)
    nx, ny = cdiv(N, tile), cdiv(M, tile)
    threads = 8 * rows * (tile // 32)

    def blocks_of(xs, ys):
        return _blocks(nx, ny, M, N, tile, tile, xs, ys)

    if (M | N) & 3:
        warps = threads // 32
        instructions = _tile_passes(M, N, base, tile, 1, lambda i: i.tid % 32, lambda i: i.tid // 32, tile // warps,
                                    warps, blocks_of, groups=tile // 32)
        return KernelAccess(grid=(nx, ny, 1), block=(threads, 1, 1), instructions=instructions, **_work(M, N))

    stride = tile + 1
    passes = tile // rows
    k_loop = Loop("k", passes, every(passes))
    q_loop = Loop("q", 4, every(4))

    def col(i):  # the tile column of this lane's float4
        return 32 * (i.tid // (8 * rows)) + 4 * (i.tid % 8)

    def row(i):
        return (i.tid % (8 * rows)) // 8 + i.k * rows

    def r(i):
        return i.by * tile + row(i)

    def c(i):
        return i.bx * tile + col(i)

    def orow(i):
        return i.bx * tile + row(i)

    def ocol(i):
        return i.by * tile + col(i)

    def read_guard(i):
        return (r(i) < M) & (c(i) < N)

    def write_guard(i):
        return (orow(i) < N) & (ocol(i) < M)

    instructions = (
        Instruction("ldg.128 in[r][c..c+3]", "global", "load", 4 * F32,
                    address=lambda i: base["in"] + F32 * (r(i) * N + c(i)),
                    active=read_guard, loops=(k_loop,), blocks=blocks_of(F32 * tile, F32 * tile * N)),
        Instruction("sts tile[r][col+q]", "shared", "store", F32,
                    address=lambda i: F32 * (row(i) * stride + col(i) + i.q),
                    active=read_guard, loops=(k_loop, q_loop), blocks=blocks_of(0, 0)),
        Instruction("lds tile[col+q][r]", "shared", "load", F32,
                    address=lambda i: F32 * ((col(i) + i.q) * stride + row(i)),
                    active=write_guard, loops=(k_loop, q_loop), blocks=blocks_of(0, 0)),
        Instruction("stg.128 out[r][c..c+3]", "global", "store", 4 * F32,
                    address=lambda i: base["out"] + F32 * (orow(i) * M + ocol(i)),
                    active=write_guard, loops=(k_loop,), blocks=blocks_of(F32 * tile * M, F32 * tile)),
    )
    return KernelAccess(grid=(nx, ny, 1), block=(threads, 1, 1), instructions=instructions, **_work(M, N))
