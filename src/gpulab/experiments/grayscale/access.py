"""Access models of the grayscale variants: what each walk asks of memory, for `gpulab predict`.

One `Instruction` per SASS memory instruction, read off `nvdisasm` of the sm_90 cubins of NVRTC
13.0 (the H200's) and 13.5, which issue the same memory instructions:
a pixel is read with one LDG.32 (the uchar4 as one word) and written with one STG.U8, behind the
guard of each variant (`@P0 EXIT` or a branch around the pair); vec4's fast path is one LDG.128 and
one STG.32 per thread, and its one tail thread converts the 1-3 leftover pixels with a scalar loop.
The image is packed: pixel p = y * width + x is bytes 4p..4p+3 of `rgba` and byte p of `gray`.
See gpulab.model.predict for the API and what the symmetry classes promise.
"""

from __future__ import annotations

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, every, ragged, shifted

THREADS = 256
RGBA = 4  # bytes per input pixel
GRAY = 1  # bytes per output pixel


def _base(shape: Shape) -> dict:
    pixels = shape["width"] * shape["height"]
    return buffers(rgba=RGBA * pixels, gray=GRAY * pixels)


def _work(shape: Shape) -> dict:
    return {"flops": 0.0, "dram_compulsory_bytes": (RGBA + GRAY) * shape["width"] * shape["height"]}


def _pair(base: dict, pixel, active, load_blocks, store_blocks, loops=(), suffix=""):
    """LDG rgba[p] (4 B) and STG.U8 gray[p] (1 B) for p = pixel(i)."""
    return (
        Instruction(f"ldg rgba[p]{suffix}", "global", "load", RGBA,
                    address=lambda i: base["rgba"] + RGBA * pixel(i), active=active, loops=loops,
                    blocks=load_blocks),
        Instruction(f"stg.u8 gray[p]{suffix}", "global", "store", GRAY,
                    address=lambda i: base["gray"] + GRAY * pixel(i), active=active, loops=loops,
                    blocks=store_blocks),
    )


def column_access(params: Params, shape: Shape) -> KernelAccess:
    """v0_column_walk.cu: block (1 x 256), grid (width, ceil(height/256)); the thread of (bx, by,
    ty) converts pixel (x = bx, y = by*256 + ty) when y < height, so a warp's lanes are 32 rows apart
    in one column. Block x moves a lane by 4 B (load) / 1 B (store): 32 / 128 alignments; block y
    moves by 256 rows, a multiple of 128 B, only the last block-row is cut."""
    w, h = shape["width"], shape["height"]
    nby = cdiv(h, THREADS)
    base = _base(shape)

    def pixel(i):
        return (i.by * THREADS + i.ty) * w + i.bx

    y_classes = shifted(nby, RGBA * THREADS * w, edge=ragged(nby, THREADS, h))
    instructions = _pair(
        base, pixel, lambda i: i.by * THREADS + i.ty < h,
        {"x": shifted(w, RGBA), "y": y_classes}, {"x": shifted(w, GRAY), "y": y_classes},
    )
    return KernelAccess(grid=(w, nby, 1), block=(1, THREADS, 1), instructions=instructions, **_work(shape))


def row_access(params: Params, shape: Shape) -> KernelAccess:
    """v1_row_walk.cu: block (256 x 1), grid (ceil(width/256), height); the thread of (bx, by, tx)
    converts pixel (x = bx*256 + tx, y = by) when x < width: a warp reads 128 contiguous bytes."""
    w, h = shape["width"], shape["height"]
    nbx = cdiv(w, THREADS)
    base = _base(shape)

    def pixel(i):
        return i.by * w + i.bx * THREADS + i.tx

    x_edge = ragged(nbx, THREADS, w)
    instructions = _pair(
        base, pixel, lambda i: i.bx * THREADS + i.tx < w,
        {"x": shifted(nbx, RGBA * THREADS, x_edge), "y": shifted(h, RGBA * w)},
        {"x": shifted(nbx, GRAY * THREADS, x_edge), "y": shifted(h, GRAY * w)},
    )
    return KernelAccess(grid=(nbx, h, 1), block=(THREADS, 1, 1), instructions=instructions, **_work(shape))


def multi_access(params: Params, shape: Shape) -> KernelAccess:
    """v2_multi_pixel.cu: thread t converts pixels PIX*t + k, k < PIX, each behind its own
    `p < total` branch (PIX LDG.32 / STG.U8 pairs, fully unrolled; no vectorizing: the compiler
    cannot prove 16-byte alignment of rgba + PIX*t)."""
    pix = params["PIX"]
    total = shape["width"] * shape["height"]
    nb = cdiv(total, THREADS * pix)
    base = _base(shape)

    def pixel(i):
        return (i.bx * THREADS + i.tid) * pix + i.k

    blocks = {"x": shifted(nb, GRAY * THREADS * pix, edge=(nb - 1,))}  # whole lines; the last block is cut
    instructions = _pair(base, pixel, lambda i: pixel(i) < total, blocks, blocks,
                         loops=(Loop("k", pix, every(pix)),))
    return KernelAccess(grid=(nb, 1, 1), block=(THREADS, 1, 1), instructions=instructions, **_work(shape))


def vec4_access(params: Params, shape: Shape) -> KernelAccess:
    """v3_vectorized.cu: thread g with 4g + 4 <= total reads pixels 4g..4g+3 with one LDG.128 (bytes
    16g..16g+15) and writes their gray bytes with one STG.32 (bytes 4g..4g+3); the one thread with
    4g < total < 4g + 4 converts pixels 4g .. total-1 with a scalar loop (LDG.32 + STG.U8 per trip:
    Loop m, at most 3 trips, all in the compiler's remainder loop)."""
    total = shape["width"] * shape["height"]
    nb = cdiv(total, THREADS * 4)
    base = _base(shape)

    def g(i):
        return i.bx * THREADS + i.tid

    def fast(i):
        return 4 * g(i) + 4 <= total

    def in_tail(i):
        return (4 * g(i) < total) & (4 * g(i) + 4 > total) & (4 * g(i) + i.m < total)

    blocks = {"x": shifted(nb, 4 * GRAY * THREADS, edge=(nb - 1,))}
    instructions = (
        Instruction("ldg.128 rgba[4g..4g+3]", "global", "load", 4 * RGBA,
                    address=lambda i: base["rgba"] + 4 * RGBA * g(i), active=fast, blocks=blocks),
        Instruction("stg.32 gray[4g..4g+3]", "global", "store", 4 * GRAY,
                    address=lambda i: base["gray"] + 4 * GRAY * g(i), active=fast, blocks=blocks),
        *_pair(base, lambda i: 4 * g(i) + i.m, in_tail, blocks, blocks, loops=(Loop("m", 3),),
               suffix=" (tail)"),
    )
    return KernelAccess(grid=(nb, 1, 1), block=(THREADS, 1, 1), instructions=instructions, **_work(shape))


def wide_access(params: Params, shape: Shape) -> KernelAccess:
    """v4_wide.cu: block b owns groups (of 4 pixels) b*256*V .. +256*V; thread t of it group
    g = b*256*V + t + 256*v for v < V: one LDG.128 (bytes 16g..) and one STG.32 (bytes 4g..) each.
    Interior blocks (all their groups whole) take an unchecked path, the last block(s) a checked one
    (g < total/4): different SASS, the same instructions per warp, so one guarded instruction per v
    counts both. The thread with g == total/4 converts the 1-3 leftover pixels with a scalar loop
    (LDG.32 + STG.U8 per trip, all in the compiler's remainder loop). HINT=1 only turns the
    LDG.128 into LDG.E.EF.128 (evict-first): the same requests and sectors.

    Assumes (SASS at V = 1, 2, 4 and HINT = 0, 1, NVRTC 13.0 and 13.5): the above, V loads issued
    before the V stores in the interior path.
    """
    V = params["V"]
    total = shape["width"] * shape["height"]
    groups = total // 4
    per_block = THREADS * V
    nb = cdiv(total, THREADS * 4 * V)
    base = _base(shape)

    def g(i):
        return i.bx * per_block + i.tid + THREADS * i.v

    def whole(i):
        return g(i) < groups

    def in_tail(i):
        return (g(i) == groups) & (4 * groups + i.m < total)

    blocks = {"x": shifted(nb, 4 * GRAY * per_block, edge=range(groups // per_block, nb))}
    group_loop = Loop("v", V, every(V))
    instructions = (
        Instruction("ldg.128 rgba[4g..4g+3]", "global", "load", 4 * RGBA,
                    address=lambda i: base["rgba"] + 4 * RGBA * g(i), active=whole, loops=(group_loop,),
                    blocks=blocks),
        Instruction("stg.32 gray[4g..4g+3]", "global", "store", 4 * GRAY,
                    address=lambda i: base["gray"] + 4 * GRAY * g(i), active=whole, loops=(group_loop,),
                    blocks=blocks),
        *_pair(base, lambda i: 4 * groups + i.m, in_tail, blocks, blocks,
               loops=(group_loop, Loop("m", 3, every(3))), suffix=" (tail)"),
    )
    return KernelAccess(grid=(nb, 1, 1), block=(THREADS, 1, 1), instructions=instructions, **_work(shape))
