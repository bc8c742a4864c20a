"""Timing on the GPU: the window holds the work and none of the host's time to queue it; the output
of the last timed launch is checked again, so kernels that game the timer (work on the first launch
only, a result kept from an earlier launch replayed) fail while a correct one passes; the row carries
its interval and the card's state; the persisting-L2 carve-out is zero while timing; and `ab` on a
kernel against itself says 'same within noise'.

The planted kernels (tests/gpu/planted/) join through a stand-in experiment, SGEMM's numerics with
planted variants, as in test_faults_gpu. Their state lives in the loaded module, for the whole
process: each test loads its own copy (a COPY define no kernel reads makes a cubin of its own), so
the first launch of each is the one its test expects."""

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import gpulab
from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.experiments.base import Launch, Param, Variant
from gpulab.gpu import nvml
from gpulab.gpu.stats import SAME
from gpulab.gpu.timing import Timing, TimingPolicy, Window, reset_persisting_l2, time_it
from gpulab.jobs import ab
from gpulab.run.lab import RunSpec

SGEMM = get_experiment("sgemm")
PLANTED = Path(__file__).parent / "planted"
HOST_DELAY_S = 80e-6  # well under the 200 us hold, far above a small kernel's time


def _launch16(p, s):
    return Launch((-(-s["N"] // 16), -(-s["M"] // 16), 1), (16, 16, 1))


COPY = Param("COPY", (1, 2, 3, 4), 1, "which loaded copy of the kernel (its module's globals are its own)")


def _planted(name: str, file: str) -> Variant:
    return Variant(name=name, file=str(PLANTED / file), summary=f"planted: {file}", launch=_launch16, params=(COPY,))


V1 = SGEMM.variant("v1")


class GamingSgemm(type(SGEMM)):
    """SGEMM with two kernels that game the timer beside a healthy one (v1, from its own file)."""

    variants = (
        dataclasses.replace(V1, file=str(SGEMM.source(V1))),
        _planted("skips_later_launches", "skips_later_launches.cu"),
        _planted("replays_kept_result", "replays_kept_result.cu"),
    )


GAMING = GamingSgemm()
SHAPE = SGEMM.shape(257, 131, 77)


def _spec(name: str, copy: int = 1) -> RunSpec:
    v = GAMING.variant(name)
    params = {"TILE": 16} if name == "v1" else {"COPY": copy}
    return RunSpec(GAMING, v, params, SHAPE)


# Exclusive: under pytest -n 16 (H200, 2026-12-04) the plain window read 3 us, not the 80 us of host
# time it must hold. Likely cause: with other processes' contexts time-sliced on the card, the start
# event and the kernel both waited for this context's next slice, after the host's wait. Not yet
# confirmed alone on the card.
@pytest.mark.exclusive
def test_host_time_before_the_launch_stays_out_of_the_window():
    """Python that dawdles 80 us before queueing a tiny kernel. Timed the plain way (start event, the
    host's work, the kernel, stop event) the window holds the 80 us; timed by time_it, it opens
    behind the hold kernel, after the host has queued the work, and holds the kernel alone."""
    import cupy

    x = cupy.zeros(1024, dtype=cupy.float32)

    def slow_host_then_tiny_kernel():
        end = time.perf_counter() + HOST_DELAY_S
        while time.perf_counter() < end:  # a busy wait: sleep() granularity is too coarse
            pass
        x.fill(1.0)

    held = time_it(slow_host_then_tiny_kernel, TimingPolicy(warmup_ms=1.0, target_ms=5.0, min_reps=20), None)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    plain = []
    for _ in range(20):
        start.record()
        slow_host_then_tiny_kernel()
        stop.record()
        stop.synchronize()
        plain.append(cupy.cuda.get_elapsed_time(start, stop))
    plain.sort()
    assert plain[10] >= 0.75 * HOST_DELAY_S * 1e3  # the plain window holds the host's time, as it must
    assert held.median_ms < plain[10] - 0.5 * HOST_DELAY_S * 1e3, (held, plain)


def test_a_timed_row_carries_its_interval_and_the_cards_state(lab):
    row = lab.execute(_spec("v1"))
    assert row["correct"] is True and not row.get("skip_reason"), row
    assert row["reps"] >= 6 and row["time_ci_low_ms"] <= row["time_ms"] <= row["time_ci_high_ms"]
    assert row["rel_noise"] >= 0 and isinstance(row["hit_budget"], bool)
    assert set(nvml.COLUMNS) <= set(row)
    if nvml.unavailable_line():
        assert all(row[c] is None for c in nvml.COLUMNS)
    else:
        assert row["sm_clock_mhz"] > 0 and row["temp_c"] > 0 and isinstance(row["throttle"], str), row


def test_a_kernel_that_works_only_on_its_first_launch_fails_after_timing(lab):
    row = lab.execute(_spec("skips_later_launches"))
    assert row["max_rel_err"] <= 2e-5  # the check before timing saw the first launch, which was right
    assert row["correct"] is False, row
    assert row["skip_reason"].startswith("wrong output after timing"), row
    assert "NaN or never written" in row["skip_reason"] and "time_ms" not in row


def test_a_kernel_that_replays_a_kept_result_fails_after_timing(lab):
    row = lab.execute(_spec("replays_kept_result"))
    assert row["max_rel_err"] <= 2e-5
    assert row["correct"] is False, row
    assert row["skip_reason"].startswith("wrong output after timing") and "NaN" not in row["skip_reason"], row


def test_ab_refuses_a_kernel_that_games_the_timer(lab):
    with pytest.raises(GpulabError, match="wrong output on its last timed launch"):
        ab.run(lab, _spec("v1"), _spec("replays_kept_result", copy=2), ab.AbPolicy(budget_ms=50.0))


def test_the_persisting_l2_carve_out_is_zero_while_timing(lab):
    import cupy

    try:
        cupy.cuda.runtime.deviceSetLimit(6, 1 << 20)  # cudaLimitPersistingL2CacheSize: a carve-out of 1 MiB
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        pytest.skip(f"this card or runtime sets no persisting-L2 carve-out: {exc}")
    reset_persisting_l2()
    assert cupy.cuda.runtime.deviceGetLimit(6) == 0


@pytest.mark.exclusive
def test_a_window_reads_the_same_launch_it_times():
    """Two windows queued back to back (as ab's rounds) each read their own launch. Alone on the card:
    under -n 16 the 4 KiB fill's window read 4.0 ms, the 256 MiB fill's 0.32 (H200, 2026-12-05), the
    other processes' kernels inside the first window."""
    import cupy

    small, big = cupy.zeros(1 << 10, dtype=cupy.float32), cupy.zeros(1 << 26, dtype=cupy.float32)
    windows = [Window(lambda: small.fill(1.0), None), Window(lambda: big.fill(1.0), None)]
    for w in windows:
        w.queue()
    short, long = (w.elapsed_ms() for w in windows)
    assert long > short  # 256 MiB written against 4 KiB: the order of the readings is the order of the work


def test_ab_of_a_kernel_against_itself_says_same():
    rows = gpulab.ab("sgemm", "v1:TILE=16", "v1:TILE=16", shape="512x512x512")
    result = rows.result
    assert result.same_run and result.verdict.word == SAME, result.sentence()
    assert [r["side"] for r in rows] == ["A", "B"] and all(r["ab_verdict"] == SAME for r in rows)
    assert result.verdict.low <= result.verdict.ratio <= result.verdict.high


def test_ab_on_the_command_line(tmp_path):
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "ab", "sgemm", "v1:TILE=16", "cublas", "--size", "512",
                        "--csv", str(tmp_path / "ab.csv")], capture_output=True, text=True, cwd=tmp_path,
                       timeout=300, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert "verdict: cublas" in r.stdout and "95% interval" in r.stdout, r.stdout
    from gpulab.records import read_csv

    rows = read_csv(tmp_path / "ab.csv")
    assert [row["side"] for row in rows] == ["A", "B"] and rows[0]["ab_id"] == rows[1]["ab_id"]


def test_timing_fields_are_consistent():
    """time_it's Timing as a record: the median between the min and max and inside its interval, the
    repetitions in blocks (the interval may reach past the fastest or slowest repetition where the
    blocks disagree: it bounds the next run's median, not this run's repetitions)."""
    import cupy

    x = cupy.zeros(1 << 20, dtype=cupy.float32)
    t = time_it(lambda: x.fill(2.0), TimingPolicy(warmup_ms=1.0, target_ms=20.0), None)
    assert isinstance(t, Timing) and t.reps >= 6 and 1 <= t.blocks <= t.reps
    assert t.min_ms <= t.median_ms <= t.max_ms and t.ci_low_ms <= t.median_ms <= t.ci_high_ms
    if not t.hit_budget:  # stopped on the noise target: the interval is within it
        assert t.rel_noise <= TimingPolicy().noise
