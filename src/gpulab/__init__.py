"""gpulab: a laboratory for GPU kernel performance.

Importing gpulab never touches the GPU or the CUDA driver: CuPy is imported lazily by the modules
that launch kernels, so the CPU commands (list, predict, compile-only run) work anywhere.
"""

__version__ = "0.1.0"
