"""The one seam to the GPU-only packages: CuPy (device arrays, kernels, events, the CUDA runtime and
driver, cuBLAS) and NVML (pynvml, the driver's version string).

Every other module imports its modules at the top; these alone are imported here, on first use.
Importing CuPy takes about a second and loads its CUDA libraries, so keeping it behind this seam
keeps `gpulab --help`, `gpulab list`, `gpulab predict` and every compile-only command fast, and
working on a machine with no GPU, no driver and no CuPy installed (it is the optional `[gpu]`
extra). A caller writes `cp = cupy()` where it needs the GPU, never `import cupy` at the top.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# What may come through the seam: CuPy and its submodules (cupy_backends holds its cuBLAS binding), NVML.
GPU_PACKAGES = ("cupy", "cupy_backends", "pynvml")


def cupy() -> ModuleType:
    """The cupy module (imported on the first call; an ImportError where CuPy is not installed)."""
    return gpu_module("cupy")


def gpu_module(name: str) -> ModuleType:
    """A GPU-only module by name: 'cupy', 'cupy.cuda.driver', 'cupy._core._routines_linalg', 'pynvml'."""
    if name.split(".")[0] not in GPU_PACKAGES:
        raise ValueError(f"{name} is not a GPU-only package ({', '.join(GPU_PACKAGES)}): import it at the top")
    return importlib.import_module(name)
