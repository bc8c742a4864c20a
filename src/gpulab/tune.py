"""Tuning: search a variant's params under its constraints, time each config with the lab's own
harness on several shapes, keep every result as it comes (an interrupted tune resumes), and record
the best config per card, which `bench` and `run` then use as the variant's defaults.

Files, per card (results/<gpu>/):
  tune-<experiment>-<variant>.csv   every config x shape tried, with its skip reason if it could not run
  tuned.json                        {experiment: {variant: {"params": {...}, "score_gflops": ..., ...}}}
"""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path
from typing import Callable

from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.records import read_csv, write_atomic, write_csv

TUNED_FILE = "tuned.json"


def search_space(variant: Variant, overrides: dict[str, tuple[int, ...]] | None = None) -> list[Params]:
    """Every combination of the variant's param choices (or the given subsets), in a fixed order."""
    overrides = overrides or {}
    axes = [[(p.name, v) for v in overrides.get(p.name, p.choices)] for p in variant.params]
    return [dict(c) for c in itertools.product(*axes)]


def feasible(variant: Variant, space: list[Params]) -> tuple[list[Params], list[tuple[Params, str]]]:
    """Split the space by the variant's shape-independent constraints: (runnable, [(params, reason)])."""
    ok, rejected = [], []
    for params in space:
        reason = variant.constraints(params, None)
        (rejected.append((params, reason)) if reason else ok.append(params))
    return ok, rejected


def sample(configs: list[Params], limit: int | None, first: Params | None = None, seed: int = 0) -> list[Params]:
    """At most `limit` configs drawn deterministically; `first` (the current default) leads if feasible,
    so a tune always measures what the variant runs today."""
    rest = [c for c in configs if c != first]
    head = [first] if first is not None and first in configs else []
    if limit is not None and len(head) + len(rest) > limit:
        rest = random.Random(seed).sample(rest, max(limit - len(head), 0))
    return head + rest


def tuned_path(folder: Path) -> Path:
    return Path(folder) / TUNED_FILE


def load_tuned(folder: Path) -> dict:
    path = tuned_path(folder)
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise GpulabError(f"{path} is not valid JSON ({exc}); delete it or re-run gpulab tune") from None


def tuned_defaults(experiment: Experiment, folder: Path) -> Callable[[Variant, Shape], Params]:
    """A `defaults` function for lab.plan: the params this card's tune found best for the tuned
    shape nearest the one asked for (by log of the work, M*N*K), else the tune's overall best, else
    the variant's declared defaults. Tuned params no longer accepted by the variant are ignored."""
    table = load_tuned(folder).get(experiment.name, {})

    def accepted(variant: Variant, params: dict | None) -> Params | None:
        if not params:
            return None
        params = {k: int(v) for k, v in params.items()}
        known = {p.name: p for p in variant.params}
        if set(params) == set(known) and all(params[k] in known[k].choices for k in params):
            return params
        return None

    def defaults(variant: Variant, shape: Shape | None = None) -> Params:
        entry = table.get(variant.name) or {}
        by_shape = entry.get("by_shape") or {}
        if shape is not None and by_shape:
            volume = math.log(math.prod(shape.values))
            nearest = min(by_shape, key=lambda label: abs(math.log(math.prod(
                int(x) for x in label.split("x"))) - volume))
            chosen = accepted(variant, by_shape[nearest].get("params"))
            if chosen:
                return chosen
        return accepted(variant, entry.get("params")) or variant.default_params()

    return defaults


def score(rows: list[dict], shapes: list[Shape]) -> float | None:
    """Geometric mean GFLOP/s (or GB/s) over the shapes; None unless every shape ran correctly."""
    rates = []
    for shape in shapes:
        row = next((r for r in rows if r["shape"] == shape.label), None)
        if row is None or not row.get("correct") or not row.get("time_ms"):
            return None
        rates.append(row.get("gflops") or row.get("gbps"))
    return math.exp(sum(math.log(r) for r in rates) / len(rates))


def best_by_shape(rows: list[dict], shapes: list[Shape]) -> dict[str, dict]:
    """For each shape, the fastest config that ran correctly there: {label: {params, rate}}."""
    out = {}
    for shape in shapes:
        ok = [r for r in rows if r["shape"] == shape.label and r.get("correct") and r.get("time_ms")]
        if ok:
            best = min(ok, key=lambda r: r["time_ms"])
            params = dict(item.split("=", 1) for item in str(best.get("params") or "").split())
            out[shape.label] = {"params": {k: int(v) for k, v in params.items()},
                                "rate": best.get("gflops") or best.get("gbps")}
    return out


def write_best(folder: Path, experiment: Experiment, variant: Variant, params: Params, value: float,
               shapes: list[Shape], env: dict, by_shape: dict[str, dict] | None = None) -> None:
    table = load_tuned(folder)
    table.setdefault(experiment.name, {})[variant.name] = {
        "params": params,
        "score": value,
        "score_unit": "GFLOP/s geomean" if experiment.bound == "compute" else "GB/s geomean",
        "shapes": [s.label for s in shapes],
        "by_shape": by_shape or {},
        "gpu": env.get("gpu"), "driver": env.get("driver"), "date": env.get("date"),
    }
    write_atomic(tuned_path(folder), json.dumps(table, indent=2, sort_keys=True) + "\n")


def resume_rows(path: Path) -> list[dict]:
    return read_csv(path) if path.exists() else []


def done_keys(rows: list[dict]) -> set[tuple[str, str]]:
    return {(r.get("params") or "", r["shape"]) for r in rows}


def save_rows(path: Path, rows: list[dict]) -> None:
    write_csv(path, rows)
