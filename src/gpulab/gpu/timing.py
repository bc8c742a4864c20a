"""Timing with CUDA events: one event pair per repetition, warm-up by time, the L2 flushed outside
each timed window (unless warm-L2 is asked for), the window opened behind a short spin kernel so it
holds no host dispatch time, and median/min/max over the repetitions.

How many repetitions: they come in blocks of BLOCK_REPS, each block after the first launched on
buffers placed anew (`moved`, where the caller gives one) after a short warm-up, until the row's
95% interval (gpulab.gpu.stats.row_interval: the repetitions' order statistics widened by the
spread between the blocks' medians) is within the policy's `noise` of the median, or the timed
device time reaches `target_ms`, or `max_reps` (the budget: a row that ran out of it before the
target says so in `hit_budget`). Blocks, because a kernel's time moves between whole timings more
than between the repetitions of one (where its buffers land, the state a warm-up leaves): an
interval from one block's repetitions said less about the next run than it seemed to. While the
repetitions run, gpulab.gpu.nvml.Watch samples the card's clock, power, temperature and slowdown
reasons. Before the first, the persisting-L2 carve-out is set to zero and its lines reset, so no
earlier access-policy window can keep data in L2 across the flush.

With `last` given, one more repetition follows the stopping rule with `last()` run before it,
outside its window: the caller draws fresh inputs and poisons the output there, so the output that
repetition leaves can be checked again (gpulab.run.lab): a kernel that does its work only on the
first launch, or replays a result kept from an earlier one, fails that check.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import numpy as np

from gpulab.errors import DeviceFault
from gpulab.gpu import nvml
from gpulab.gpu.launch import cuda_errors
from gpulab.gpu.seam import cupy
from gpulab.gpu.stats import BLOCK_REPS, row_noise_met, should_stop, summarize_blocks


@dataclasses.dataclass(frozen=True)
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    reps: int
    l2_flushed: bool
    ci_low_ms: float | None = None  # the median's 95% interval (None under 6 repetitions)
    ci_high_ms: float | None = None
    rel_noise: float | None = None  # how far that interval reaches from the median, as a fraction of it
    hit_budget: bool = False  # the budget ran out before the interval was within the noise target
    card: dict = dataclasses.field(default_factory=dict)  # gpulab.gpu.nvml.card_columns while timed
    blocks: int = 1  # how many blocks the repetitions came in (each on freshly placed buffers)

    def as_record(self) -> dict:
        return {
            "time_ms": self.median_ms,
            "time_min_ms": self.min_ms,
            "time_max_ms": self.max_ms,
            "reps": self.reps,
            "blocks": self.blocks,
            "l2_flushed": self.l2_flushed,
            "time_ci_low_ms": self.ci_low_ms,
            "time_ci_high_ms": self.ci_high_ms,
            "rel_noise": self.rel_noise,
            "hit_budget": self.hit_budget,
            **self.card,
        }


@dataclasses.dataclass(frozen=True)
class TimingPolicy:
    warmup_ms: float = 30.0  # keep launching until this much device time has passed
    target_ms: float = 250.0  # the budget: at most this much timed device time ...
    min_reps: int = 6  # ... and at least this many repetitions (6: the fewest with a 95% interval)
    max_reps: int = 200  # ... and at most this many
    flush_l2: bool = True
    noise: float = 0.005  # stop once the median's 95% interval is within this fraction of it


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


class Window:
    """One timed launch of `fn`: the flush (outside the window), the hold, the start event, the work,
    the stop event. `queue()` puts it on the stream; `elapsed_ms()` waits for it and reads it. Two
    windows can be queued back to back (gpulab.jobs.ab's rounds) and read after."""

    def __init__(self, fn: Callable[[], None], flush: Callable[[], None] | None):
        cp = cupy()
        self.fn, self.flush = fn, flush
        self.start, self.stop = cp.cuda.Event(), cp.cuda.Event()
        self.hold = stream_hold()

    def queue(self) -> None:
        if self.flush is not None:
            self.flush()
        self.hold()
        self.start.record()
        self.fn()
        self.stop.record()

    def elapsed_ms(self) -> float:
        try:
            self.stop.synchronize()
        except cuda_errors() as exc:  # a fault inside the kernel surfaces at this synchronization
            raise DeviceFault(f"the timed launch faulted on the device: {exc}", str(exc)) from None
        return cupy().cuda.get_elapsed_time(self.start, self.stop)

    def __call__(self) -> float:
        self.queue()
        return self.elapsed_ms()


def warm_up(windows: list[Window], warmup_ms: float) -> None:
    """Launch the windows in turn until `warmup_ms` of device time has passed (at least twice each,
    at most 1000 rounds): module load, clocks ramping and the instruction path settle."""
    spent, rounds = 0.0, 0
    while spent < warmup_ms or rounds < 2:
        spent += sum(w() for w in windows)
        rounds += 1
        if rounds >= 1000:
            break


def reset_persisting_l2() -> None:
    """No L2 set aside for persisting accesses, and none of its lines persisting: a kernel (or an
    earlier one in this process) that marked its data persisting, through an access-policy window or
    its own cache hints, would otherwise keep it in L2 across the flush and time warm."""
    # cudaLimitPersistingL2CacheSize is 6 in the runtime's cudaLimit; CuPy binds deviceSetLimit
    # but not that name.
    try:
        cupy().cuda.runtime.deviceSetLimit(6, 0)
    except Exception:
        pass  # a card without the carve-out (before sm_80) or a runtime that refuses: nothing set aside
    try:
        # cudaCtxResetPersistingL2Cache is not in CuPy's runtime; the driver's twin acts on the same
        # (current, primary) context. Imported here, as in gpulab.gpu.launch: ~90 ms at import.
        from cuda.bindings import driver

        driver.cuCtxResetPersistingL2Cache()
    except Exception:
        pass  # not supported here: with a zero carve-out no line can persist anyway


def time_it(fn: Callable[[], None], policy: TimingPolicy, flush: Callable[[], None] | None,
            last: Callable[[], None] | None = None, moved: Callable[[], Callable[[], None]] | None = None) -> Timing:
    """Time `fn` (one launch of the work) under `policy`; `flush` runs before each repetition. Each
    block after the first launches `moved()` (the same work on buffers placed anew) where given,
    else `fn` again, after at least two untimed launches. With `last`: one more repetition after
    the stopping rule, `last()` run before it (see the module)."""
    reset_persisting_l2()
    one = Window(fn, flush)
    warm_up([one], policy.warmup_ms)
    blocks: list[list[float]] = [[]]
    with nvml.Watch() as card:
        while not should_stop(blocks, policy.noise, policy.target_ms, policy.min_reps, policy.max_reps):
            if len(blocks[-1]) >= BLOCK_REPS:
                if moved is not None:
                    one = Window(moved(), flush)
                warm_up([one], 0.0)
                blocks.append([])
            blocks[-1].append(one())
        met = row_noise_met(blocks, policy.noise)
        if last is not None:
            last()
            blocks[-1].append(one())
    s = summarize_blocks(blocks)
    return Timing(s.median, s.minimum, s.maximum, s.n, flush is not None, s.ci_low, s.ci_high, s.rel_noise, not met,
                  card.columns(), s.blocks)
