"""SGEMM: C = A * B in float32, row-major, A is M x K, B is K x N, any M, N, K >= 1.

The napkin math: 2*M*N*K flops; the compulsory DRAM traffic is A and B read once and C written
once, 4*(M*K + K*N + M*N) bytes. At 4096^3 that is 137 GFLOP against 201 MB: 683 flop per byte,
far to the compute side of any card's ridge point, so the FMA rate and cuBLAS are the ceilings.

This module is the problem (gpulab.experiments.gemm_common.GemmProblem with FP32 operands) and the
list of its variants; each family of kernels declares its own, with its launch geometry,
constraints and access models:
  ladder/     v0-v11, one idea a rung, and the tile params they share
  splitk/     kernels that split K: v12 (stream-K), v13 (split tail), sk (sliced K), sx (split-K)
  skinny/     the GEMV-class gv and gt, and the skinny-shape policy of the best row
  tf32x3/     v14, FP32 on the tensor cores as three TF32 products (gemm_bf16's t4)
The .cu files all lie here, beside this module.
"""

from __future__ import annotations

from gpulab.experiments.base import Params, Shape
from gpulab.experiments.gemm_common import GemmProblem
from gpulab.experiments.sgemm import ladder, skinny, splitk, tf32x3
from gpulab.experiments.sgemm.skinny.policy import SKINNY_SHAPES, best_default
from gpulab.experiments.sgemm.tf32x3.tf32_split import PARTS, padded_k
from gpulab.gpu.seam import cupy


class Sgemm(GemmProblem):
    name = "sgemm"
    title = "FP32 matrix multiply C = A*B (row-major)"
    entry = "sgemm"
    baseline = "v0"
    # The Shared Memory Tiling wiki page's sweep (512..4096, docs/SOURCES.md), the large size, the
    # ragged shapes the ladder must also be fast on, and the skinny classes whose few output tiles
    # cannot fill the card with the ladder's tiles: tall (N = 64), wide (M = 64), and a 1 x N x K
    # product (GEMV-like, bound by reading B: 256 MB, ~60 us at the copy ceiling).
    default_shapes = ((512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
                      (8192, 8192, 8192), (4000, 4000, 4000), (1000, 3000, 777), (4097, 4097, 4097),
                      *SKINNY_SHAPES)
    test_shapes = ((1, 1, 1), (17, 33, 65), (1000, 1531, 777), (4096, 4096, 4096), (4097, 4097, 4097),
                   (1, 1531, 777), (1531, 3, 1029))
    # Small, mid and large, aligned and ragged: the tune keeps the fastest config of each (bench
    # then uses the one tuned at the nearest size), and an overall best by geometric mean.
    tune_shapes = ((1024, 1024, 1024), (1000, 3000, 777), (2048, 2048, 2048), (4096, 4096, 4096),
                   (4097, 4097, 4097), (8192, 8192, 8192))
    readme_variants = ("v0", "v1", "cublas")  # the wiki page's V0-vs-V1 table; the ladder has its own

    # The ladder's order: its rungs, the schedules on v11's loop, v14; then the kernels made for
    # one shape class.
    variants = (*ladder.VARIANTS, splitk.V12, splitk.V13, tf32x3.V14, splitk.SK, skinny.GV, skinny.GT, splitk.SX)

    def best_default(self, shape: Shape) -> tuple[str, Params, str] | None:
        return best_default(self, shape)

    def staged_bytes(self, shape: Shape) -> int:
        m, n, k = shape.values
        return 4 * PARTS * (m + n) * padded_k(k)  # v14's split copies of A and B (tf32x3/tf32_split.py)

    def vendor_baselines(self) -> dict:
        return {"cublas": _cublas_sgemm}


def _cublas_sgemm(inputs: dict, out, shape: Shape) -> None:
    """cuBLAS FP32 through CuPy, TF32 off: CuPy uses TF32 only when CUPY_TF32=1 is set (the lab
    refuses to run with it set), so this is the honest FP32 baseline."""
    cupy().matmul(inputs["A"], inputs["B"], out=out)


EXPERIMENT = Sgemm()
