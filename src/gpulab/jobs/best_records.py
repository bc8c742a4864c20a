"""`gpulab best`'s rows (gpulab.jobs.best): the pick at one shape as a record (pick_record) and, with
--ranking, what the model weighed there (ranking_records), with whether the card timed each config
(timed_where), and the variants it left out and why (not_weighed_records)."""

from __future__ import annotations

from typing import Any

from gpulab.experiments.base import Experiment, Shape
from gpulab.jobs.best import MEASURED_HERE, Selector
from gpulab.jobs.cost import Estimate


def timed_where(chooser: Selector, estimate: Estimate) -> str:
    """Whether the card timed the estimate's config: 'at this shape' (or very near it: its own
    efficiency there), 'on this card' (at other shapes of the same kind, compute- or memory-bound),
    'other kind only' (timed, but only on the other kind of shape: no evidence here,
    Selector.timed_alike), or 'never' (its efficiency its variant's). Where the card's runs are
    lent, the first two name the card that timed it ('at this shape on h200', 'on h200')."""
    lent = f" on {chooser.runs_from}" if chooser.runs_from else ""
    if estimate.efficiency_from.startswith(MEASURED_HERE):
        return "at this shape" + lent
    if chooser.timed_alike(estimate):
        return lent.strip() or "on this card"
    return "other kind only" if chooser.timed_somewhere(estimate) else "never"


def ranking_records(experiment: Experiment, chooser: Selector, shape: Shape, columns: dict[str, Any]) -> list[dict]:
    """`gpulab best --ranking`'s rows for one shape: each variant's best config the model weighed
    there (Selector.ranking), in the model's order (by time, a config timed there first within
    MEASURED_EDGE: prefer_measured): its modelled time and over the fastest modelled, what binds it,
    its efficiency and where from, whether the card timed that config, and whether it is the best
    row's pick (a config tuned there is picked whatever the model's order: rule 1)."""
    ranked = chooser.ranking(shape)
    chosen = chooser.pick(shape)
    def is_pick(est: Estimate) -> bool:
        return chosen is not None and (chosen.variant.name, chosen.params) == (est.variant.name, est.params)
    if chosen is not None and not any(is_pick(est) for est in ranked):  # a tuned config its variant's model ranks lower
        mine = chooser._estimate(chosen.variant, chosen.params, shape, modelled=True)
        if mine is not None:  # placed by its time, the model's order of the others kept
            at = next((i for i, est in enumerate(ranked) if i and est.order > mine.order), len(ranked))
            ranked = ranked[:at] + [mine] + ranked[at:]
    fastest = min(est.seconds for est in ranked) if ranked else 1.0
    rows = []
    for rank, est in enumerate(ranked, 1):
        picked = is_pick(est)
        rows.append({"experiment": experiment.name, **shape.as_record(), **columns, "rank": rank,
                     "variant": est.variant.name, "params": est.variant.params_label(est.params),
                     "model_ms": est.seconds * 1e3, "vs_fastest": est.seconds / fastest,
                     "bound": est.bound, "efficiency": est.efficiency, "efficiency_from": est.efficiency_from,
                     "timed": timed_where(chooser, est), "picked": picked})
    return rows


def pick_record(experiment: Experiment, chooser: Selector, shape: Shape, columns: dict[str, Any]) -> dict:
    """gpulab best's row for one shape: the pick (variant, params, chosen_by, the model's time) or
    why there is none."""
    chosen = chooser.pick(shape)
    row = {"experiment": experiment.name, **shape.as_record(), **columns}
    if chosen is None:
        return row | {"variant": "", "params": "", "chosen_by": chooser.why_none(shape)}
    est = chosen.estimate
    return row | {"variant": chosen.variant.name, "params": chosen.variant.params_label(chosen.params),
                  "chosen_by": chosen.why, **({"model_ms": est.seconds * 1e3} if est else {})}


def not_weighed_records(experiment: Experiment, chooser: Selector, shape: Shape, columns: dict[str, Any]) -> list[dict]:
    """`gpulab best --ranking`'s variants left out at one shape, each with why (Selector.refusal: the
    card's architecture, the variant's best_refusal, every config refused): the rows a user looks
    for when a kernel they know is missing from the ranking."""
    return [{"experiment": experiment.name, **shape.as_record(), **columns, "variant": v.name, "why": why}
            for v in chooser.variants if (why := chooser.refusal(v, shape))]
