"""Access models of the stencil variants: what each moving average asks of memory, for `gpulab predict`.

One `Instruction` per SASS memory instruction, read off `nvdisasm` of the sm_90 cubins of NVRTC
13.0 (the H200's) and 13.5, which issue the same memory instructions.
What the compiler does that the counts depend on:
- global: the 2R+1 taps are unrolled into 2R+1 LDG.32, each predicated on 0 <= j < n (a lane
  whose neighbour is outside the input loads nothing), behind `@P0 EXIT` for i >= n.
- shared / nosync: the fill loop `for (k = tid; k < 256 + 2R; k += 256)` becomes the compiler's
  generic strided loop: a remainder loop of (trips & 3) single steps first, then bodies unrolled by
  16, 8 and 4. Here trips <= 2, so every step runs in the remainder loop, in source order: an
  LDG.32 predicated on 0 <= j < n and an unconditional STS.32 (the value or 0) per step. The 2R+1
  tile reads are scalar LDS.32 (tid + k has no known alignment).
- regs: the same fill loop with 4 or 5 trips (TILE = 1020 + 4*ceil((4+2R)/4) floats). Threads with
  5 trips (tid < TILE - 1024) run one remainder step alone first, then every thread runs the body
  unrolled by 4, so in its u-th LDG a thread with 5 trips is at step u + 1 and one with 4 trips at
  step u: the first warp's unrolled loads are two runs, not one. The window is read with
  floor((4+2R)/4) LDS.128 plus, when R is odd, one LDS.64 (the compiler drops the two floats of the
  last float4 that no output uses). Outputs go out as one STG.128 when i + 4 <= n, else as up to
  three predicated STG.32 (the fourth can never be in range on that path).
The tile is the kernel's only shared array, at shared offset 0; `in` and `out` are separate
allocations laid out by `buffers`. See gpulab.model.predict for the API.
"""

from __future__ import annotations

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape
from gpulab.model.predict import Instruction, KernelAccess, Loop, buffers, every, same, shifted

F32 = 4
BLOCK = 256


def _work(n: int, r: int) -> dict:
    # 2R adds per output (the one division by 2R+1 is not counted); x read once, out written once.
    return {"flops": 2.0 * r * n, "dram_compulsory_bytes": 2 * F32 * n}


def _blocks(nb: int, outputs_per_block: int, reach: int, n: int) -> dict:
    """Blocks move by whole 128-byte lines; the first block (its left halo starts below 0) and the
    last ones (their reads reach n - 1 or beyond, within `reach` floats of their outputs) stand alone."""
    last_clean = max(0, (n - reach) // outputs_per_block - 1)
    edge = {0, *range(last_clean, nb)}
    return {"x": shifted(nb, F32 * outputs_per_block, edge=edge)}


def global_access(params: Params, shape: Shape) -> KernelAccess:
    """v0_global.cu: thread i < n reads in[i-R .. i+R] (2R+1 predicated LDG.32) and writes out[i]."""
    r, n = params["R"], shape["N"]
    nb = cdiv(n, BLOCK)
    base = buffers(**{"in": F32 * n, "out": F32 * n})
    blocks = _blocks(nb, BLOCK, r + BLOCK, n)

    def i(ix):
        return ix.bx * BLOCK + ix.tid

    def j(ix):
        return i(ix) + ix.k - r

    instructions = (
        Instruction("ldg in[i+k-R]", "global", "load", F32, address=lambda ix: base["in"] + F32 * j(ix),
                    active=lambda ix: (i(ix) < n) & (j(ix) >= 0) & (j(ix) < n),
                    loops=(Loop("k", 2 * r + 1, every(2 * r + 1)),), blocks=blocks),
        Instruction("stg out[i]", "global", "store", F32, address=lambda ix: base["out"] + F32 * i(ix),
                    active=lambda ix: i(ix) < n, blocks=blocks),
    )
    return KernelAccess(grid=(nb, 1, 1), block=(BLOCK, 1, 1), instructions=instructions, **_work(n, r))


def shared_access(params: Params, shape: Shape) -> KernelAccess:
    """v1_shared_tile.cu (and demo_nosync.cu, the same instructions without the barrier): the block
    fills tile[k] = in[bx*256 - R + k] (0 outside [0, n)) for k < 256 + 2R in steps s of 256, then
    thread i < n reads tile[tid .. tid + 2R] and writes out[i]."""
    r, n = params["R"], shape["N"]
    nb = cdiv(n, BLOCK)
    span = BLOCK + 2 * r
    base = buffers(**{"in": F32 * n, "out": F32 * n})
    blocks = _blocks(nb, BLOCK, span, n)
    fill = Loop("s", cdiv(span, BLOCK), every(cdiv(span, BLOCK)))

    def k(ix):
        return ix.tid + BLOCK * ix.s

    def j(ix):
        return ix.bx * BLOCK - r + k(ix)

    def i(ix):
        return ix.bx * BLOCK + ix.tid

    instructions = (
        Instruction("ldg in[j] (fill)", "global", "load", F32, address=lambda ix: base["in"] + F32 * j(ix),
                    active=lambda ix: (k(ix) < span) & (j(ix) >= 0) & (j(ix) < n), loops=(fill,), blocks=blocks),
        Instruction("sts tile[k] (fill)", "shared", "store", F32, address=lambda ix: F32 * k(ix),
                    active=lambda ix: k(ix) < span, loops=(fill,), blocks={"x": same(nb)}),
        Instruction("lds tile[tid+k]", "shared", "load", F32, address=lambda ix: F32 * (ix.tid + ix.t),
                    active=lambda ix: i(ix) < n, loops=(Loop("t", 2 * r + 1, every(2 * r + 1)),), blocks=blocks),
        Instruction("stg out[i]", "global", "store", F32, address=lambda ix: base["out"] + F32 * i(ix),
                    active=lambda ix: i(ix) < n, blocks=blocks),
    )
    return KernelAccess(grid=(nb, 1, 1), block=(BLOCK, 1, 1), instructions=instructions, **_work(n, r))


def regs_access(params: Params, shape: Shape) -> KernelAccess:
    """v2_register_window.cu: 1024 outputs per block. Fill tile[k] = in[bx*1024 - R + k] for
    k < TILE (a remainder step for tid < TILE - 1024, then 4 unrolled steps for every thread, see
    the module docstring); read the window with LDS.128 (and an LDS.64 when R is odd); write
    out[i .. i+3], i = bx*1024 + 4*tid, as one STG.128 or, at the end of the data, STG.32s."""
    r, n = params["R"], shape["N"]
    per = 4
    out_block = BLOCK * per
    span4 = cdiv(per + 2 * r, 4)
    tile = out_block - per + 4 * span4
    extra = tile - out_block  # threads below this have 5 fill steps, one of them in the remainder loop
    assert 0 < extra <= BLOCK, "the fill model assumes 4 or 5 steps per thread"
    nb = cdiv(n, out_block)
    base = buffers(**{"in": F32 * n, "out": F32 * n})
    blocks = _blocks(nb, out_block, tile + out_block, n)
    whole, half = (per + 2 * r) // 4, (per + 2 * r) % 4 == 2

    def first(ix):
        return ix.bx * out_block - r

    def step(ix):  # the fill step a thread is at in the u-th unrolled LDG
        return (ix.tid < extra) + ix.u

    def j_unrolled(ix):
        return first(ix) + ix.tid + BLOCK * step(ix)

    def inside(j):
        return (j >= 0) & (j < n)

    def o(ix):
        return ix.bx * out_block + per * ix.tid

    unrolled = Loop("u", 4, every(4))
    every_block = {"x": same(nb)}
    instructions = [
        Instruction("ldg in[j] (fill, remainder step)", "global", "load", F32,
                    address=lambda ix: base["in"] + F32 * (first(ix) + ix.tid),
                    active=lambda ix: (ix.tid < extra) & inside(first(ix) + ix.tid), blocks=blocks),
        Instruction("sts tile[k] (fill, remainder step)", "shared", "store", F32,
                    address=lambda ix: F32 * ix.tid, active=lambda ix: ix.tid < extra, blocks=every_block),
        Instruction("ldg in[j] (fill, unrolled x4)", "global", "load", F32,
                    address=lambda ix: base["in"] + F32 * j_unrolled(ix),
                    active=lambda ix: inside(j_unrolled(ix)), loops=(unrolled,), blocks=blocks),
        Instruction("sts tile[k] (fill, unrolled x4)", "shared", "store", F32,
                    address=lambda ix: F32 * (ix.tid + BLOCK * step(ix)), loops=(unrolled,), blocks=every_block),
        Instruction("lds.128 tile4[tid+q]", "shared", "load", 16, address=lambda ix: 16 * (ix.tid + ix.q),
                    loops=(Loop("q", whole, every(whole)),), blocks=every_block),
    ]
    if half:
        instructions.append(Instruction("lds.64 tile4[tid+last].xy", "shared", "load", 8,
                                        address=lambda ix: 16 * (ix.tid + whole), blocks=every_block))
    instructions += [
        Instruction("stg.128 out[i..i+3]", "global", "store", 16, address=lambda ix: base["out"] + F32 * o(ix),
                    active=lambda ix: o(ix) + per <= n, blocks=blocks),
        Instruction("stg out[i+m] (end)", "global", "store", F32,
                    address=lambda ix: base["out"] + F32 * (o(ix) + ix.m),
                    active=lambda ix: (o(ix) + per > n) & (o(ix) + ix.m < n),
                    loops=(Loop("m", per - 1, every(per - 1)),), blocks=blocks),
    ]
    return KernelAccess(grid=(nb, 1, 1), block=(BLOCK, 1, 1), instructions=tuple(instructions), **_work(n, r))


def _halo_components(r: int, side: str) -> tuple[int, ...]:
    """The floats of a halo float4 that some output of the warp reads: all four once the halo is
    two float4s or more (R >= 5); for R <= 4 (one float4, one lane) the left halo's last R and the
    right halo's first R. The compiler loads only those: see shfl_access."""
    if r >= 4:
        return (0, 1, 2, 3)
    return tuple(range(4 - r, 4)) if side == "left" else tuple(range(r))


def shfl_access(params: Params, shape: Shape) -> KernelAccess:
    """v3_warp_shuffle.cu: warp w (= bx*8 + warp) owns float4s base4 = w*32*ROWS .. +32*ROWS
    (ROWS = PER/4), lane l float4 base4 + 32q + l in row q. Per warp: ROWS centre LDG.128, one left
    halo load in lanes >= 32 - H (float4 base4 - 32 + l) and one right halo load in lanes < H
    (float4 base4 + 32*ROWS + l), H = ceil(R/4); ROWS STG.128 of the outputs.

    Assumes (SASS at R = 1..5, 8, 32 and PER = 8, 16, NVRTC 13.0 and 13.5):
    - a halo load is as wide as the floats some output reads (`_halo_components`): for R = 1 an
      LDG.32 (left: float 3; right: float 0), for R = 2 an LDG.64, for R >= 3 an LDG.128;
    - blocks past the first whose reads stay below N take an unchecked path; the others check:
      a float4 wholly inside [0, N) is one load as above; the last, partial one (4g < N < 4g + 4) is
      scalar LDG.32 of its floats below N, for the centre floats 0-2 and for a halo only the floats
      it uses among 0-2 (none for the left halo at R = 1); outside [0, N) nothing is loaded. Stores
      alike: STG.128 for a whole float4, STG.32 of floats 0-2 below N for the partial one.
    Both paths issue the same instruction per warp wherever both could, so one guarded instruction
    models both. HINT=1 (ld.global.cs on the centre rows) changes no count.
    """
    r, per, n = params["R"], params["PER"], shape["N"]
    rows, h = per // 4, cdiv(r, 4)
    run = 32 * rows  # float4s per warp
    nb = cdiv(n, per * BLOCK)
    base = buffers(**{"in": F32 * n, "out": F32 * n})
    lo = max(0, (n // 4 - h) // (8 * run) - 1)
    blocks = {"x": shifted(nb, 16 * 8 * run, edge={0, *range(lo, nb)})}

    def base4(i):
        return (i.bx * 8 + i.warp) * run

    def whole(g):
        return (g >= 0) & (4 * g + 4 <= n)

    def partial(g, c):
        return (g >= 0) & (4 * g < n) & (4 * g + 4 > n) & (4 * g + c < n)

    sides = {
        "left": (lambda i: base4(i) - 32 + i.lane, lambda i: i.lane >= 32 - h),
        "right": (lambda i: base4(i) + run + i.lane, lambda i: i.lane < h),
    }
    out = []
    for side, (g, lanes) in sides.items():
        comps = _halo_components(r, side)
        width = 4 * len(comps) if len(comps) < 3 else 16
        first = comps[0] if width < 16 else 0
        out.append(Instruction(
            f"ldg.{8 * width} in4[{side} halo]", "global", "load", width,
            address=lambda i, g=g, first=first: base["in"] + 16 * g(i) + F32 * first,
            active=lambda i, g=g, lanes=lanes: lanes(i) & whole(g(i)), blocks=blocks))
        scalars = tuple(c for c in comps if c < 3)
        if scalars:
            out.append(Instruction(
                f"ldg in[{side} halo, partial float4]", "global", "load", F32,
                address=lambda i, g=g, scalars=scalars: base["in"] + 16 * g(i) + F32 * np.asarray(scalars)[i.c],
                active=lambda i, g=g, lanes=lanes, scalars=scalars: lanes(i) & partial(g(i), np.asarray(scalars)[i.c]),
                loops=(Loop("c", len(scalars), every(len(scalars))),), blocks=blocks))

    def centre(i):
        return base4(i) + 32 * i.q + i.lane

    row_loop = Loop("q", rows, every(rows))
    three = Loop("c", 3, every(3))
    out += [
        Instruction("ldg.128 in4[centre row q]", "global", "load", 16, address=lambda i: base["in"] + 16 * centre(i),
                    active=lambda i: whole(centre(i)), loops=(row_loop,), blocks=blocks),
        Instruction("ldg in[centre, partial float4]", "global", "load", F32,
                    address=lambda i: base["in"] + 16 * centre(i) + F32 * i.c,
                    active=lambda i: partial(centre(i), i.c), loops=(row_loop, three), blocks=blocks),
        Instruction("stg.128 out4[row q]", "global", "store", 16, address=lambda i: base["out"] + 16 * centre(i),
                    active=lambda i: whole(centre(i)), loops=(row_loop,), blocks=blocks),
        Instruction("stg out[partial float4]", "global", "store", F32,
                    address=lambda i: base["out"] + 16 * centre(i) + F32 * i.c,
                    active=lambda i: partial(centre(i), i.c), loops=(row_loop, three), blocks=blocks),
    ]
    return KernelAccess(grid=(nb, 1, 1), block=(BLOCK, 1, 1), instructions=tuple(out), **_work(n, r))
