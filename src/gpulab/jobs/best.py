"""gpulab's best kernel for a shape: which variant and params to run, read from this card's tune.

`gpulab bench` (and gpulab.api.bench) adds a `best` row per shape, checked and timed like every other
row; `gpulab.api.best` says what it would run. The rule, in full:

1. Candidates: every (variant, tuned shape) of the experiment in results/<gpu>/tuned.json, from each
   variant's `by_shape` (the fastest config a tune found at that shape, with its rate). Any tuned
   variant counts, whatever its name; one the experiment no longer has, or whose params it no
   longer accepts or whose constraints refuse the asked shape, is left out.
2. Distance between the asked shape s and a tuned shape t: sum over dimensions of |log2(s_d / t_d)|
   (so 4096x64x4096 is 1 from 4096x32x4096 but 6 from 4096^3: the shape's class counts, not only its
   volume).
3. The nearest tuned shape wins if it is within NEAR (4: a factor of 16 spread over the dimensions,
   e.g. 4x along two of them); among candidates at the same distance (several variants tuned at
   that shape), the one with the highest tuned rate.
4. Else (nothing tuned, or nothing near): the experiment's own default for the shape
   (`Experiment.best_default`); an experiment that declares none gets no best row there (its last
   variant need not be its fastest: coalesce's is a demonstration of strided access).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.jobs.tune import NEAR, accepted_params, load_tuned, nearness, shape_distance, shape_of


@dataclasses.dataclass(frozen=True)
class Pick:
    """What the best row runs at a shape, and why: `why` names the tuned shape it came from or the
    default it fell back to."""

    variant: Variant
    params: Params
    why: str

    @property
    def label(self) -> str:
        """'sk (tuned at 1x8192x8192)': the `picked` column of the row (gpulab.records.variant_ran reads
        the variant back from it)."""
        return f"{self.variant.name} ({self.why})"


def candidates(experiment: Experiment, table: dict, shape: Shape) -> list[tuple[float, float, Variant, Params, str]]:
    """(distance, rate, variant, params, tuned shape label) of every usable tuned entry."""
    names = {v.name: v for v in experiment.variants if not v.expected_wrong}
    out = []
    for name, entry in (table or {}).items():
        variant = names.get(name)
        if variant is None or not isinstance(entry, dict):
            continue
        for label, best in (entry.get("by_shape") or {}).items():
            params = accepted_params(variant, (best or {}).get("params"))
            tuned = shape_of(label)
            if params is None or len(tuned) != len(shape.values) or variant.constraints(params, shape):
                continue
            out.append((shape_distance(shape, tuned), float(best.get("rate") or 0.0), variant, params, label))
    return out


def pick(experiment: Experiment, table: dict, shape: Shape) -> Pick | None:
    """The best row's variant and params at `shape`, from `table` (tuned.json's entry for the
    experiment: {variant: {"by_shape": {shape: {"params", "rate"}}}}), by the rule above; None
    where nothing is tuned near and the experiment declares no default."""
    found = [c for c in candidates(experiment, table, shape) if c[0] <= NEAR]
    if found:
        dist, _, variant, params, label = min(found, key=lambda c: nearness(shape, c[4], c[1]))
        return Pick(variant, params, f"tuned at {label}")
    return fallback(experiment, shape)


def fallback(experiment: Experiment, shape: Shape) -> Pick | None:
    """The experiment's own default for the shape, or None."""
    chosen = experiment.best_default(shape)
    if chosen is None:
        return None
    name, params, why = chosen
    return Pick(experiment.variant(name), params, why)


def picker(experiment: Experiment, folder: Path | None):
    """pick() bound to the card's tuned.json in `folder` (read once; None: nothing tuned): shape -> Pick or None."""
    table = load_tuned(folder).get(experiment.name, {}) if folder is not None else {}
    return lambda shape: pick(experiment, table, shape)
