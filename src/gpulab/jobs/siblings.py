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
the two models predict for it, where the declined config there was modelled as it is at the asked
shape (pairs_alike): on its named sibling's own bytes, and sharing tiles over a persistent grid
exactly where it does here.
"""

from __future__ import annotations

import statistics
from typing import Callable

from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.jobs.calibration import Measured
from gpulab.jobs.cost import work_units
from gpulab.jobs.tune import shape_distance

# The shapes nearest the asked one whose pairs are read (the efficiency's CALIBRATION_ROWS, likewise).
PAIR_SHAPES = 3


def unseen_seconds(name: str, value: int, sibling_value: int, near: tuple[int, ...], shapes,
                   runs_at: Callable[[tuple[int, ...]], list[Measured]],
                   model_s: Callable[[Measured], float | None],
                   alike: Callable[[Measured], bool] = lambda run: True) -> tuple[float, str] | None:
    """The time a config with `name` = `value` takes beyond what its sibling (`name` = `sibling_value`)
    predicts for it: over the PAIR_SHAPES of `shapes` nearest `near` (shape_distance) where both ran
    (`runs_at(shape)`: each config's fastest run there), the median of t - t_sibling x m / m_sibling,
    m each run's bare model time (`model_s`), over the declined config's runs modelled as the asked
    one is (`alike`: pairs_alike), and where from; at least 0 (the sibling's
    bytes and an even share are the least the config can do). None where no such pair ran."""
    extras, used = [], []
    for shape in sorted(shapes, key=lambda s: (round(shape_distance(near, s), 9), s)):
        runs = runs_at(shape)
        by_params = {tuple(sorted(r.params.items())): r for r in runs}
        found = []
        for run in runs:
            if run.params.get(name) != value or not alike(run):
                continue
            sibling = by_params.get(tuple(sorted((run.params | {name: sibling_value}).items())))
            if sibling is not None and (mine := model_s(run)) and (theirs := model_s(sibling)):
                found.append(run.seconds - sibling.seconds * mine / theirs)
        if found:
            extras += found
            used.append("x".join(map(str, shape)))
            if len(used) == PAIR_SHAPES:
                break
    if not extras:
        return None
    extra = max(0.0, statistics.median(extras))
    return extra, (f"+{extra * 1e6:.3g} us that {name}={value} took beside {name}={sibling_value} "
                   f"(at {', '.join(used)})")


def persistent_grid(v: Variant, params: Params, shape: Shape) -> bool:
    """Whether the config's launch loops its blocks over the tiles at `shape` (fewer blocks than tiles)."""
    units = work_units(v, params, shape)
    return units is not None and units[0] < units[1]


def pairs_alike(experiment: Experiment, v: Variant, params: Params, shape: Shape, sibling: Params,
                stand_in: Callable[[Variant, Params, Shape, int], Params | None]) -> Callable[[Measured], bool]:
    """Which runs of the declined config speak for it at `shape` (unseen_seconds' `alike`): those
    modelled on the bytes of their `sibling` (the one param's other value) itself, which `stand_in`
    (Selector._traffic_or_sibling's sibling) says, and in a persistent grid exactly where this launch
    is one. Where the sibling too was beyond the access model, both borrowed other bytes and the pair
    measured what that misses: at 4097^3 (SCHEDULE=0 too large to evaluate) t4's stream-K came out
    -26 to +6 us beside it, which pulled the median at 1024x6144x4096 to +8.45 us, where the pair there
    took +12.8. Where every tile has its own block, stream-K shares no tile: +0.3 to +0.7 us beside
    SCHEDULE=0 (1000x3000x776 and 777, 2048^3 in 256-wide tiles), against +6.5 to +17.5 where tiles
    were shared (2048^3 to 4096^3). Over 168 pairs on the H200, each modelled with nothing near its
    shape known, the modelled SCHEDULE=1 over SCHEDULE=0 against the measured ratio went from 1.14x
    off typically to 1.04x (1.23x to 1.02x where the tiles had their own blocks; 2026-12-06)."""
    here = persistent_grid(v, params, shape)

    def alike(run: Measured) -> bool:
        there = experiment.shape(*run.shape)
        units = work_units(v, run.params, there)
        return (units is not None and (units[0] < units[1]) == here
                and stand_in(v, run.params, there, units[1]) == run.params | sibling)
    return alike
