"""How far the best-row model's times hold (gpulab.jobs.best): its calibrated time for each config a
results CSV timed, over the time measured (model_errors), and how far off a set of such ratios is
(error_summary). `gpulab best` prints it under its table against the suites' rows, which the model
never reads; `gpulab.model_error` returns it per file."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from gpulab.jobs.best import Selector
from gpulab.jobs.calibration import fastest_per_config, timed_runs


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
