"""Padded staging: how the TMA rungs (t2 and up) take a K that is not a multiple of 8.

TMA describes a matrix only when its row pitch is a multiple of 16 bytes (gpulab.gpu.tma), and A
(M x K) and Bt (N x K) have a pitch of 2K bytes. For any other K the rung's `stage` step
(gpulab.experiments.base.Staged) copies both into buffers of row pitch KP = K rounded up to 64
elements (128 bytes), the pad columns zero, allocated once per run; pad_k.cu refills them in one
launch before every launch of the GEMM, inside the timed work, and the tensor maps describe the
padded buffers. The kernel runs its K/64 k-tiles unchanged: TMA zero-fills past KP, the pad adds
zeros to every dot product.

Why 128 bytes and not the 16 TMA needs: a TMA box row is 128 bytes of a k-tile, and from a row that
starts 16 bytes into a 32-byte sector (a pitch that is an odd multiple of 16 bytes, every other row)
it reads 5 sectors instead of 4, from two L2 lines. t4 reads such operands slower (H200,
2026-12-02, notebook/device/device_pitch52.sh, 3-5 rounds in alternation with cuBLAS): 4096x4096 by K =
4104 (pitch 8208 bytes, a 16-byte multiple) 206.5 us, K = 4112 (32-byte) 193.7, K = 4160 (128-byte)
190.8; at 1000x3000, K = 776 17.2 us, 784 14.0, 832 13.8 (BN 192, clusters of one; cuBLAS 13.9
at each). K rounded up to 8 gave 4097 a pitch of 4104, the slow kind; at 4160 t4 ran 4097^3 in
230.5 us against 250.7 (notebook/device/device_pitch53.sh). The padded pitch reaches the kernels through
the arrays' shape (tensor maps, t4's edge): `padded_k` is the one place that decides it.

What it costs: one read of A and Bt and one write of their padded copies,
`moved_bytes` = 2 (M + N) (K + KP) bytes, at best that over the copy ceiling (4097^3 on an H200:
135 MB, ~31 us at 4.3 TB/s; measured alone 35.9 us with the pitch of 4104), plus one launch (a
few microseconds, which is what dominated small shapes: t4 at 1000x3000x777 took 22.5 us where
1000x3000x776 took 17.3, on 2026-12-01, before the launch behind the copy below).
TMA cannot read the rows where they are instead: a box must also start on a 16-byte boundary
(notebook/probes/probe_tma_maps.py; docs/gemm_bf16-notes.md, "Ragged shapes").

Where all of the GEMM's work starts at once (one wave of blocks, or for t4 one round of tiles), it
is launched as a programmatic dependent of the copy (Staged.dependent_launch): its launch and setup
overlap the copy's last blocks, and it waits for the copy's writes (hopper.cuh's
wait_for_prior_grid, which every rung staged here calls before touching global memory). Timed in
alternation both ways (notebook/probes/ab_pdl.py, H200, 2026-12-02), that saved 1.7-1.9 us of 19-24 us at
1000x3000x777 for t2, t3 and t4 (one wave or round each). But t4 at 4097^3 (5.5 rounds) ran slower
launched that way: 301.3 against 296.5 us with clusters of 2, 398.2 against 378.7 with clusters of
1. Why is not found (the blocks then start on the SMs in the order the copy frees them, which may
matter to a multi-round kernel's L2 traffic: a guess, not measured), so longer GEMMs keep the
ordinary launch; the saving there would be under 1% anyway.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Params, Shape, Staged
from gpulab.gpu import seam
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.launch import load
from gpulab.gpu.tma import ELEMENT_BYTES, STRIDE_ALIGN_BYTES

K_MULTIPLE = STRIDE_ALIGN_BYTES // ELEMENT_BYTES  # 8 BF16: the row pitch TMA takes
PITCH_MULTIPLE = 64  # BF16, 128 bytes: the staged rows' pitch, a TMA box row (one L2 line) each
SOURCE = Path(__file__).resolve().parent / "pad_k.cu"
ENTRY = "pad_k_bf16"
THREADS = 256


def padded_k(k: int) -> int:
    """The staged copies' row pitch: K rounded up to 128 bytes (the module's docstring: why not 16)."""
    return cdiv(k, PITCH_MULTIPLE) * PITCH_MULTIPLE


def needs_staging(k: int) -> bool:
    """Whether rows of K BF16 have a pitch TMA cannot take (not a multiple of 16 bytes)."""
    return k % K_MULTIPLE != 0


def row_pitch(k: int) -> int:
    """The row pitch, in elements, of the A and Bt that the TMA rungs read: K itself where TMA takes
    it, else the staged copies'."""
    return padded_k(k) if needs_staging(k) else k


def staged_bytes(shape: Shape) -> int:
    """What one staging copy moves: A and Bt read (pitch K), their padded copies written (pitch KP)."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    return (m + n) * (k + padded_k(k)) * ELEMENT_BYTES


def pad_k_bytes(params: Params, shape: Shape) -> int:
    """What a rung's staging moves at a shape (Variant.stage_bytes): staged_bytes where K needs the
    padded copies, else nothing."""
    return staged_bytes(shape) if needs_staging(shape["K"]) else 0


def staging_grid(shape: Shape) -> tuple[int, int, int]:
    """pad_k.cu's grid: one thread per 16-byte chunk of the padded rows of A and Bt."""
    return (cdiv((shape["M"] + shape["N"]) * (padded_k(shape["K"]) // K_MULTIPLE), THREADS), 1, 1)


def pad_k(inputs: dict, shape: Shape, params: Params, arch: str, *, dependent_launch: bool) -> Staged | None:
    """The TMA rungs' `stage` step: None where K is a multiple of 8 (the inputs are read as they are),
    else padded copies of A and Bt and the launch that refills them; with `dependent_launch` (the
    rung's work starts in one round, as the rung tells) the GEMM is launched as the copy's
    programmatic dependent."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    if not needs_staging(k):
        return None
    cupy = seam.cupy()
    kp = padded_k(k)
    a_pad = cupy.empty((m, kp), dtype=cupy.uint16)
    bt_pad = cupy.empty((n, kp), dtype=cupy.uint16)
    kernel = load(compile_kernel(SOURCE, ENTRY, {}, arch))
    grid = staging_grid(shape)
    args = (inputs["A"], inputs["Bt"], a_pad, bt_pad, np.int32(m), np.int32(n), np.int32(k), np.int32(kp))
    return Staged(inputs={"A": a_pad, "Bt": bt_pad},
                  copy=lambda: kernel(grid, (THREADS, 1, 1), args),
                  moved_bytes=pad_k_bytes(params, shape), dependent_launch=dependent_launch)
