"""v14's staging step: FP32 A and B split into TF32 high and low parts, laid out K-major for three
products in one GEMM over 3 KP (tf32_split.cu says how, and why in that order).

The split copies are allocated once per run and refilled by one launch before every launch of the
GEMM, inside the timed work (gpulab.experiments.base.Staged), so v14's time is all of what a user
of it pays. t4 reads them through its TMA tensor maps, which count 16-bit elements: the staged
arrays go to it as 16-bit views, two per FP32 (a 128-byte k-tile is 64 of them, 32 TF32), and
RING_K in v14's .cu turns the entry's K into that extent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape, Staged
from gpulab.gpu import seam
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.launch import load
from gpulab.gpu.tma import F32_BYTES, STRIDE_ALIGN_BYTES

SOURCE = Path(__file__).resolve().parent.parent / "tf32_split.cu"  # beside the variants' .cu files
ENTRY = "split_tf32"
THREADS = 256
TILE = 32  # the B transpose's tile, k rows by n columns
K_MULTIPLE = STRIDE_ALIGN_BYTES // F32_BYTES  # 4 FP32: the row pitch TMA takes
PARTS = 3  # lo*hi, hi*lo, hi*hi


def tf32_rna(x: np.ndarray) -> np.ndarray:
    """cvt.rna.tf32.f32 in numpy: keep 10 of FP32's 23 mantissa bits, rounding half away from zero
    (add half of the dropped part's weight to the magnitude bits, then cut). The split's model,
    which the tests hold the kernel to bit for bit."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def split_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo) of FP32 `x` as tf32_split.cu computes them: hi = rna(x), lo = rna(x - hi)."""
    hi = tf32_rna(x)
    with np.errstate(invalid="ignore"):  # an infinite x: lo = inf - inf = NaN, as on the card
        return hi, tf32_rna((np.asarray(x, dtype=np.float32) - hi).astype(np.float32))


def padded_k(k: int) -> int:
    return cdiv(k, K_MULTIPLE) * K_MULTIPLE


def split_bytes(shape: Shape) -> int:
    """What one split moves: A and B read, A3 and Bt3 written."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    return 4 * ((m + n) * k + PARTS * (m + n) * padded_k(k))


def split_grid(shape: Shape) -> tuple[int, int]:
    """(blocks for A, blocks in all): a thread per 4 k of A's rows, then B's 32 x 32 tiles."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    kp = padded_k(k)
    blocks_a = cdiv(m * (kp // K_MULTIPLE), THREADS)
    return blocks_a, blocks_a + cdiv(kp, TILE) * cdiv(n, TILE)


def split_tf32(inputs: dict, shape: Shape, params: Params, arch: str, *, dependent_launch: bool) -> Staged:
    """A3 and Bt3 (as 16-bit views for the tensor maps) and the launch that refills them; with
    `dependent_launch` the GEMM is launched as the split's programmatic dependent."""
    cupy = seam.cupy()
    m, n, k = shape["M"], shape["N"], shape["K"]
    kp = padded_k(k)
    a3 = cupy.empty((m, PARTS * kp), dtype=cupy.float32)
    bt3 = cupy.empty((n, PARTS * kp), dtype=cupy.float32)
    kernel = load(compile_kernel(SOURCE, ENTRY, {}, arch))
    blocks_a, blocks = split_grid(shape)
    args = (inputs["A"], inputs["B"], a3, bt3, np.int32(m), np.int32(n), np.int32(k), np.int32(kp), np.int32(blocks_a))
    return Staged(inputs={"A": a3.view(cupy.uint16), "B": bt3.view(cupy.uint16)},
                  copy=lambda: kernel((blocks, 1, 1), (THREADS, 1, 1), args),
                  moved_bytes=split_bytes(shape), dependent_launch=dependent_launch)
