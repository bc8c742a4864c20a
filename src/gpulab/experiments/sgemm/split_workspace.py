"""What the split-K kernels across blocks (gv, sx: split_k.cuh) share: the workspace of S partial
planes and the per-tile arrival counters they take as extra arguments, and the same in their access
models: where those buffers lie and what the last block to arrive at a tile runs."""

from __future__ import annotations

from typing import Callable

from gpulab.experiments.base import Params, Shape
from gpulab.experiments.sgemm.ladder.access import F32
from gpulab.gpu.seam import cupy
from gpulab.model.predict import Classes, Instruction, buffers


def split_buffers(inputs: dict, out, shape: Shape, params: Params, tiles: int) -> tuple:
    """The split-K kernels' extra arguments: a workspace of S planes of M x N floats and one counter
    per output tile, zeroed here once; the kernels leave the counters zero after every launch (the
    last block at a tile resets its own), so a launcher may run any number of times. With S = 1 the
    kernels touch neither: one-element stand-ins."""
    cp = cupy()
    s = params["S"]
    work = cp.zeros(s * shape["M"] * shape["N"] if s > 1 else 1, dtype=cp.float32)
    counters = cp.zeros(tiles if s > 1 else 1, dtype=cp.uint32)
    return work, counters


def split_bases(M: int, N: int, K: int, S: int, tiles: int) -> dict[str, int]:
    """A, B, C and the split kernels' extra arguments (split_buffers: S planes of M x N floats and a
    counter per tile, one-element stand-ins when S = 1), each cudaMalloc'd: 256-byte aligned, which
    is all the counts depend on."""
    return buffers(A=F32 * M * K, B=F32 * K * N, C=F32 * M * N, W=F32 * S * M * N if S > 1 else F32,
                   counters=4 * tiles if S > 1 else 4)


def last_slice(S: int) -> Classes:
    """Classes of the slices (blockIdx.y) for what only the block that arrives last at a tile runs:
    which of the S blocks that is changes from run to run, but its counts do not (it reads every
    slice's plane, whichever it is), so slice S-1 stands for it and the other S-1 run none of it."""
    return ((0, S - 1), (S - 1, 1)) if S > 1 else ((0, 1),)


def last_to_arrive(S: int, every_block: dict, counter: Callable) -> list[Instruction]:
    """split_k.cuh's last_to_arrive, as the SASS runs it (gv and sx, sm_90): thread 0 of each block
    adds 1 to its tile's counter (ATOMG: an atomic, in none of the load or store counters) and, in
    the last block, resets the counter (STG of 0); the answer reaches every warp through the barrier
    (BAR.RED.OR: no shared memory). The fences (MEMBAR, and in gv CCTL.IVALL, which invalidates L1)
    move no data through the counted pipes. `every_block`: the classes of every block axis;
    `counter(i)`: the byte address of its counter."""
    last = {**every_block, "y": last_slice(S)}
    return [
        Instruction("stg counter = 0 (thread 0, last block)", "global", "store", F32, address=counter,
                    active=lambda i: (i.tid == 0) & (i.by == S - 1), blocks=last),
    ]
