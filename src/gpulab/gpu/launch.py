"""Load a cubin and launch its kernel with CuPy, checking for errors after every launch.

CuPy launches through the driver API (cuLaunchKernel), whose return code it checks and raises on:
a bad grid, block or shared-memory size is reported at the launch itself. A fault inside the kernel
(an illegal address) surfaces at the next synchronization, which every check does right after its
launch and every timed repetition does through its stop event.

A launch may be programmatic (`programmatic=True`, programmatic dependent launch, sm_90 and newer):
the kernel may then start while the kernel before it in the stream is still finishing, and must
itself wait for that one (griddepcontrol.wait, hopper.cuh's wait_for_prior_grid) before it reads
what that one wrote. CuPy's launch cannot carry that attribute, so such a launch goes through the
driver's cuLaunchKernelEx (cuda-bindings) with the arguments marshalled as CuPy would."""

from __future__ import annotations

import contextlib
import ctypes
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

    def set_max_dynamic_smem(self, smem_dynamic_bytes: int) -> None:
        """Opt the kernel in to `smem_dynamic_bytes` of dynamic shared memory, where over the default."""
        if smem_dynamic_bytes > DEFAULT_DYNAMIC_SMEM_LIMIT and smem_dynamic_bytes > self._optin_smem:
            self._function.max_dynamic_shared_size_bytes = smem_dynamic_bytes
            self._optin_smem = smem_dynamic_bytes

    def function_handle(self):
        """The driver's CUfunction of the kernel (cuda-bindings), for the driver calls CuPy does not wrap."""
        from cuda.bindings import driver  # as in _launch_programmatic

        return driver.CUfunction(self._function.kernel.ptr)

    def __call__(self, grid, block, args, smem_dynamic_bytes: int = 0, programmatic: bool = False) -> None:
        self.set_max_dynamic_smem(smem_dynamic_bytes)
        try:
            if programmatic:
                self._launch_programmatic(tuple(grid), tuple(block), args, smem_dynamic_bytes)
            else:
                self._function(tuple(grid), tuple(block), args, shared_mem=smem_dynamic_bytes)
        except Exception as exc:  # the driver rejected the configuration
            raise GpulabError(
                f"launch of {self.compiled.cubin_path.name} failed (grid {grid}, block {block}, "
                f"{smem_dynamic_bytes} B dynamic smem): {exc}"
            ) from None

    def _launch_programmatic(self, grid, block, args, smem_dynamic_bytes: int) -> None:
        """cuLaunchKernelEx with programmatic stream serialization allowed, on CuPy's current stream."""
        # Imported here, as in gpulab.gpu.tma: ~90 ms that every command importing the registry would pay.
        from cuda.bindings import driver

        attribute = driver.CUlaunchAttribute()
        attribute.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        attribute.value.programmaticStreamSerializationAllowed = 1
        config = driver.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = grid
        config.blockDimX, config.blockDimY, config.blockDimZ = block
        config.sharedMemBytes = smem_dynamic_bytes
        config.hStream = driver.CUstream(cupy().cuda.get_current_stream().ptr)
        config.attrs = [attribute]
        config.numAttrs = 1
        values = [ctypes.create_string_buffer(argument_bytes(a)) for a in args]  # alive until the call returns
        pointers = (ctypes.c_void_p * max(len(values), 1))(*(ctypes.addressof(v) for v in values))
        (err,) = driver.cuLaunchKernelEx(config, self.function_handle(), ctypes.addressof(pointers), 0)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise GpulabError(f"cuLaunchKernelEx returned {err.name}")


def argument_bytes(arg) -> bytes:
    """One kernel argument's bytes as the kernel's parameter holds them, for the kinds gpulab passes:
    a device array (its address), a numpy scalar (np.int32, np.float32...), or a by_value blob."""
    if hasattr(arg, "data") and hasattr(arg.data, "ptr"):  # a CuPy array
        return int(arg.data.ptr).to_bytes(8, "little")
    if isinstance(arg, (np.generic, np.ndarray)):
        return np.asarray(arg).tobytes()
    raise GpulabError(f"cannot pass {type(arg).__name__} to a programmatic launch: use a numpy scalar or a device array")


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


def out_of_memory() -> type[Exception]:
    """The exception CuPy raises when an allocation does not fit in the device's memory."""
    return cupy().cuda.memory.OutOfMemoryError


@functools.cache
def load(compiled: Compiled) -> LoadedKernel:
    return LoadedKernel(compiled)
