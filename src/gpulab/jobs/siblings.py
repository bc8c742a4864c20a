"""What the access model cannot see of a config it declines, read off the card's runs of such configs
beside their siblings (gpulab.jobs.best).

Where the access model declines a config (t4's stream-K, SCHEDULE=1: its flags are polled, so its
loads depend on timing), the best-row model takes the bytes of a sibling it does model, one param
changed (SCHEDULE=0), and with them the sibling's blind spots: t4's stream-K came out modelled with
the sibling's traffic and a perfectly even share of the tiles, and ran 1.23x the time of SCHEDULE=0
at 4096x3072x1024 on an H100 (2026-12-06, call 62), where its hand-over and fixup of partial tiles
(about 12,000 cycles a unit on the H200's trace, docs/notes/gemm_bf16-notes.md) weigh on 16 k-tiles.
The card's runs show what the model misses: at a shape where a config with the declined value ran
beside its sibling (every other param the same), the time it took over what the sibling's time and
the two models predict for it.
"""

from __future__ import annotations

import statistics
from typing import Callable

from gpulab.jobs.calibration import Measured
from gpulab.jobs.tune import shape_distance

# The shapes nearest the asked one whose pairs are read (the efficiency's CALIBRATION_ROWS, likewise).
PAIR_SHAPES = 3


def unseen_seconds(name: str, value: int, sibling_value: int, near: tuple[int, ...], shapes,
                   runs_at: Callable[[tuple[int, ...]], list[Measured]],
                   model_s: Callable[[Measured], float | None]) -> tuple[float, str] | None:
    """The time a config with `name` = `value` takes beyond what its sibling (`name` = `sibling_value`)
    predicts for it: over the PAIR_SHAPES of `shapes` nearest `near` (shape_distance) where both ran
    (`runs_at(shape)`: each config's fastest run there), the median over those shapes of each one's
    median of t - t_sibling x m / m_sibling, m each run's bare model time (`model_s`), and where
    from; at least 0 (the sibling's bytes and an even share are the least the config can do). None
    where no such pair ran. A shape one vote, however many pairs ran there: pooled, the 15 pairs of
    t4's stream-K at 4097^3, whose ragged tiles make it 4-25 us faster than its whole tiles predict,
    outvoted the 4 at 1024x8192x8192 (9-16 us slower) and put 8.45 us on it at 1024x6144x4096, where
    it ran 11-17 us over (H200); a median of the shapes' medians there is 13.3."""
    extras, used = [], []
    for shape in sorted(shapes, key=lambda s: (round(shape_distance(near, s), 9), s)):
        runs = runs_at(shape)
        by_params = {tuple(sorted(r.params.items())): r for r in runs}
        found = []
        for run in runs:
            if run.params.get(name) != value:
                continue
            sibling = by_params.get(tuple(sorted((run.params | {name: sibling_value}).items())))
            if sibling is not None and (mine := model_s(run)) and (theirs := model_s(sibling)):
                found.append(run.seconds - sibling.seconds * mine / theirs)
        if found:
            extras.append(statistics.median(found))
            used.append("x".join(map(str, shape)))
            if len(used) == PAIR_SHAPES:
                break
    if not extras:
        return None
    extra = max(0.0, statistics.median(extras))
    return extra, (f"+{extra * 1e6:.3g} us that {name}={value} took beside {name}={sibling_value} "
                   f"(at {', '.join(used)})")
