"""GEMM in BF16 on the tensor cores: C = A * B^T with BF16 inputs, FP32 accumulation, FP32 output.

Layouts (the choice every variant and the cuBLAS baseline share):
  A   M x K BF16, row-major: K is the contiguous dimension ("K-major").
  B   given as Bt, N x K BF16, row-major: B transposed, so K is contiguous here too.
  C   M x N FP32, row-major.
Why both operands K-major: a tensor-core instruction consumes 16 (or more) consecutive k of a row
of A and of a column of B at once, so with K contiguous in both, one 16-byte copy moves 8 k of one
row straight into the layout ldmatrix and wgmma read, with no transpose anywhere. Hopper's wgmma
takes shared-memory operands in K-major layout for every type and a transposed ("MN-major") one
only for 16-bit types, and TMA copies boxes as they lie, so this is the layout the Hopper rungs
want. In cuBLAS's column-major terms it is the "TN" GEMM (C^T = Bt^T' * A^T with op(Bt) = T), the
layout its tensor-core kernels are tuned for first.

BF16 values are held as their bits in uint16 arrays (CuPy has no bfloat16 dtype): see bf16.py for
the rounding and for the tolerance of the check.

The napkin math: 2*M*N*K flops; the compulsory DRAM traffic is A and B read once (2 bytes an
element) and C written once (4 bytes), 2*M*K + 2*N*K + 4*M*N bytes. At 4096^3: 137 GFLOP against
134 MB, 1024 flop per byte; the H200 does ~990 dense BF16 TFLOP/s (datasheet) on ~4.3 TB/s, a ridge
of ~230 flop per byte, so from 1024^3 up the tensor-core rate and cuBLAS are the ceilings.
"""

from __future__ import annotations

import numpy as np

from gpulab.arith import cdiv
from gpulab.experiments.base import Launch, Param, Params, Shape, Variant
from gpulab.experiments.gemm_bf16.access import t0_access, t1_access
from gpulab.experiments.gemm_bf16.bf16 import from_bf16_bits, to_bf16_bits, tolerance as bf16_tolerance
from gpulab.experiments.gemm_bf16.cluster_split_k import KC
from gpulab.experiments.gemm_bf16.decode import D0
from gpulab.experiments.gemm_bf16.swap_stream_k import KS
from gpulab.experiments.gemm_bf16.tma_rungs import T2, T3, T4
from gpulab.experiments.gemm_bf16.staging import needs_staging, padded_k
from gpulab.experiments.gemm_common import (
    SMEM_BLOCK_OPTIN_MAX, SMEM_PER_BLOCK_RESERVED, SMEM_SM_MAX, GemmProblem, check_regs,
)
from gpulab.gpu import seam

# cuBLAS's enum values (cublas_api.h, library_types.h): CuPy 14 passes them through as ints.
CUDA_R_32F = 0
CUDA_R_16BF = 14
CUBLAS_COMPUTE_32F = 68
CUBLAS_GEMM_DEFAULT = -1
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
CUBLAS_POINTER_MODE_HOST = 0


# -- launch geometry and constraints ------------------------------------------------------------
def _warps(p: Params) -> int:
    return (p["BM"] // p["WM"]) * (p["BN"] // p["WN"])


def _grid_launch(p: Params, s: Shape, smem: int = 0) -> Launch:
    return Launch(grid=(cdiv(s["N"], p["BN"]), cdiv(s["M"], p["BM"]), 1), block=(32 * _warps(p), 1, 1),
                  smem_dynamic_bytes=smem)


def t0_smem_bytes(p: Params) -> int:
    """The A and B tiles (BK + 8 bf16 per row: the padding keeps wmma's row reads off one bank),
    or the FP32 C tile the epilogue stages, whichever is larger: they share one allocation."""
    tiles = 2 * (p["BM"] + p["BN"]) * (p["BK"] + 8)
    return max(tiles, 4 * p["BM"] * p["BN"])


def _t0_launch(p: Params, s: Shape) -> Launch:
    return _grid_launch(p, s, t0_smem_bytes(p))


def t1_smem_bytes(p: Params) -> int:
    """STAGES ring slots of the A and B tiles, BK bf16 a row, unpadded (the XOR swizzle spreads
    them over the banks)."""
    return p["STAGES"] * 2 * (p["BM"] + p["BN"]) * p["BK"]


def _t1_launch(p: Params, s: Shape) -> Launch:
    # A 1D grid: the kernel maps block ids to tiles in groups of GROUP_M block-rows.
    blocks = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    return Launch(grid=(blocks, 1, 1), block=(32 * _warps(p), 1, 1), smem_dynamic_bytes=t1_smem_bytes(p))


def _common_reason(p: Params, min_warp_m: int, min_warp_n: int) -> str | None:
    if p["BM"] % p["WM"] or p["BN"] % p["WN"]:
        return f"the {p['BM']}x{p['BN']} block tile is not a whole number of {p['WM']}x{p['WN']} warp tiles"
    if p["WM"] % min_warp_m or p["WN"] % min_warp_n:
        return f"the {p['WM']}x{p['WN']} warp tile is not a whole number of {min_warp_m}x{min_warp_n} MMA tiles"
    threads = 32 * _warps(p)
    if not 32 <= threads <= 1024:
        return f"{threads} threads per block: need 1 to 32 warps"
    # Each thread copies whole 16-byte rows of 8 k: the tiles must split evenly over the threads.
    for rows, what in ((p["BM"], "A"), (p["BN"], "B")):
        if (rows * p["BK"] // 8) % threads:
            return f"the {rows}x{p['BK']} {what} tile must split into whole 16-byte copies per thread ({threads} threads)"
    return None


def _t0_constraints(p: Params, s: Shape | None) -> str | None:
    if reason := _common_reason(p, 16, 16):
        return reason
    if t0_smem_bytes(p) > SMEM_BLOCK_OPTIN_MAX:
        return f"the tiles need {t0_smem_bytes(p)} B of shared memory, over the 227 KiB a block may have"
    # 8 FP32 accumulators per 16x16 fragment, 8 registers of A and B fragments, ~40 for the rest.
    frags = (p["WM"] // 16) * (p["WN"] // 16)
    estimate = 8 * frags + 4 * (p["WM"] // 16 + p["WN"] // 16) + 40
    return check_regs(estimate, 32 * _warps(p))


def _t1_constraints(p: Params, s: Shape | None) -> str | None:
    if reason := _common_reason(p, 16, 16):
        return reason
    if p["BK"] % 64:
        return f"BK={p['BK']}: the swizzle works on 128-byte rows, so BK must be a multiple of 64"
    smem = t1_smem_bytes(p)
    if smem > SMEM_BLOCK_OPTIN_MAX:
        return f"{p['STAGES']} stages need {smem} B of shared memory, over the 227 KiB a block may have"
    if p["MINB"] * (smem + SMEM_PER_BLOCK_RESERVED) > SMEM_SM_MAX:
        return f"MINB={p['MINB']} blocks of {smem} B shared memory do not fit in one SM"
    # 4 FP32 accumulators per m16n8 tile; A fragments (4 regs per m16) and B fragments (2 per n8)
    # for one k16 step, double-buffered; ~40 for addresses, loop and copies.
    mi, ni = p["WM"] // 16, p["WN"] // 8
    estimate = 4 * mi * ni + 2 * (4 * mi + 2 * ni) + 40
    return check_regs(estimate, 32 * _warps(p), p["MINB"])


class GemmBf16(GemmProblem):
    name = "gemm_bf16"
    title = "BF16 matrix multiply C = A*B^T on tensor cores (A M x K, Bt N x K, BF16; C FP32)"
    entry = "gemm_bf16"
    baseline = "t0"
    compute_ceiling = "tensor_bf16"  # gpulab.ceilings: the measured tensor rate (wgmma on Hopper), not the FP32 FMAs
    default_shapes = ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
                      (4000, 4000, 4000), (4097, 4097, 4097), (1000, 3000, 777))
    test_shapes = ((1, 1, 1), (17, 33, 65), (1000, 1531, 777), (256, 256, 4104), (4096, 4096, 4096),
                   (4097, 4097, 4097), (7, 31, 1000))  # the last: a decode batch, what d0 takes (M <= 16)
    # What `gpulab fidelity` measures beside the first default shape: ragged M and N with K % 8 == 0
    # (the 16-byte copies), then everything odd (the per-element copies).
    ragged_shapes = ((300, 388, 200), (131, 67, 37))
    tune_shapes = ((2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4097, 4097, 4097))
    # The layouts (this module's docstring) and BF16 held as its bits in uint16 (bf16.py).
    b_name, b_transposed, operand_bytes = "Bt", True, 2
    encode = staticmethod(to_bf16_bits)

    variants = (
        Variant(
            name="t0",
            file="t0_wmma.cu",
            summary="WMMA 16x16x16 BF16 fragments from padded shared-memory tiles",
            min_sm=80, min_sm_for="BF16 wmma",
            launch=_t0_launch,
            access=t0_access,
            k_step_param="BK",  # no copy overlaps the math: a barrier on every tile
            params=(
                Param("BM", (32, 64, 128), 64, "block tile rows (of C and A)"),
                Param("BN", (32, 64, 128), 64, "block tile columns (of C and Bt's rows)"),
                Param("BK", (16, 32, 64), 32, "k depth of one shared-memory tile"),
                Param("WM", (16, 32), 32, "warp tile rows: WM/16 fragments"),
                Param("WN", (16, 32), 32, "warp tile columns: WN/16 fragments"),
            ),
            constraints=_t0_constraints,
        ),
        Variant(
            name="t1",
            file="t1_mma_ldmatrix.cu",
            summary="mma.sync m16n8k16 fed by ldmatrix from XOR-swizzled tiles, cp.async ring",
            min_sm=80, min_sm_for="BF16 mma.sync, ldmatrix, cp.async",
            launch=_t1_launch,
            access=t1_access,
            params=(
                Param("BM", (64, 128, 256), 128, "block tile rows (of C and A)"),
                Param("BN", (64, 128, 256), 128, "block tile columns (of C and Bt's rows)"),
                Param("BK", (64, 128), 64, "k depth of one ring slot (a 128-byte swizzle row per 64)"),
                Param("WM", (32, 64), 64, "warp tile rows: WM/16 m16 tiles"),
                Param("WN", (32, 64), 32, "warp tile columns: WN/8 n8 tiles"),
                Param("STAGES", (2, 3, 4), 3, "slots in the cp.async ring"),
                Param("MINB", (1, 2), 1, "blocks per SM the registers are sized for"),
                Param("GROUP_M", (1, 8), 8, "block-rows per rasterization group (1: row order)"),
            ),
            constraints=_t1_constraints,
        ),
        T2,  # the Hopper rungs (wgmma, TMA, sm_90a) and their tensor-map arguments: tma_rungs.py
        T3,
        T4,
        D0,  # for few output tiles (not rungs of the ladder): decode batches of M <= 16, decode.py;
        KC,  # split-K across a cluster, cluster_split_k.py
        KS,  # stream-K with the tokens on the wgmma's N side, swap_stream_k.py
    )

    @staticmethod
    def values(stored, xp):
        return from_bf16_bits(stored, xp).astype(xp.float64)

    def tolerance(self, k: int) -> float:
        return bf16_tolerance(k)

    def staged_bytes(self, shape: Shape) -> int:
        m, n, k = shape.values
        return 2 * (m + n) * padded_k(k) if needs_staging(k) else 0  # the TMA rungs' padded copies (staging.py)

    def vendor_baselines(self) -> dict:
        return {"cublas": cublas_bf16}


def cublas_bf16(inputs: dict, out, shape: Shape) -> None:
    """cuBLAS BF16 GEMM with FP32 compute (CUBLAS_COMPUTE_32F) and FP32 output, on the same layouts
    as the variants: cublasGemmEx through CuPy's binding, on CuPy's handle and current stream.

    cuBLAS is column-major: the row-major M x N C is its N x M matrix C^T = Bt * A^T, where the
    row-major N x K Bt is its K x N matrix (so op T, lda K) and the row-major M x K A is its K x M
    matrix A^T (op N, ldb K): the "TN" GEMM with m=N, n=M, k=K."""
    cupy = seam.cupy()
    cublas = seam.gpu_module("cupy_backends.cuda.libs.cublas")
    m, n, k = shape.values
    handle = cupy.cuda.device.get_cublas_handle()
    alpha, beta = np.ones(1, np.float32), np.zeros(1, np.float32)  # host scalars: pointer mode host
    previous = cublas.getPointerMode(handle)
    cublas.setPointerMode(handle, CUBLAS_POINTER_MODE_HOST)
    try:
        cublas.gemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k,
                      alpha.ctypes.data, inputs["Bt"].data.ptr, CUDA_R_16BF, k,
                      inputs["A"].data.ptr, CUDA_R_16BF, k,
                      beta.ctypes.data, out.data.ptr, CUDA_R_32F, n,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
    finally:
        cublas.setPointerMode(handle, previous)


EXPERIMENT = GemmBf16()
