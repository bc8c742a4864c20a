"""The GPU seam: which module names it lets through (no GPU needed: only the name check runs)."""

import pytest

from gpulab.experiments import get_experiment
from gpulab.gpu import seam


def test_the_seam_refuses_a_package_that_is_not_gpu_only():
    with pytest.raises(ValueError, match="not a GPU-only package"):
        seam.gpu_module("numpy")


def test_every_gpu_module_the_code_asks_for_passes_the_name_check():
    # The cuBLAS BF16 baseline goes through CuPy's cublas binding in cupy_backends: the seam must
    # not refuse it (it did once, and every bench on an sm_80+ card failed measuring the ceilings).
    get_experiment("gemm_bf16")  # the module that asks for it imports
    for name in ("cupy", "cupy._core._routines_linalg", "cupy_backends.cuda.libs.cublas", "pynvml"):
        assert name.split(".")[0] in seam.GPU_PACKAGES
