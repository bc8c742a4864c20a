"""The configs the best-row model weighs beside its seeds (gpulab.jobs.best, rule 2): each seed's
one-param moves that change its grid or its padded work, a move its constraints refuse repaired by
a second param where one can."""

from __future__ import annotations

from typing import Callable

from gpulab.experiments.base import Params, Shape, Variant
from gpulab.jobs.cost import grid_blocks, work_units


def one_param_moves(v: Variant, seeds: list[Params], shape: Shape, runnable: Callable[[Params | None], bool],
                    around: int = 2) -> list[Params]:
    """Every config one param away from one of the first `around` seeds (repaired where `runnable`
    refuses it) whose grid or padded work at `shape` differs from its seed's, or that moves a param
    sizing its tile (Variant.tile_params), none of them a seed, in order. ks's persistent grid is the
    same whatever its TN: without the second, no TN but those tuned somewhere was weighed, and at
    32x3584x18944 (32 tokens) it was not TN = 32, which ran fastest there on an H100 (2026-12-06)."""
    moves: list[Params] = []
    for seed in seeds[:around]:
        grid = grid_blocks(v, seed, shape), work_units(v, seed, shape)
        # The blocks an SM runs at once (v13's RESIDENT) are the compiled kernel's registers' to
        # say, not the shape's: a move of it plans the grid for waves the card does not run. v13
        # planned for 1 where 3 fit ran 1.69x the time of its plan for 3 at 128x10240x8192, and
        # the model, which cannot see registers, put it ahead (H200, 2026-12-04).
        for p in (p for p in v.params if p.name != v.resident_param):
            for value in p.choices:
                if value == seed[p.name]:
                    continue
                moved = repaired(v, seed | {p.name: value}, p.name, seed, runnable)
                if moved is None or moved in seeds or moved in moves:
                    continue
                if p.name in v.tile_params or (grid_blocks(v, moved, shape), work_units(v, moved, shape)) != grid:
                    moves.append(moved)
    return moves


def repaired(v: Variant, moved: Params, changed: str, seed: Params,
             runnable: Callable[[Params | None], bool]) -> Params | None:
    """`moved`, or where its constraints refuse it, the first single other param changed to make it
    runnable (sk's BM=1 needs TM=1), or None."""
    if runnable(moved):
        return moved
    for q in v.params:
        if q.name == changed:
            continue
        for value in q.choices:
            if value != seed[q.name] and runnable(fixed := moved | {q.name: value}):
                return fixed
    return None
