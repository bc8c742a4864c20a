"""The timing pipeline's plumbing without a GPU: Lab.execute and gpulab.jobs.ab.run over a stand-in
for CuPy (numpy arrays, events that read a simulated device clock) and launchers written in Python
that do what the planted CUDA kernels of tests/gpu/planted/ do. The same checks run on the card in
tests/gpu/test_timing_gpu.py; these run everywhere and say which part of the path broke.

A launcher advances the simulated clock by its own duration, so an event pair around it reads that
duration: the noise and the speeds below are the test's, not measurements."""

import types

import numpy as np
import pytest

from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.gpu import nvml, timing
from gpulab.gpu.occupancy import SM_LIMITS
from gpulab.gpu.stats import FASTER, SAME
from gpulab.gpu.timing import TimingPolicy
from gpulab.jobs import ab
from gpulab.run import lab as lab_module
from gpulab.run.lab import Lab, LabOptions, RunSpec

SGEMM = get_experiment("sgemm")
SHAPE = SGEMM.shape(48, 40, 32)


class Clock:
    now = 0.0  # ms of simulated device time


class Event:
    def record(self):
        self.t = Clock.now

    def synchronize(self):
        pass


class StandInCupy:
    """numpy under CuPy's names, with events on the simulated clock."""

    ndarray = np.ndarray

    def __init__(self):
        self.cuda = types.SimpleNamespace(Event=Event, get_elapsed_time=lambda a, b: b.t - a.t,
                                          runtime=types.SimpleNamespace())

    def __getattr__(self, name):
        return getattr(np, name)


def correct(ms: float, rng):
    """A launcher factory: the right product every launch, taking about `ms`."""
    def make(inputs, out):
        def once():
            out[...] = inputs["A"] @ inputs["B"]
            Clock.now += ms * rng.lognormal(0, 0.003)
        return once
    return make


def skips_later_launches(rng):
    """tests/gpu/planted/skips_later_launches.cu in Python: the work on the first launch only."""
    done = [False]

    def make(inputs, out):
        def once():
            if not done[0]:
                out[...] = inputs["A"] @ inputs["B"]
                done[0] = True
                Clock.now += 1.0
            else:
                Clock.now += 0.01 * rng.lognormal(0, 0.003)
        return once
    return make


def replays_kept_result(rng):
    """tests/gpu/planted/replays_kept_result.cu in Python: the first result kept, replayed after."""
    kept = []

    def make(inputs, out):
        def once():
            if not kept:
                kept.append(inputs["A"] @ inputs["B"])
            out[...] = kept[0]
            Clock.now += 0.05 * rng.lognormal(0, 0.003)
        return once
    return make


@pytest.fixture
def stand_in(monkeypatch):
    """A Lab without a GPU: CuPy's stand-in, no hold kernel, no flush, no device synchronization;
    `lab.make[label]` is the launcher factory of each run."""
    cp = StandInCupy()
    monkeypatch.setattr(lab_module.seam, "cupy", lambda: cp)
    monkeypatch.setattr(timing, "cupy", lambda: cp)
    monkeypatch.setattr(timing, "stream_hold", lambda: (lambda: None))
    monkeypatch.setattr(lab_module, "synchronize", lambda what: None)
    monkeypatch.setattr(ab, "synchronize", lambda what: None)
    monkeypatch.setattr(lab_module, "free_memory_bytes", lambda: 1 << 40)
    monkeypatch.setattr(nvml, "_current_bus_id", lambda: (_ for _ in ()).throw(RuntimeError("no GPU here")))

    def make_lab(options=LabOptions(timing=TimingPolicy(warmup_ms=2.0))):
        lab = Lab.__new__(Lab)
        lab.device = types.SimpleNamespace(l2_bytes=1 << 20, smem_per_block_optin_bytes=227 * 1024, arch="sm_90")
        lab.arch, lab.options, lab.env = "sm_90", options, {"gpu": "stand-in"}
        lab._flusher, lab._check_count, lab._sm_limits = (lambda: None), 0, SM_LIMITS["sm_90"]
        lab.make = {}
        lab.launcher = lambda spec, inputs, out: lab.make[spec.label](inputs, out)
        return lab
    return make_lab


def _library_spec() -> RunSpec:
    return RunSpec(SGEMM, None, {}, SHAPE, library="cublas")


def test_a_correct_run_is_timed_with_its_interval(stand_in):
    lab = stand_in()
    spec = _library_spec()
    lab.make[spec.label] = correct(1.0, np.random.default_rng(0))
    row = lab.execute(spec)
    assert row["correct"] is True and not row.get("skip_reason"), row
    assert row["time_ms"] == pytest.approx(1.0, rel=0.01) and row["gflops"] > 0
    assert row["reps"] >= 10 and row["hit_budget"] is False and row["rel_noise"] <= 0.005
    assert row["time_ci_low_ms"] <= row["time_ms"] <= row["time_ci_high_ms"]
    assert all(row[c] is None for c in nvml.COLUMNS)  # no NVML here: the columns exist, empty


def test_each_block_runs_on_buffers_placed_anew_and_the_last_is_checked(stand_in):
    """A row's blocks of repetitions each launch on their own copy of the inputs and their own
    output (Lab.time's placements, at most PLACEMENTS, then in turn); a launcher whose time depends
    on where its buffers are widens the row's interval to hold that spread; the check after timing
    reads the output of the placement the last repetition ran on."""
    lab = stand_in()
    spec = _library_spec()
    rng = np.random.default_rng(5)
    seen, place_ms = [], {}

    def make(inputs, out):
        seen.append((id(inputs["A"]), id(out)))
        ms = place_ms.setdefault(id(inputs["A"]), 1.0 + 0.004 * len(place_ms))  # each place 0.4% slower

        def once():
            out[...] = inputs["A"] @ inputs["B"]
            Clock.now += ms * rng.lognormal(0, 0.0005)
        return once
    lab.make[spec.label] = make
    row = lab.execute(spec)
    assert row["correct"] is True and not row.get("skip_reason"), row
    assert row["blocks"] >= 3 and row["reps"] >= 4 * (row["blocks"] - 1)
    # Each block its own buffers. The check before timing built the first launcher, on inputs freed
    # since (Python may hand their ids to the timing's); the timing's placements are all alive at once.
    timed = seen[1:]
    assert len(set(timed)) == min(row["blocks"], lab_module.PLACEMENTS)
    # The places' times spread 2% and each launch varies 0.05%: the interval holds the places' mean and
    # is as wide as their spread over the blocks says (a block's own repetitions would give ~0.05%).
    places = [place_ms[a] for a in {a for a, _ in timed}]
    assert row["time_ci_low_ms"] < np.mean(places) < row["time_ci_high_ms"]
    assert row["rel_noise"] > 1.96 * np.std(places) / np.sqrt(row["blocks"]) / np.mean(places)


def test_a_placement_that_does_not_fit_falls_back_to_those_placed(stand_in, monkeypatch):
    """Where a new placement's allocation fails (more than the experiment's device_bytes said), the
    blocks go on over the placements made so far: the row is timed and checked, not lost."""
    class OutOfMemory(Exception):
        pass

    made = []
    real_output = SGEMM.output

    def output(shape, xp):
        made.append(shape)
        if len(made) > 2:  # the timing's first output and one more placement's; then the card is full
            raise OutOfMemory
        return real_output(shape, xp)
    monkeypatch.setattr(SGEMM, "output", output)
    monkeypatch.setattr(lab_module, "out_of_memory", lambda: OutOfMemory)
    lab = stand_in()
    spec = _library_spec()
    seen = []

    def make(inputs, out):
        seen.append((id(inputs["A"]), id(out)))
        return correct(1.0, np.random.default_rng(6))(inputs, out)
    lab.make[spec.label] = make
    lab.options = LabOptions(timing=TimingPolicy(warmup_ms=2.0), check=False)  # no check: no outputs of its own
    row = lab.execute(spec)
    assert not row.get("skip_reason") and row["blocks"] >= 3 and row["time_ms"] > 0, row
    assert len(set(seen)) == 2 and len(seen) == row["blocks"]  # the two placements, in turn


@pytest.mark.parametrize("gaming, words", [(skips_later_launches, "NaN or never written"),
                                           (replays_kept_result, "wrong elements")])
def test_a_run_that_games_the_timer_fails_after_timing(stand_in, gaming, words):
    lab = stand_in()
    spec = _library_spec()
    lab.make[spec.label] = gaming(np.random.default_rng(1))
    row = lab.execute(spec)
    assert row["max_rel_err"] <= 2e-5  # the check before timing passed
    assert row["correct"] is False and row["skip_reason"].startswith("wrong output after timing"), row
    assert words in row["skip_reason"] and "time_ms" not in row and "gflops" not in row


def test_a_throttled_row_is_timed_again_after_a_cool_down(stand_in, monkeypatch):
    seen = iter(["sw_power_cap sync_boost", ""])

    class Watch:
        def __enter__(self):
            self.throttle = next(seen)
            return self

        def __exit__(self, *exc):
            pass

        def columns(self):
            return {"sm_clock_mhz": 1755 if self.throttle else 1980, "power_w": 700.0, "temp_c": 60,
                    "throttle": self.throttle}

    cooled = []
    monkeypatch.setattr(nvml, "Watch", Watch)
    monkeypatch.setattr(nvml, "cool_down", lambda: cooled.append(True) or 2.0)
    lab = stand_in(LabOptions(timing=TimingPolicy(warmup_ms=2.0), retime_throttled=True))
    spec = _library_spec()
    lab.make[spec.label] = correct(1.0, np.random.default_rng(2))
    row = lab.execute(spec)
    assert cooled == [True] and row["retimed"] == "sw_power_cap"
    assert row["throttle"] == "" and row["sm_clock_mhz"] == 1980


def test_ab_tells_a_faster_kernel_and_checks_both_after(stand_in):
    lab = stand_in()
    a, b = ab.specs(SGEMM, "v1:TILE=16", "cublas", {}, SHAPE)
    rng = np.random.default_rng(3)
    lab.make[a.label], lab.make[b.label] = correct(1.0, rng), correct(0.9, rng)
    result = ab.run(lab, a, b, ab.AbPolicy(budget_ms=500.0))
    assert result.verdict.word == FASTER and result.verdict.ratio == pytest.approx(0.9, rel=0.01)
    assert not result.hit_budget and len(result.times_a) == len(result.times_b) == result.verdict.rounds
    assert result.sentence().startswith("cublas is faster than v1 TILE=16 by 1")  # 1 - ratio, about 10%


def test_ab_of_a_run_against_itself_is_the_same(stand_in):
    lab = stand_in()
    a, b = ab.specs(SGEMM, "cublas", "cublas", {}, SHAPE)
    lab.make[a.label] = correct(1.0, np.random.default_rng(4))
    result = ab.run(lab, a, b)
    assert result.same_run and result.verdict.word == SAME


def test_ab_refuses_a_kernel_that_replays_a_kept_result(stand_in):
    lab = stand_in()
    a, b = ab.specs(SGEMM, "v1:TILE=16", "cublas", {}, SHAPE)
    rng = np.random.default_rng(5)
    lab.make[a.label], lab.make[b.label] = correct(1.0, rng), replays_kept_result(rng)
    with pytest.raises(GpulabError, match=r"B \(sgemm cublas .*\) gave a wrong output on its last timed launch"):
        ab.run(lab, a, b, ab.AbPolicy(budget_ms=100.0))


def test_ab_refuses_a_wrong_kernel_before_timing(stand_in):
    lab = stand_in()
    a, b = ab.specs(SGEMM, "v1:TILE=16", "cublas", {}, SHAPE)

    def wrong(inputs, out):
        def once():
            out[...] = 0.0
        return once

    lab.make[a.label], lab.make[b.label] = wrong, correct(1.0, np.random.default_rng(6))
    with pytest.raises(GpulabError, match=r"A \(sgemm v1 .*\) is wrong .*fix it first"):
        ab.run(lab, a, b)
