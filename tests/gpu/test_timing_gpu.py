"""The timed window holds the work and none of the host's time to queue it."""

import time

from gpulab.gpu.timing import TimingPolicy, time_it

HOST_DELAY_S = 80e-6  # well under the 200 us hold, far above a small kernel's time


def test_host_time_before_the_launch_is_not_timed(lab):
    """Python that dawdles 80 us before queueing a tiny kernel: the window opens behind the hold
    kernel, so the timing is the kernel's own (a few microseconds), not the 80 us."""
    import cupy

    x = cupy.zeros(1024, dtype=cupy.float32)

    def slow_host_then_tiny_kernel():
        end = time.perf_counter() + HOST_DELAY_S
        while time.perf_counter() < end:  # a busy wait: sleep() granularity is too coarse
            pass
        x.fill(1.0)

    t = time_it(slow_host_then_tiny_kernel, TimingPolicy(warmup_ms=1.0, target_ms=5.0, min_reps=20), None)
    assert t.median_ms < 0.040, t
