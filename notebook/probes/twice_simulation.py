"""CPU probe (issue 41): what two runs of one row can agree on, on synthetic times with the H200's
spread (0.3% between whole timings, 0.3% between repetitions; notebook/probes/twice/sources-call10.csv).
Each row repeats by gpulab's stopping rule (gpulab.gpu.stats.should_stop), in blocks of BLOCK_REPS,
each block shifted by its own draw of the between-timings spread; against it, one block of 11
repetitions with its order-statistic interval, as rows were timed before blocks. Prints how often
the interval holds the true time, and for pairs of runs how often the second median falls inside the
first's interval, each inside the other's, and the two intervals overlap (docs/timing.md).
Usage: python3 notebook/probes/twice_simulation.py [PAIRS]"""

import sys

import numpy as np

from gpulab.gpu.stats import BLOCK_REPS, median_interval, row_interval, should_stop
from gpulab.gpu.timing import TimingPolicy

BETWEEN, WITHIN = 0.003, 0.003


def blocked(rng) -> tuple[float, tuple[float, float]]:
    policy = TimingPolicy()
    blocks: list[list[float]] = [[]]
    shift = rng.normal(0, BETWEEN)
    while not should_stop(blocks, policy.noise, policy.target_ms, policy.min_reps, policy.max_reps):
        if len(blocks[-1]) >= BLOCK_REPS:
            blocks.append([])
            shift = rng.normal(0, BETWEEN)
        blocks[-1].append(1.0 + shift + rng.normal(0, WITHIN))
    return float(np.median([t for b in blocks for t in b])), row_interval(blocks)


def one_block(rng) -> tuple[float, tuple[float, float]]:
    times = list(1.0 + rng.normal(0, BETWEEN) + rng.normal(0, WITHIN, 11))
    return float(np.median(times)), median_interval(times)


def main() -> None:
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    for name, run in (("blocks", blocked), ("one block of 11", one_block)):
        rng = np.random.default_rng(7)
        held = one_way = mutual = overlap = 0
        for _ in range(pairs):
            (m1, (l1, h1)), (m2, (l2, h2)) = run(rng), run(rng)
            held += l1 <= 1.0 <= h1
            one_way += l1 <= m2 <= h1
            mutual += l1 <= m2 <= h1 and l2 <= m1 <= h2
            overlap += l1 <= h2 and l2 <= h1
        print(f"{name}: the interval holds the true time {held / pairs:.1%}; second median inside the first's "
              f"interval {one_way / pairs:.1%}, each inside the other's {mutual / pairs:.1%}, intervals overlap "
              f"{overlap / pairs:.1%} ({pairs} pairs)")


if __name__ == "__main__":
    main()
