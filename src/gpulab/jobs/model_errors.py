"""How far the best-row model holds (gpulab.jobs.best): its calibrated time for each config a
results CSV timed, over the time measured (model_errors), and how far off a set of such ratios is
(error_summary). `gpulab best` prints it under its table against the suites' rows, which the model
never reads; `gpulab.model_error` returns it per file. And how often the model alone picks well
(picks_alone): at each shape a results CSV timed, the pick of a model that knows nothing at or very
near that shape (no tune there, no run), against the rows timed there, as at a shape a user brings;
`gpulab best --suite S --alone` prints it, `gpulab.model_alone` returns it."""

from __future__ import annotations

import dataclasses
import math
import statistics
from pathlib import Path

from gpulab.experiments.base import Experiment, Shape
from gpulab.jobs.best import VERY_NEAR, Pick, Selector
from gpulab.jobs.calibration import Measured, evidence, fastest_per_config, timed_runs, tune_runs
from gpulab.jobs.tune import shape_distance, shape_of

# A pick counts as good within this factor of the fastest row timed at its shape (issue 40's 5%).
PICK_WITHIN = 1.05


def model_errors(chooser: Selector, path: Path) -> dict[str, list[float]]:
    """Per variant, the model's time (calibrated, as the pick weighs it) over the measured one, for
    each config timed correct at each shape of the results CSV at `path` (its fastest time there:
    calibration.timed_runs), where the config still runs the shape. On a suite's rows, which the
    model never reads, this is how well it predicts; on its own experiment's CSV, how well it fits
    what it calibrates on."""
    names = {v.name: v for v in chooser.variants}
    out: dict[str, list[float]] = {}
    for runs in fastest_per_config(timed_runs(chooser.experiment, path)).values():
        for run in runs:
            v, shape = names.get(run.variant), chooser.experiment.shape(*run.shape)
            if v is None or v.constraints(run.params, shape) is not None:
                continue
            est = chooser._estimate(v, run.params, shape, modelled=True)
            if est is not None:
                out.setdefault(v.name, []).append(est.seconds / run.seconds)
    return out


def error_summary(ratios: list[float]) -> dict:
    """How far estimates were off (each ratio: estimate over measured): how many, the typical error
    (the geometric mean of how far each is off, either way; 1.13: 13% on a typical row), and how
    many within 10% and within 25%."""
    off = [max(r, 1 / r) for r in ratios]
    return {"configs": len(ratios), "typical_error": math.exp(statistics.fmean(math.log(o) for o in off)),
            "within_10pct": sum(o <= 1.1 for o in off), "within_25pct": sum(o <= 1.25 for o in off)}


class Unseen:
    """Selectors on the card whose results are in `folder`, each knowing nothing at or very near one
    shape (shape_distance <= VERY_NEAR): the tunes' picks there, the runs timed there and the tunes'
    rows there all left out. What the model would pick at a shape nobody tuned or timed. (A tune's
    overall best, scored over shapes that may include this one, stays: it is what every shape with
    no pick near it runs.)"""

    def __init__(self, experiment: Experiment, folder: Path):
        self.experiment = experiment
        self.folder = Path(folder)
        # What best's selector knows on this card: where the card has timed nothing of the
        # experiment, another card's runs (lent). Read from this card's own files only, a fresh
        # H100 got the bare model, which picked sgemm's v1 and v2 at 128 tokens, 4.3-7.5x slower
        # than the fastest row timed there (2026-12-06).
        self.known = evidence(experiment, self.folder)

    def selector(self, shape: Shape) -> Selector:
        def far(values) -> bool:
            return shape_distance(shape, values) > VERY_NEAR

        def runs(found: list[Measured]) -> list[Measured]:
            return [r for r in found if far(r.shape)]

        def tunes(known: dict) -> dict:
            table = {}
            for name, entry in known.items():
                if isinstance(entry, dict) and entry.get("by_shape"):
                    entry = entry | {"by_shape": {label: b for label, b in entry["by_shape"].items()
                                                  if far(shape_of(label))}}
                table[name] = entry
            return table

        unseen = dataclasses.replace(self.known, table=tunes(self.known.table), runs=runs(self.known.runs),
                                     tune_rows=runs(self.known.tune_rows),
                                     lent_table=tunes(self.known.lent_table))
        return Selector.from_evidence(self.experiment, unseen)

    def pick(self, shape: Shape) -> Pick | None:
        """The model alone's pick at `shape`: what gpulab.jobs.best picks knowing nothing near it."""
        return self.selector(shape).pick(shape)


def picks_alone(experiment: Experiment, folder: Path, path: Path) -> dict:
    """At each shape of the results CSV at `path`, the pick of the model alone (Unseen: nothing at or
    very near the shape) against the rows the card timed there (their fastest per config): that
    file's, and its tunes' at the file's shapes (`gpulab tune --suite` times many configs a suite's
    benchmark does not: they time more picks, and raise the bar). A pick counts as
    good only where its own config was timed there and came within PICK_WITHIN of the fastest. A
    pick whose config was not timed there is not counted either way (`untimed`, with its variant's
    fastest there as a hint): judging it by that had counted 15 of the H200's 40 llm shapes good,
    and timed in their own configs (2026-12-06), 12 of 19 such picks ran 5-32% slower than the fastest.
    Returns {shapes, within_5pct, timed, misses: [text], untimed: [text]}."""
    unseen = Unseen(experiment, folder)
    timed: dict[tuple, dict[tuple[str, str], float]] = {}  # shape -> (variant, params label) -> seconds
    names = {v.name: v for v in experiment.variants if not v.expected_wrong}  # no planted kernel is a rival
    suite = timed_runs(experiment, path)
    shapes = {run.shape for run in suite}
    tuned_there = [run for run in tune_runs(experiment, unseen.folder) if run.shape in shapes]
    for (name, _), runs in fastest_per_config(suite + tuned_there).items():
        for run in runs if name in names else ():
            timed.setdefault(run.shape, {})[(name, names[name].params_label(run.params))] = run.seconds
    within = timed_picks = 0
    misses, untimed = [], []
    for values, times in timed.items():
        shape = experiment.shape(*values)
        pick = unseen.pick(shape)
        if pick is None:
            misses.append(f"{shape.label}: no pick")
            continue
        fastest = min(times.values())
        key = (pick.variant.name, pick.variant.params_label(pick.params))
        if key in times:
            timed_picks += 1
            ratio = times[key] / fastest
            within += ratio <= PICK_WITHIN
            if ratio > PICK_WITHIN:
                misses.append(f"{shape.label} {pick.variant.name} {ratio:.2f}x")
        else:
            mine = [t for (v, _), t in times.items() if v == key[0]]
            hint = f" (its variant's fastest there {min(mine) / fastest:.2f}x)" if mine else ""
            untimed.append(f"{shape.label} {key[0]} {key[1]}{hint}")
    return {"shapes": len(timed), "within_5pct": within, "timed": timed_picks, "misses": misses, "untimed": untimed}
