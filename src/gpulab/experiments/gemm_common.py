"""What the GEMM experiments (sgemm, gemm_bf16) share: the card limits their constraints check
against, the register check, and where the float64 reference runs. One place, below both, so each
may use the other's kernels (sgemm's v14 runs gemm_bf16's t4) without importing back and forth."""

from __future__ import annotations

import numpy as np

from gpulab.gpu.occupancy import SM_LIMITS

# Above this many multiply-adds the float64 reference is computed on the GPU (cuBLAS DGEMM):
# a 2-core CPU would take seconds per check at 4096^3.
CPU_REFERENCE_MAX_MACS = 1 << 28

# The sm_90 (H200) limits the constraints check against, from the one table of card limits: an SM
# holds 228 KiB of shared memory (a block may opt in to all of it but the 1 KiB the driver reserves
# per block) and 64K registers. Static shared arrays stop at 48 KiB and a thread at 255 registers on
# every architecture CUDA supports.
SM90 = SM_LIMITS["sm_90"]
SMEM_STATIC_MAX = 48 * 1024
SMEM_SM_MAX = SM90.smem_bytes
SMEM_PER_BLOCK_RESERVED = SM90.smem_reserved_per_block
SMEM_BLOCK_OPTIN_MAX = SMEM_SM_MAX - SMEM_PER_BLOCK_RESERVED
REGS_PER_SM = SM90.regs
REGS_PER_THREAD_MAX = 255


def reg_cap(threads: int, min_blocks: int = 1) -> int:
    """Registers per thread the compiler may use when __launch_bounds__(threads, min_blocks)."""
    per_thread = REGS_PER_SM // (threads * min_blocks)
    return min(REGS_PER_THREAD_MAX, per_thread // 8 * 8)


def check_regs(estimate: int, threads: int, min_blocks: int = 1) -> str | None:
    """Why a kernel estimated at `estimate` registers per thread would spill at this launch bound, or None."""
    cap = reg_cap(threads, min_blocks)
    if estimate > cap:
        return (
            f"about {estimate} registers per thread needed, but {threads} threads x {min_blocks} "
            f"block(s) per SM leave {cap}: the compiler would spill"
        )
    return None


def to_host(array) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)
