"""What the GEMM experiments (sgemm, gemm_bf16) share: the problem itself (GemmProblem: shapes
M x N x K, inputs, the float64 reference and the check, flops and bytes, the cuBLAS row), the card
limits their constraints check against and the register check. One place, below both, so each may
use the other's kernels (sgemm's v14 runs gemm_bf16's t4) without importing back and forth."""

from __future__ import annotations

import numpy as np

from gpulab.check import FP32_TOLERANCE, compare_exact, compare_float
from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Params, Shape
from gpulab.gpu.device import l2_bytes
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


# --exact's inputs are small integers, |a*b| <= 6, so every partial sum stays an exact FP32 integer
# (in any order, with truncating adders too) while K is at most this.
EXACT_MAX_K = (1 << 24) // 6


class GemmProblem(Experiment):
    """C = A * op(B) with C M x N FP32, row-major: what every GEMM experiment is alike in. A subclass
    says what differs: `b_name` and `b_transposed` (B given K x N as "B", or N x K as "Bt", K
    contiguous in both), `encode` (float32 values to the operands' stored form) and `values` (the
    stored form back to float64, in the array module `xp`), `operand_bytes`, `tolerance(K)`, the
    bytes its variants stage beside the problem (`staged_bytes`), and its vendor_baselines (the
    cuBLAS call for its types and layouts)."""

    dims = ("M", "N", "K")
    bound = "compute"
    headline_shape = (4096, 4096, 4096)
    # Grids are computed in int32 on the device; 2^20 keeps every index product inside size_t math,
    # and K below EXACT_MAX_K.
    max_dim = 1 << 20
    b_name = "B"
    b_transposed = False
    operand_bytes = 4

    @staticmethod
    def encode(values, xp=np):
        return values

    @staticmethod
    def values(stored, xp):
        return stored.astype(xp.float64)

    def tolerance(self, k: int) -> float:
        return FP32_TOLERANCE

    def staged_bytes(self, shape: Shape) -> int:
        return 0

    def flops(self, shape: Shape) -> float:
        return 2.0 * shape["M"] * shape["N"] * shape["K"]

    def bytes_moved(self, shape: Shape) -> int:
        m, n, k = shape.values
        return self.operand_bytes * (m * k + k * n) + 4 * m * n

    def device_bytes(self, shape: Shape) -> int:
        m, n, k = shape.values
        total = self.bytes_moved(shape) + self.staged_bytes(shape)
        if m * n * k > CPU_REFERENCE_MAX_MACS:
            total += 8 * (m * k + k * n + m * n)  # the float64 copies for the GPU reference
        return total

    def make_inputs(self, shape: Shape, rng: np.random.Generator, exact: bool) -> dict:
        return self._draw(shape, exact, rng.integers, rng.uniform, np)

    def make_device_inputs(self, shape: Shape, seed: int, exact: bool, xp) -> dict:
        """The same kinds of values as make_inputs, drawn on the device from `seed`: at the shapes of
        a model's layers (57344 x 8192 weights, 940 MB in BF16) the host took seconds per draw, and
        a run draws twice (check, then timing)."""
        rng = xp.random.RandomState(seed)
        return self._draw(shape, exact, rng.randint, rng.uniform, xp)

    def _draw(self, shape: Shape, exact: bool, integers, uniform, xp) -> dict:
        """A and B (or Bt) from `integers(low, high, size)` (high excluded) and `uniform(low, high,
        size)`, on the host (numpy) or the device (`xp`), encoded as the experiment stores them."""
        m, n, k = shape.values
        b_size = (n, k) if self.b_transposed else (k, n)
        if exact:
            # Small integers (exact in BF16 too: 8-bit significand): |a*b| <= 6, see EXACT_MAX_K.
            # Periods 7 and 5 divide no tile size, so a transposed or shifted index reads a
            # different value instead of the same one back.
            if k > EXACT_MAX_K:
                raise GpulabError(f"exact needs K <= {EXACT_MAX_K} so that sums stay exact; "
                                  "check a larger K without exact")
            a = integers(-3, 4, size=(m, k)).astype(xp.float32)
            b = integers(-2, 3, size=b_size).astype(xp.float32)
        else:
            a = uniform(-1.0, 1.0, size=(m, k)).astype(xp.float32)
            b = uniform(-1.0, 1.0, size=b_size).astype(xp.float32)
        return {"A": self.encode(a, xp), self.b_name: self.encode(b, xp)}

    def output(self, shape: Shape, xp):
        return xp.full((shape["M"], shape["N"]), xp.nan, dtype=xp.float32)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        m, n, k = shape.values
        return (np.int32(m), np.int32(n), np.int32(k), inputs["A"], inputs[self.b_name], out)

    def reference(self, inputs: dict, shape: Shape, xp):
        """The float64 product of the operands' values, on the CPU for small shapes, else on the GPU
        (cuBLAS DGEMM); returned in `xp`."""
        m, n, k = shape.values
        if m * n * k <= CPU_REFERENCE_MAX_MACS:
            a, b = (self.values(to_host(inputs[name]), np) for name in ("A", self.b_name))
            return xp.asarray(a @ (b.T if self.b_transposed else b))
        a, b = (self.values(inputs[name], xp) for name in ("A", self.b_name))
        return a @ (b.T if self.b_transposed else b)

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        ref = self.reference(inputs, shape, xp)
        return compare_exact(out, ref, xp) if exact else compare_float(out, ref, xp, self.tolerance(shape["K"]))


def passes_past_l2(passes: int, operand_bytes: int, l2: int | None = None) -> int:
    """The DRAM bytes an operand costs beyond its first read where a launch reads all of it once per
    pass of its slowest index (a GEMV's weights once per block row of A, as sgemm's gv does), so that
    between two reads of one byte the card reads all the rest: where the operand is more than the L2
    (`l2` bytes, default this card's) holds, every pass after the first comes from DRAM. On the H200
    gv at 4x16384x8192 in one-row blocks (four passes over 537 MB) ran 463.3 us, four times one pass
    at the copy ceiling (2026-12-05), and gemm_bf16's d0, which reads Bt the same way, at
    64x8192x8192 (four passes over 134 MB) 148.1. Where the operand fits, Nsight Compute measured
    gv's 512 passes over 1 MB at 512^3 as the inputs once from DRAM (results/h200/fidelity.csv).
    d0 does not count them yet: its runs at large squares, whose Bt fits the L2 or not, lend each
    other their efficiency, and counted, its 223 timed H200 rows were modelled a little worse
    (docs/notes/sgemm-notes.md, "gv's passes over B that the L2 cannot hold")."""
    l2 = l2_bytes() if l2 is None else l2
    return (passes - 1) * operand_bytes if passes > 1 and operand_bytes > l2 else 0
