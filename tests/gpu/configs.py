"""The configs a GPU test of an experiment's variants covers: each variant's declared config (its
whole sweep where it declares one), plus every config a tune recorded for any card under results/
(tuned.json, the overall pick and each shape's): bench, run and the best row use those by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulab.jobs.tune import accepted_params, load_tuned

ROOT = Path(__file__).resolve().parents[2]


def declared_and_tuned(experiment):
    """pytest params (variant, params), one per distinct config, with ids VARIANT-NAME=V-..."""
    seen = set()
    for v in experiment.variants:
        grid = v.param_grid({p.name: p.choices for p in v.params if p.name in v.sweep}) if v.sweep \
            else [v.default_params()]
        for folder in sorted((ROOT / "results").glob("*")):
            entry = load_tuned(folder).get(experiment.name, {}).get(v.name, {})
            tuned = [entry.get("params")] + [e["params"] for e in entry.get("by_shape", {}).values()]
            # as the lab reads them (tune.accepted_params): a param added since the tune takes its default
            grid += [chosen for t in tuned if t and (chosen := accepted_params(v, t))]
        for params in grid:
            label = v.params_label(params)
            if (v.name, label) not in seen:
                seen.add((v.name, label))
                yield pytest.param(v, params, id=f"{v.name}-{label.replace(' ', '-')}")
