"""What a suite's tune and benchmark run, read off the best-row model's ranking (gpulab.jobs.best):
the variants `gpulab tune EXP --suite NAME` tunes at each shape (tune_targets), and those `gpulab
bench --contenders F` times beside the pick (contenders)."""

from __future__ import annotations

from gpulab.experiments.base import Shape
from gpulab.jobs.best import Selector


def tune_targets(chooser: Selector, shapes: list[Shape], top: int = 2) -> dict[str, list[Shape]]:
    """What `gpulab tune EXP --suite NAME` tunes when no variant is named: at each shape the `top`
    variants the model ranks first, and for each variant the shapes where it is among them (its
    tune then records its fastest config at each, so the best row there reads 'tuned here')."""
    out: dict[str, list[Shape]] = {}
    for shape in shapes:
        for est in chooser.ranking(shape)[:top]:
            out.setdefault(est.variant.name, []).append(shape)
    return {v.name: out[v.name] for v in chooser.variants if v.name in out}


def contenders(chooser: Selector, shape: Shape, within: float) -> list[str]:
    """The variants whose best estimate at `shape` is within `within` times the model's best: the
    ones worth timing beside the pick to learn whether it was right."""
    ranked = chooser.ranking(shape)
    if not ranked:
        return []
    return [e.variant.name for e in ranked if e.seconds <= within * ranked[0].seconds]
