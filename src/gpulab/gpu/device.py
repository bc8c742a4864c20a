"""Is there a usable NVIDIA GPU, and what is it? CuPy comes through gpulab.gpu.seam, so a machine
without a GPU or a driver can import gpulab and answer 'no' with a reason instead of a traceback."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import re

from gpulab.errors import GpulabError, NoGpuError
from gpulab.gpu.seam import cupy, gpu_module

def no_gpu_hint() -> str:
    """What to do without a usable GPU: install CuPy where it is missing; where it is there (the
    user has just run pip install 'gpulab[gpu]'), the card or its driver is what is missing."""
    if importlib.util.find_spec("cupy") is None:
        return ("timings, checks and counters need an NVIDIA GPU with its driver and CuPy "
                "(pip install 'gpulab[gpu]'); compile-only commands work without one")
    return ("timings, checks and counters need an NVIDIA GPU and its driver (CuPy is installed: nvidia-smi "
            "should list the card); compile-only commands work without one")


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    l2_bytes: int
    smem_per_block_optin_bytes: int
    smem_per_sm_bytes: int
    regs_per_sm: int
    max_threads_per_sm: int
    total_memory_bytes: int
    sm_clock_khz: int
    memory_clock_khz: int
    driver_version: str
    cuda_runtime_version: str

    @property
    def arch(self) -> str:
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    @property
    def slug(self) -> str:
        return gpu_slug(self.name)


def gpu_slug(name: str) -> str:
    """'NVIDIA H200' -> 'h200'; 'NVIDIA GeForce RTX 4090' -> 'geforce-rtx-4090': a folder name."""
    s = re.sub(r"^nvidia\s+", "", name.strip(), flags=re.I).lower()
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-") or "gpu"


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


@functools.cache
def probe() -> tuple[DeviceInfo | None, str]:
    """(info, '') when a GPU is usable, else (None, the reason)."""
    if os.environ.get("GPULAB_NO_GPU"):
        return None, "GPULAB_NO_GPU is set"
    try:
        cp = cupy()
        runtime = cp.cuda.runtime
    except Exception as exc:  # ImportError, or CuPy failing to find its CUDA libraries
        return None, f"CuPy is not importable ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"
    try:
        if runtime.getDeviceCount() < 1:
            return None, "the driver reports no CUDA device"
        props = runtime.getDeviceProperties(0)
        attr = cp.cuda.Device(0).attributes
        info = DeviceInfo(
            name=props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
            compute_capability=(int(props["major"]), int(props["minor"])),
            sm_count=int(props["multiProcessorCount"]),
            l2_bytes=int(props["l2CacheSize"]),
            smem_per_block_optin_bytes=int(attr.get("MaxSharedMemoryPerBlockOptin", props["sharedMemPerBlock"])),
            smem_per_sm_bytes=int(props["sharedMemPerMultiprocessor"]),
            regs_per_sm=int(props["regsPerMultiprocessor"]),
            max_threads_per_sm=int(props["maxThreadsPerMultiProcessor"]),
            total_memory_bytes=int(props["totalGlobalMem"]),
            sm_clock_khz=int(attr.get("ClockRate", props.get("clockRate", 0)) or 0),
            memory_clock_khz=int(attr.get("MemoryClockRate", props.get("memoryClockRate", 0)) or 0),
            driver_version=_version(runtime.driverGetVersion()),
            cuda_runtime_version=_version(runtime.runtimeGetVersion()),
        )
    except Exception as exc:  # no driver, no device node, a broken install
        text = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        if "InsufficientDriver" in text or "NoDevice" in text:
            # What CuPy's runtime says when there is no NVIDIA driver at all, as on a CPU-only machine.
            return None, f"no NVIDIA driver or GPU was found ({text})"
        return None, f"no usable CUDA device ({type(exc).__name__}: {text})"
    return info, ""


# Persistent grids (gemm_bf16 t4, sgemm v12) are sized by the SM count; without a GPU to ask
# (compile-only, predictions, CPU tests) they are sized for an H100/H200.
SM_COUNT_WITHOUT_GPU = 132


def sm_count() -> int:
    """This card's SM count, or SM_COUNT_WITHOUT_GPU when there is no GPU to ask."""
    info, _ = probe()
    return info.sm_count if info is not None else SM_COUNT_WITHOUT_GPU


# The L2 an access model holds re-reads to where there is no GPU to ask: the H200's, whose runs
# gpulab's records are (60 MiB; an H100's is 50).
L2_BYTES_WITHOUT_GPU = 60 * 2**20


def l2_bytes(without_gpu: int | None = L2_BYTES_WITHOUT_GPU) -> int | None:
    """This card's L2 size in bytes, or `without_gpu` when there is no GPU to ask (an access model
    takes the H200's; a record's L2 label, None: compile-only records carry none)."""
    info, _ = probe()
    return info.l2_bytes if info is not None else without_gpu


def gpu_index() -> str:
    """Which of the machine's GPUs this process uses: what CUDA_VISIBLE_DEVICES pinned it to (an
    index or a UUID, as given), else CuPy's current device number."""
    pinned = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    if pinned:
        return pinned
    return str(cupy().cuda.Device().id)


def visible_gpus() -> list[str]:
    """This machine's GPUs, as CUDA_VISIBLE_DEVICES names them (or by number): one sweep worker each."""
    pinned = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    if pinned or "CUDA_VISIBLE_DEVICES" in os.environ:
        return pinned
    info, _ = probe()
    if info is None:
        return []
    return [str(i) for i in range(cupy().cuda.runtime.getDeviceCount())]


def require_gpu() -> DeviceInfo:
    info, reason = probe()
    if info is None:
        raise NoGpuError(f"no NVIDIA GPU: {reason}; {no_gpu_hint()}")
    if os.environ.get("CUPY_TF32", "0") not in ("", "0"):
        raise GpulabError("CUPY_TF32 is set: the cuBLAS FP32 baseline would use TF32. Unset it and rerun")
    return info


def nvidia_driver_string() -> str:
    """The driver's own version string (e.g. 580.159.04) from NVML when available."""
    try:
        pynvml = gpu_module("pynvml")  # nvidia-ml-py
        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else str(v)
    except Exception:
        info, _ = probe()
        return info.driver_version if info else ""


def free_memory_bytes() -> int:
    free, _total = cupy().cuda.runtime.memGetInfo()
    return int(free)
