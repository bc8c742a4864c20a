"""The statistics of repeated timings, pure Python: the confidence interval of a median, the rule
that says when a row has been repeated enough, and the A/B ratio with its verdict.

The interval is distribution-free, from order statistics: for n independent samples of any
continuous distribution, the number B of them below the true median is Binomial(n, 1/2), so the
sorted samples x(l) <= x(u), with u = n + 1 - l, hold the median between them with probability
P(l <= B <= n - l) = 1 - 2 P(B <= l - 1). l is the largest rank that keeps this at or above the
confidence asked for; the coverage is then at least that (a little more: B is discrete). No
normality is assumed, which matters here: kernel times are skewed (a long right tail of launches
slowed by clock changes or a busy host), and their mean and standard deviation are pulled by it.
A bootstrap of the median is the other common choice; it is random, slower, and known to
under-cover for small samples, where these ranks are exact (W. J. Conover, Practical
Nonparametric Statistics, 3rd ed., Wiley 1999, section 3.2).

A timed row's repetitions are not independent, though: they come in blocks (gpulab.gpu.timing),
each on freshly placed buffers after a short warm-up, and the blocks differ by more than the
repetitions within one do. On the H200 (2026-12-04, sgemm at 2048^3, notebook/probes/
probe_twice_sources.py) a whole timing repeated at once moved its median by 0.09-0.8% (standard
deviation over 8 repeats), while each timing's own interval reached 0.05-0.46%: one bench run
twice put the second median inside the first's interval at 10 of 23 rows. So a row's interval
(row_interval) is the order-statistic interval of all its repetitions, widened to hold the
Student-t interval of the mean of its blocks' medians, the spread that repetitions inside one
block cannot show.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
from typing import Sequence

from gpulab.errors import GpulabError

CONFIDENCE = 0.95
# The fewest samples whose [min, max] holds the median with 95% confidence: 1 - 2 / 2**6 = 0.969.
FEWEST_FOR_INTERVAL = 6
# A row may stop on its noise target only after this many repetitions: the interval of very few
# samples is [min, max], and stopping the first time a handful of them happen to agree would stop
# on luck more often than the interval's confidence says.
FEWEST_TO_STOP_ON_NOISE = 10
# Repetitions per block, and the fewest blocks a row may stop on its noise target with: three
# blocks' medians give the first usable spread between blocks (Student's t with 2 degrees of
# freedom, 4.30 times the standard error: wide unless the blocks agree).
BLOCK_REPS = 4
FEWEST_BLOCKS = 3
# Student's t, the two-sided 95% quantile, for 1 to 30 degrees of freedom.
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
         2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
         2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


@functools.cache
def median_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """(l, u), the 1-based ranks of the sorted samples bounding the median of `n` samples with at
    least `confidence`; None where n is too small for any (under FEWEST_FOR_INTERVAL at 95%)."""
    alpha = (1.0 - confidence) / 2.0
    cdf, best = 0.0, 0
    for k in range(n // 2 + 1):  # P(B <= k), summed in log space so large n does not overflow
        cdf += math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2.0))
        if cdf > alpha:
            break
        best = k + 1  # P(B <= best - 1) <= alpha: rank `best` may be the lower bound
    if best < 1:
        return None
    return best, n + 1 - best


def median_interval(samples: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The distribution-free interval (low, high) of the median of `samples`; None for too few."""
    ranks = median_ranks(len(samples), confidence)
    if ranks is None:
        return None
    ordered = sorted(samples)
    return ordered[ranks[0] - 1], ordered[ranks[1] - 1]


def relative_noise(median: float, interval: tuple[float, float] | None) -> float | None:
    """How far the interval reaches from the median, as a fraction of it: the larger of its two
    half-widths (the interval need not be symmetric). None without an interval."""
    if interval is None or not median > 0:
        return None
    return max(median - interval[0], interval[1] - median) / median


def t_975(df: int) -> float:
    """Student's t, two-sided 95%, for `df` degrees of freedom (beyond the table: 1.96 + 2.4 / df,
    within 0.002 of the true value from 30 on)."""
    return T_975[df - 1] if df <= len(T_975) else 1.96 + 2.4 / df


def blocks_interval(blocks: Sequence[Sequence[float]]) -> tuple[float, float] | None:
    """The 95% interval of the mean of the blocks' medians (Student's t over the blocks, each
    block's median one observation), cut at zero below: no time is negative, and two blocks far apart
    (t = 12.7 at two) reached below it on a card shared with other work (the H200, call 23: a
    ceilings row's low end at -5.65 ms, which the records reader then refused); None under two
    blocks."""
    medians = [statistics.median(b) for b in blocks if b]
    if len(medians) < 2:
        return None
    mean = statistics.fmean(medians)
    half = t_975(len(medians) - 1) * statistics.stdev(medians) / math.sqrt(len(medians))
    return max(mean - half, 0.0), mean + half


def row_interval(blocks: Sequence[Sequence[float]]) -> tuple[float, float] | None:
    """A timed row's 95% interval: the order-statistic interval of the median of all its
    repetitions (median_interval), widened to hold the interval between its blocks
    (blocks_interval). None under FEWEST_FOR_INTERVAL repetitions."""
    within = median_interval([t for b in blocks for t in b])
    between = blocks_interval(blocks)
    if within is None or between is None:
        return within
    return min(within[0], between[0]), max(within[1], between[1])


@dataclasses.dataclass(frozen=True)
class Summary:
    """Repetitions summarized: the median, min and max, the interval of the median and its noise."""

    median: float
    minimum: float
    maximum: float
    ci_low: float | None
    ci_high: float | None
    rel_noise: float | None
    n: int
    blocks: int = 1


def summarize(samples: Sequence[float]) -> Summary:
    """Samples of one block (an A/B side's rounds): the median and its order-statistic interval."""
    return summarize_blocks([samples])


def summarize_blocks(blocks: Sequence[Sequence[float]]) -> Summary:
    """A timed row's blocks of repetitions: the median of all, and row_interval."""
    samples = [t for b in blocks for t in b]
    interval = row_interval(blocks)
    median = statistics.median(samples)
    return Summary(median, min(samples), max(samples), interval[0] if interval else None,
                   interval[1] if interval else None, relative_noise(median, interval), len(samples),
                   sum(1 for b in blocks if b))


def noise_met(samples: Sequence[float], target: float) -> bool:
    """Whether the median's interval reaches no further than `target` (a fraction) from it."""
    n = len(samples)
    if n < FEWEST_TO_STOP_ON_NOISE:
        return False
    ordered = sorted(samples)  # once: the median and both ends of its interval read from it
    low, high = median_ranks(n)
    median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2
    noise = relative_noise(median, (ordered[low - 1], ordered[high - 1]))
    return noise is not None and noise <= target


def row_noise_met(blocks: Sequence[Sequence[float]], target: float) -> bool:
    """Whether a timed row may stop on its noise target: at least FEWEST_BLOCKS whole blocks and
    FEWEST_TO_STOP_ON_NOISE repetitions, and row_interval reaching no further than `target` (a
    fraction) from the median."""
    samples = [t for b in blocks for t in b]
    whole = sum(1 for b in blocks if len(b) >= BLOCK_REPS)
    if len(samples) < FEWEST_TO_STOP_ON_NOISE or whole < FEWEST_BLOCKS:
        return False
    noise = relative_noise(statistics.median(samples), row_interval(blocks))
    return noise is not None and noise <= target


def should_stop(blocks: Sequence[Sequence[float]], target: float, budget_ms: float, min_reps: int,
                max_reps: int) -> bool:
    """The stopping rule of a timed row, after each repetition: stop at the end of a block once
    row_noise_met, or as soon as the timed device time reaches `budget_ms` or `max_reps`
    repetitions are done; never before `min_reps`."""
    n = sum(len(b) for b in blocks)
    if n >= max_reps:
        return True
    if n < min_reps:
        return False
    if sum(sum(b) for b in blocks) >= budget_ms:
        return True
    return len(blocks[-1]) >= BLOCK_REPS and row_noise_met(blocks, target)


# -- two kernels, interleaved ---------------------------------------------------------------------
FASTER, SLOWER, SAME = "faster", "slower", "same within noise"


@dataclasses.dataclass(frozen=True)
class Verdict:
    """B against A from per-round ratios time_B / time_A: their median, its interval, and the word."""

    ratio: float
    low: float | None
    high: float | None
    resolution: float
    word: str
    rounds: int

    def sentence(self, a: str = "A", b: str = "B") -> str:
        """One line: the word, then the ratio and its interval, e.g. 'cublas is faster than t4 by
        1.30%: time cublas / time t4 = 0.9870, 95% interval 0.9851-0.9893 over 212 rounds'."""
        span = (f"95% interval {self.low:.4f}-{self.high:.4f}" if self.low is not None
                else "too few rounds for an interval")
        numbers = f"time {b} / time {a} = {self.ratio:.4f}, {span} over {self.rounds} rounds"
        if self.word == SAME:
            return f"{b} and {a} are the {SAME} (no difference beyond {self.resolution:.2%} resolved): {numbers}"
        return f"{b} is {self.word} than {a} by {abs(1 - self.ratio):.2%}: {numbers}"


def verdict(ratios: Sequence[float], resolution: float) -> Verdict:
    """The verdict on per-round ratios time_B / time_A. Each round launched both on the same card
    state (in alternating order), so a ratio cancels what drifts between rounds (clocks, heat); the
    rounds are then independent samples of it and the interval of their median is the
    order-statistics one above, with no assumption on the ratio's distribution.

    'faster' (or 'slower') only where the whole interval lies beyond the resolution, below
    1 - resolution (above 1 + resolution): the difference is real at 95% confidence and larger than
    what the command was asked to resolve. Anything else is 'same within noise'. The stricter
    reading keeps a kernel against itself from being called different: a plain 'the interval
    excludes 1' does so in 5% of runs by construction."""
    interval = median_interval(ratios)
    ratio = statistics.median(ratios)
    word = SAME
    if interval is not None and interval[1] < 1.0 - resolution:
        word = FASTER
    elif interval is not None and interval[0] > 1.0 + resolution:
        word = SLOWER
    return Verdict(ratio, interval[0] if interval else None, interval[1] if interval else None, resolution, word,
                   len(ratios))


def rounds_done(ratios: Sequence[float], spent_ms: float, resolution: float, budget_ms: float, min_rounds: int,
                max_rounds: int) -> tuple[bool, bool]:
    """The stopping rule of A/B rounds, after each round: (stop, target met). The target is the
    ratio's interval within half the resolution of it, so that a difference of one and a half
    resolutions falls wholly outside the band `verdict` reads; else the budget of timed device time
    (`spent_ms`, both sides) or `max_rounds`; never before `min_rounds`."""
    n = len(ratios)
    if n < min_rounds:
        return False, False
    # Past 100 rounds the interval is read every n/20 rounds, not every round: it moves little from
    # one to the next, and a sort of thousands of ratios per round would cost more than a round.
    if (n <= 100 or n % (n // 20) == 0) and noise_met(ratios, resolution / 2):
        return True, True
    return n >= max_rounds or spent_ms >= budget_ms, False


def parse_noise(text: str | float) -> float:
    """'0.5%' or '0.005' -> 0.005: a noise target, above 0 and below 50%."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100.0 if raw.endswith("%") else float(raw)
    except ValueError:
        raise GpulabError(f"noise {text}: give a fraction or a percentage, e.g. 0.005 or 0.5%") from None
    if not 0.0 < value < 0.5:
        raise GpulabError(f"noise {text}: must be above 0 and below 50%, e.g. 0.005 or 0.5%")
    return value
