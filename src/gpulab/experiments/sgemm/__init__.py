"""SGEMM: C = A * B in float32, row-major, A is M x K, B is K x N, any M, N, K >= 1.

The napkin math: 2*M*N*K flops; the compulsory DRAM traffic is A and B read once and C written
once, 4*(M*K + K*N + M*N) bytes. At 4096^3 that is 137 GFLOP against 201 MB: 683 flop per byte,
far to the compute side of any card's ridge point, so the FMA rate and cuBLAS are the ceilings.
"""

from __future__ import annotations

import numpy as np

from gpulab.check import compare_exact, compare_float
from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Launch, Param, Params, Shape, Variant

# Above this many multiply-adds the float64 reference is computed on the GPU (cuBLAS DGEMM):
# a 2-core CPU would take seconds per check at 4096^3.
CPU_REFERENCE_MAX_MACS = 1 << 28


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _v0_launch(p: Params, s: Shape) -> Launch:
    b = p["BLOCK"]
    return Launch(grid=(_cdiv(s["N"], b), _cdiv(s["M"], b), 1), block=(b, b, 1))


def _v1_launch(p: Params, s: Shape) -> Launch:
    t = p["TILE"]
    return Launch(grid=(_cdiv(s["N"], t), _cdiv(s["M"], t), 1), block=(t, t, 1))


class Sgemm(Experiment):
    name = "sgemm"
    title = "FP32 matrix multiply C = A*B (row-major)"
    dims = ("M", "N", "K")
    entry = "sgemm"
    baseline = "v0"
    bound = "compute"
    default_shapes = ((512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096))
    test_shapes = ((1, 1, 1), (17, 33, 65), (1000, 1531, 777), (4096, 4096, 4096))
    # Grids are computed in int32 on the device; 2^20 keeps every index product inside size_t math.
    max_dim = 1 << 20

    variants = (
        Variant(
            name="v0",
            file="v0_naive.cu",
            summary="naive: one thread per element of C",
            launch=_v0_launch,
            params=(Param("BLOCK", (16, 32), 16, "block side; the block is BLOCK x BLOCK threads"),),
        ),
        Variant(
            name="v1",
            file="v1_smem_tiling.cu",
            summary="shared-memory tiling: TILE x TILE tiles of A and B staged in shared memory",
            launch=_v1_launch,
            params=(Param("TILE", (8, 16, 32), 32, "tile side; the block is TILE x TILE threads"),),
            sweep={"TILE": (8, 16, 32)},
        ),
    )

    def flops(self, shape: Shape) -> float:
        return 2.0 * shape["M"] * shape["N"] * shape["K"]

    def bytes_moved(self, shape: Shape) -> int:
        m, n, k = shape.values
        return 4 * (m * k + k * n + m * n)

    def device_bytes(self, shape: Shape) -> int:
        m, n, k = shape.values
        total = 4 * (m * k + k * n + m * n)
        if m * n * k > CPU_REFERENCE_MAX_MACS:
            total += 8 * (m * k + k * n + m * n)  # the float64 copies for the GPU reference
        return total

    def make_inputs(self, shape: Shape, rng: np.random.Generator, exact: bool) -> dict:
        m, n, k = shape.values
        if exact:
            # Small integers: |a*b| <= 6, so every partial sum stays an exact float32 integer while
            # K <= 2^24 / 6. Periods 7 and 5 divide no tile size, so a transposed or shifted index
            # reads a different value instead of the same one back.
            if k > (1 << 24) // 6:
                raise GpulabError(f"--exact needs K <= {(1 << 24) // 6} so that sums stay exact")
            a = (rng.integers(-3, 4, size=(m, k))).astype(np.float32)
            b = (rng.integers(-2, 3, size=(k, n))).astype(np.float32)
        else:
            a = rng.uniform(-1.0, 1.0, size=(m, k)).astype(np.float32)
            b = rng.uniform(-1.0, 1.0, size=(k, n)).astype(np.float32)
        return {"A": a, "B": b}

    def output(self, shape: Shape, xp):
        return xp.full((shape["M"], shape["N"]), xp.nan, dtype=xp.float32)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        m, n, k = shape.values
        return (np.int32(m), np.int32(n), np.int32(k), inputs["A"], inputs["B"], out)

    def reference(self, inputs: dict, shape: Shape, xp):
        """float64 A*B, on the CPU for small shapes, else on the GPU; returned in `xp`."""
        m, n, k = shape.values
        if m * n * k <= CPU_REFERENCE_MAX_MACS:
            a = _to_host(inputs["A"]).astype(np.float64)
            b = _to_host(inputs["B"]).astype(np.float64)
            ref = a @ b
            return xp.asarray(ref)
        return inputs["A"].astype(xp.float64) @ inputs["B"].astype(xp.float64)

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        ref = self.reference(inputs, shape, xp)
        return compare_exact(out, ref, xp) if exact else compare_float(out, ref, xp)

    def vendor_baselines(self) -> dict:
        return {"cublas": _cublas_sgemm}


def _to_host(array) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)


def _cublas_sgemm(inputs: dict, out, shape: Shape) -> None:
    """cuBLAS FP32 through CuPy, TF32 off: CuPy uses TF32 only when CUPY_TF32=1 is set (the lab
    refuses to run with it set), so this is the honest FP32 baseline."""
    import cupy

    cupy.matmul(inputs["A"], inputs["B"], out=out)


EXPERIMENT = Sgemm()
