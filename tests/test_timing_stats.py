"""The statistics of timing (gpulab.gpu.stats) on synthetic samples whose truth is known: the median's
interval covers the true median as often as it says, the stopping rule stops where it should, and the
A/B verdict finds real differences and calls a kernel against itself the same."""

import math

import numpy as np
import pytest

from gpulab.errors import GpulabError
from gpulab.gpu.stats import (
    FASTER, FEWEST_FOR_INTERVAL, FEWEST_TO_STOP_ON_NOISE, SAME, SLOWER, median_interval, median_ranks, noise_met,
    parse_noise, relative_noise, rounds_done, should_stop, summarize, verdict,
)


def exact_coverage(n: int) -> float:
    """1 - 2 P(B <= l - 1) for B ~ Binomial(n, 1/2): what the ranks promise, computed exactly."""
    low, _ = median_ranks(n)
    return 1.0 - 2.0 * sum(math.comb(n, k) for k in range(low)) / 2**n


@pytest.mark.parametrize("n, ranks", [(6, (1, 6)), (10, (2, 9)), (20, (6, 15)), (100, (40, 61))])
def test_the_ranks_are_the_textbook_ones(n, ranks):
    # Conover, Practical Nonparametric Statistics, table A3 (the binomial with p = 1/2)
    assert median_ranks(n) == ranks


def test_the_ranks_keep_at_least_95_percent_and_none_exist_below_six():
    assert median_ranks(FEWEST_FOR_INTERVAL - 1) is None and median_interval([1.0] * 5) is None
    for n in range(FEWEST_FOR_INTERVAL, 400):
        low, high = median_ranks(n)
        assert low + high == n + 1
        assert exact_coverage(n) >= 0.95
        # and the next rank in would not: the interval is the tightest that keeps its promise
        assert low == n // 2 + 1 or 1.0 - 2.0 * sum(math.comb(n, k) for k in range(low + 1)) / 2**n < 0.95


@pytest.mark.parametrize("n", [6, 13, 30, 101])
@pytest.mark.parametrize("draw, true_median", [
    (lambda rng, n: rng.lognormal(0.0, 0.4, n), 1.0),  # skewed right, as kernel times are
    (lambda rng, n: 0.2 + rng.exponential(1.0, n), 0.2 + math.log(2.0)),
    (lambda rng, n: rng.standard_t(2, n), 0.0),  # heavy tails: no mean-and-sigma interval survives these
])
def test_the_interval_covers_the_true_median_as_often_as_it_promises(n, draw, true_median):
    rng = np.random.default_rng(20261203 + n)
    trials = 4000
    covered = 0
    for _ in range(trials):
        low, high = median_interval(list(draw(rng, n)))
        covered += low <= true_median <= high
    promised = exact_coverage(n)
    sigma = math.sqrt(promised * (1 - promised) / trials)
    assert abs(covered / trials - promised) <= 4 * sigma, (covered / trials, promised)


def test_summarize_and_relative_noise():
    s = summarize([1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.0])
    assert (s.median, s.minimum, s.maximum, s.n) == (1.0, 0.98, 1.02, 7)
    assert (s.ci_low, s.ci_high) == (0.98, 1.02)  # n = 7: ranks 1 and 7
    assert s.rel_noise == pytest.approx(0.02)
    assert relative_noise(1.0, (0.99, 1.03)) == pytest.approx(0.03)  # the farther end
    assert relative_noise(1.0, None) is None and summarize([1.0] * 3).rel_noise is None


def repeat(draw, target=0.005, budget_ms=250.0, min_reps=6, max_reps=200) -> list[float]:
    """time_it's loop, on synthetic times: repeat until should_stop says so."""
    times: list[float] = []
    while not should_stop(times, target, budget_ms, min_reps, max_reps):
        times.append(draw())
    return times


def test_a_steady_kernel_stops_on_its_noise_target_early():
    rng = np.random.default_rng(1)
    times = repeat(lambda: 1.0 + rng.normal(0, 1e-4))
    assert len(times) == FEWEST_TO_STOP_ON_NOISE and noise_met(times, 0.005)


def test_a_noisy_kernel_runs_to_its_budget_and_says_so():
    rng = np.random.default_rng(2)
    times = repeat(lambda: 1.0 * rng.lognormal(0, 0.2), budget_ms=60.0)
    assert 60.0 <= sum(times) < 60.0 + max(times) and not noise_met(times, 0.005)


def test_the_repetitions_stay_between_min_and_max():
    assert len(repeat(lambda: 100.0, budget_ms=1.0)) == 6  # a slow kernel: the budget is spent at once
    rng = np.random.default_rng(3)
    assert len(repeat(lambda: 0.001 * rng.lognormal(0, 0.3))) == 200  # a fast, noisy one: max_reps


def test_the_noise_rule_tightens_with_the_target():
    rng = np.random.default_rng(4)
    loose = repeat(lambda: rng.lognormal(0, 0.01), target=0.01, budget_ms=1e9, max_reps=10_000)
    rng = np.random.default_rng(4)
    tight = repeat(lambda: rng.lognormal(0, 0.01), target=0.002, budget_ms=1e9, max_reps=10_000)
    assert len(tight) > len(loose)
    assert relative_noise(np.median(tight), median_interval(tight)) <= 0.002


# -- A/B --------------------------------------------------------------------------------------------
def ab_rounds(rng, true_ratio: float, sigma: float, resolution=0.005, per_round_ms=1.0, budget_ms=2000.0):
    """ab's loop on synthetic rounds: A's time drifts from round to round (a clock that moves), B's is
    true_ratio times it; each carries its own noise. Rounds until rounds_done, then the verdict."""
    ratios: list[float] = []
    spent, stop = 0.0, False
    while not stop:
        drift = rng.uniform(0.9, 1.1)  # shared by both within a round: cancels in the ratio
        a = per_round_ms * drift * rng.lognormal(0, sigma)
        b = per_round_ms * drift * true_ratio * rng.lognormal(0, sigma)
        ratios.append(b / a)
        spent += a + b
        stop, _ = rounds_done(ratios, spent, resolution, budget_ms, 10, 2000)
    return verdict(ratios, resolution)


@pytest.mark.parametrize("sigma, runs", [(0.002, 200), (0.01, 200), (0.03, 50)])
def test_a_kernel_against_itself_is_the_same_every_time(sigma, runs):
    """From a steady kernel (stopped on the target after tens of rounds) to a noisy one (run to the
    budget, its interval wider than the resolution): never called faster or slower than itself."""
    rng = np.random.default_rng(int(sigma * 1e4))
    words = [ab_rounds(rng, 1.0, sigma).word for _ in range(runs)]
    assert words == [SAME] * runs


@pytest.mark.parametrize("true_ratio, word", [(0.97, FASTER), (0.985, FASTER), (1.03, SLOWER), (1.015, SLOWER),
                                              (1.002, SAME), (0.997, SAME)])
def test_the_verdict_finds_what_is_there(true_ratio, word):
    """Differences of 1.5% and more are told, each way; one well under the 0.5% resolution is not."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        v = ab_rounds(rng, true_ratio, 0.01)
        assert v.word == word, v.sentence()


def test_the_ratio_interval_covers_the_true_ratio():
    rng = np.random.default_rng(8)
    trials, covered = 2000, 0
    for _ in range(trials):
        a = rng.lognormal(0, 0.02, 40)
        b = 0.9 * rng.lognormal(0, 0.02, 40)  # the ratio's median is 0.9: a symmetric log-difference
        v = verdict(list(b / a), 0.005)
        covered += v.low <= 0.9 <= v.high
    assert covered / trials >= exact_coverage(40) - 4 * math.sqrt(0.05 * 0.95 / trials)


def test_the_verdict_needs_the_whole_interval_beyond_the_resolution():
    assert verdict([0.990, 0.992, 0.991, 0.993, 0.989, 0.990, 0.991, 0.992, 0.990, 0.991], 0.005).word == FASTER
    # below 1 for sure, but not by more than the 0.5% resolution throughout
    assert verdict([0.993, 0.996, 0.994, 0.997, 0.995, 0.994, 0.996, 0.995, 0.993, 0.996], 0.005).word == SAME
    assert verdict([1.0] * 5, 0.005).low is None  # too few rounds for an interval: never a difference


def test_the_sentence_names_both_and_the_numbers():
    v = verdict([0.98] * 12, 0.005)
    assert v.sentence("t4", "cublas").startswith("cublas is faster than t4 by 2.00%: time cublas / time t4 = 0.9800")
    assert "same within noise" in verdict([1.0] * 12, 0.005).sentence()


@pytest.mark.parametrize("text, value", [("0.5%", 0.005), ("0.005", 0.005), ("2%", 0.02), (0.01, 0.01)])
def test_parse_noise(text, value):
    assert parse_noise(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["0", "-1%", "60%", "abc", "%"])
def test_parse_noise_refuses_what_is_no_target(text):
    with pytest.raises(GpulabError, match="--noise"):
        parse_noise(text)
