"""Load a cubin and launch its kernel with CuPy, checking for errors after every launch.

CuPy launches through the driver API (cuLaunchKernel), whose return code it checks and raises on:
a bad grid, block or shared-memory size is reported at the launch itself. A fault inside the kernel
(an illegal address) surfaces at the next synchronization, which every check does right after its
launch and every timed repetition does through its stop event."""

from __future__ import annotations

import contextlib
import functools

import numpy as np

from gpulab.errors import DeviceFault, GpulabError
from gpulab.gpu.compile import Compiled
from gpulab.gpu.seam import cupy

# Above this a block must opt in to dynamic shared memory (cudaFuncSetAttribute).
DEFAULT_DYNAMIC_SMEM_LIMIT = 48 * 1024


class LoadedKernel:
    def __init__(self, compiled: Compiled):
        self.compiled = compiled
        self._module = cupy().RawModule(path=str(compiled.cubin_path))
        self._function = self._module.get_function(compiled.entry)
        self._optin_smem = 0

    def __call__(self, grid, block, args, smem_dynamic_bytes: int = 0) -> None:
        if smem_dynamic_bytes > DEFAULT_DYNAMIC_SMEM_LIMIT and smem_dynamic_bytes > self._optin_smem:
            self._function.max_dynamic_shared_size_bytes = smem_dynamic_bytes
            self._optin_smem = smem_dynamic_bytes
        try:
            self._function(tuple(grid), tuple(block), args, shared_mem=smem_dynamic_bytes)
        except Exception as exc:  # cuLaunchKernel rejected the configuration
            raise GpulabError(
                f"launch of {self.compiled.cubin_path.name} failed (grid {grid}, block {block}, "
                f"{smem_dynamic_bytes} B dynamic smem): {exc}"
            ) from None


def by_value(blob: bytes) -> np.ndarray:
    """A kernel argument passed by value from raw bytes: a struct parameter such as a
    `const __grid_constant__ CUtensorMap` (gpulab.gpu.tma). CuPy passes a host numpy array of size
    one by value: the launch hands the driver a pointer to its data, and the driver copies as many
    bytes as the kernel's parameter is long, at the offset the cubin gives it (64-byte aligned for a
    CUtensorMap). So one opaque element of len(blob) bytes, not an array of bytes (which CuPy
    refuses, to catch a host array passed where a device pointer was meant)."""
    return np.frombuffer(bytes(blob), dtype=np.dtype((np.void, len(blob))))


def synchronize(what: str) -> None:
    """Wait for the device; a fault inside the kernel (illegal address...) is reported here, as a
    DeviceFault: every CUDA error at a synchronization is one, whatever its text."""
    try:
        cupy().cuda.Device().synchronize()
    except cuda_errors() as exc:
        raise DeviceFault(
            f"{what} faulted on the device: {exc}. The CUDA context is now unusable; fix the kernel "
            "(gpulab sanitize finds the bad access) and rerun", str(exc)
        ) from None


@contextlib.contextmanager
def profiler_range():
    """cudaProfilerStart ... cudaProfilerStop around the body: a profiler started with profiling off
    (ncu --profile-from-start off) captures exactly the launches inside."""
    runtime = cupy().cuda.runtime
    runtime.profilerStart()
    try:
        yield
    finally:
        runtime.profilerStop()


def cuda_errors() -> tuple[type[Exception], ...]:
    """The exception types CuPy raises for an error the CUDA runtime or driver returned."""
    cuda = cupy().cuda
    return cuda.runtime.CUDARuntimeError, cuda.driver.CUDADriverError


@functools.cache
def load(compiled: Compiled) -> LoadedKernel:
    return LoadedKernel(compiled)
