"""Timing with CUDA events: one event pair per repetition, warm-up by time, the L2 flushed outside
each timed window (unless warm-L2 is asked for), the window opened behind a short spin kernel so it
holds no host dispatch time, and median/min/max over the repetitions."""

from __future__ import annotations

import dataclasses
import functools
import statistics
from typing import Callable

import numpy as np

from gpulab.errors import DeviceFault
from gpulab.gpu.launch import cuda_errors
from gpulab.gpu.seam import cupy


@dataclasses.dataclass(frozen=True)
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    reps: int
    l2_flushed: bool

    def as_record(self) -> dict:
        return {
            "time_ms": self.median_ms,
            "time_min_ms": self.min_ms,
            "time_max_ms": self.max_ms,
            "reps": self.reps,
            "l2_flushed": self.l2_flushed,
        }


@dataclasses.dataclass(frozen=True)
class TimingPolicy:
    warmup_ms: float = 30.0  # keep launching until this much device time has passed
    target_ms: float = 250.0  # total timed device time to aim for
    min_reps: int = 5
    max_reps: int = 200
    flush_l2: bool = True


class L2Flusher:
    """Reads a buffer twice the L2's size, so the next kernel starts with none of its data in L2.

    Reading, not writing: a flush by writes leaves the L2 full of dirty lines, and the timed kernel
    would then pay to write that buffer back to DRAM as it evicts it (up to 60 MB on an H200, a
    third of the traffic of a 166 MB problem). Reads evict the previous run's dirty output during
    the flush, outside the timed window, and leave only clean lines behind.
    """

    def __init__(self, l2_bytes: int):
        cp = cupy()
        words = max(2 * l2_bytes, 1 << 20) // 8
        self._buf = cp.ones(words, dtype=cp.uint64)  # written once here, only read afterwards
        self._sink = cp.zeros((), dtype=cp.uint64)

    def __call__(self) -> None:
        cupy().sum(self._buf, out=self._sink)  # a full read pass; the sum keeps it from being elided


# Held long enough for the host to queue the start event and the work behind it: a cuBLAS call
# through CuPy takes tens of microseconds of Python before its kernel is queued.
HOLD_US = 200.0
HOLD_SOURCE = r"""
extern "C" __global__ void gpulab_hold(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
"""


@functools.cache
def stream_hold(us: float = HOLD_US) -> Callable[[], None]:
    """A one-thread kernel that spins for about `us` microseconds, launched right before each timed
    window. The start event and the work queue up behind it, so the window opens on a busy GPU and
    holds none of the host's time to dispatch the work. Without it, whenever the flush finished
    before the host had queued the work, the gap was timed: on the H200 (2026-12-01) cuBLAS at
    512^3 and 1024^3 read medians 1.3-1.8x their minimum after a sweep of the ladder. It touches no
    memory, so the flushed L2 stays flushed."""
    cp = cupy()
    kernel = cp.RawKernel(HOLD_SOURCE, "gpulab_hold")
    cycles = np.int64(us * cp.cuda.Device().attributes["ClockRate"] / 1e3)  # ClockRate: kHz
    return lambda: kernel((1,), (1,), (cycles,))


def time_it(fn: Callable[[], None], policy: TimingPolicy, flush: Callable[[], None] | None) -> Timing:
    """Time `fn` (one launch of the work) under `policy`; `flush` runs before each repetition."""
    cp = cupy()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    hold = stream_hold()

    def one() -> float:
        if flush is not None:
            flush()
        hold()
        start.record()
        fn()
        stop.record()
        try:
            stop.synchronize()
        except cuda_errors() as exc:  # a fault inside the kernel surfaces at this synchronization
            raise DeviceFault(f"the timed launch faulted on the device: {exc}", str(exc)) from None
        return cp.cuda.get_elapsed_time(start, stop)

    # Warm-up by time: module load, clocks ramping and caches of the instruction path settle.
    spent, warm = 0.0, 0
    while spent < policy.warmup_ms or warm < 2:
        spent += one()
        warm += 1
        if warm >= 1000:
            break
    first = one()
    reps = int(min(policy.max_reps, max(policy.min_reps, policy.target_ms / max(first, 1e-3))))
    times = [first] + [one() for _ in range(reps - 1)]
    return Timing(statistics.median(times), min(times), max(times), len(times), flush is not None)
