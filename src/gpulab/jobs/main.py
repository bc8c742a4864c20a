"""`gpulab run`, the main job, in two sizes.

The tour (the default, about two minutes on an H200): each experiment's ladder at one
representative shape (Experiment.tour_shape), every variant at its tuned or default params with its
declared sweep (the memory experiments' strides and widths, v1's tile sizes), beside the vendor
library and gpulab's best row. `full`: every variant's sweep at every
default shape, the whole grid the result pages are made from.

A suite (`suite`, gpulab.experiments.suites): each experiment the suite is for, at the suite's shapes,
every variant at its tuned or default params with its sweep; its rows (with the suite's columns)
join results/<gpu>/<experiment>-<suite>.csv.

Each experiment's rows join results/<gpu>/<experiment>.csv as they finish (gpulab.jobs.bench), and
results/<gpu>/run-summary.csv gets one row per experiment: its best row at the tour shape, how far
it is from the ceiling that binds and from the vendor library, and the wall seconds it took.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.jobs.bench import bench_plan, best_picks, ensure_ceilings, row_columns, sweep_specs
from gpulab.jobs.best import selector
from gpulab.quantities import SANITIZED, may_be_best
from gpulab.records import Records, card_folder, did_not_finish, upsert
from gpulab.run.lab import LabOptions
from gpulab.run.precompile import precompiled
from gpulab.run.progress import QUIET, Progress
from gpulab.run.worker import open_lab

SUMMARY_FILE = "run-summary.csv"
SUMMARY_KEY = ("experiment", "mode")


@dataclasses.dataclass
class MainRun:
    """What `gpulab run` did: each experiment's rows (by name), the summary (one row each, also in
    results/<gpu>/run-summary.csv) and the lab that ran them (gpulab.run.worker.unfinished_line)."""

    by_experiment: dict[str, Records]
    summary: Records
    lab: object


def shapes_of(exp, full: bool) -> list:
    return exp.default_shape_list() if full else [exp.shape(*exp.tour_shape)]


def suite_experiments(experiments: list, suite, named: bool) -> list:
    """The experiments a suite run covers: those named (each must be one the suite is for), or
    of all, those it is for."""
    if named:
        if wrong := [e.name for e in experiments if not suite.is_for(e)]:
            raise GpulabError(f"suite {suite.name} is for {', '.join(suite.experiments)}, not {', '.join(wrong)}")
        return experiments
    chosen = [e for e in experiments if suite.is_for(e) and (suite.experiments or _gives_dims(suite, e))]
    if not chosen:
        raise GpulabError(f"suite {suite.name} ({suite.path}) is for no experiment gpulab has")
    return chosen


def _gives_dims(suite, exp) -> bool:
    """Whether every entry of a suite that names no experiments gives `exp`'s dimensions."""
    return all(set(entry.dims) == set(exp.dims) for entry in suite.entries)


def main_run(experiments: list, full: bool = False, out_dir: str | Path | None = None,
             progress: Progress = QUIET, suite=None) -> MainRun:
    """Run `experiments` (Experiment objects) as the tour or, with `full`, the whole grid, or with
    `suite` (a gpulab.experiments.suites.Suite) at its shapes."""
    shapes, by_shape = {}, {}
    for exp in experiments:  # a bad suite file is refused before the GPU is touched
        if suite is not None:
            found = suite.shapes(exp)
            shapes[exp.name], by_shape[exp.name] = [s.shape for s in found], {s.shape.label: s.columns for s in found}
        else:
            shapes[exp.name] = shapes_of(exp, full)
    lab = open_lab(LabOptions())
    folder = Path(out_dir) if out_dir else card_folder(lab.device.slug)
    ensure_ceilings(lab.device, folder, progress)
    plans, columns = {}, {}
    for exp in experiments:
        picks = best_picks(selector(exp, folder), shapes[exp.name], progress)
        specs = bench_plan(exp, None, {}, shapes[exp.name], folder, with_best=True, picks=picks)
        lab.preflight(specs)
        plans[exp.name], columns[exp.name] = specs, row_columns(picks, by_shape.get(exp.name))
    mode = f"suite {suite.name}" if suite is not None else "full" if full else "tour"
    by_experiment, summary = {}, Records()
    every = [s for specs in plans.values() for s in specs]
    with precompiled(every, lab.arch):
        for exp in experiments:
            start = time.perf_counter()
            path = folder / (suite.csv_name(exp.name) if suite is not None else f"{exp.name}.csv")
            records = sweep_specs(exp, lab, plans[exp.name], folder, path, progress, columns=columns[exp.name])
            by_experiment[exp.name] = records
            summary.append(summary_row(exp, records, mode, time.perf_counter() - start) | lab.env)
    summary.path = folder / SUMMARY_FILE
    upsert(summary.path, list(summary), key=lambda r: tuple(str(r.get(k)) for k in SUMMARY_KEY))
    return MainRun(by_experiment, summary, lab)


def summary_row(exp, records: list[dict], mode: str, wall_s: float) -> dict:
    """One experiment's line of the summary: its fastest correct row of gpulab's own at the tour
    shape (or, where the tour shape was not run, the last shape) that the sanitizer gate did not
    refuse (gpulab.jobs.clean), against the ceiling that binds it and the vendor library."""
    libraries = set(exp.vendor_baselines())
    tour = exp.shape(*exp.tour_shape).label
    shapes = [r["shape"] for r in records]
    shape = tour if tour in shapes else (shapes[-1] if shapes else "")
    timed = [r for r in records if r.get("shape") == shape and r.get("time_ms") and r.get("correct")
             and not r.get("expected_wrong") and r.get("variant") not in libraries]
    own = [r for r in timed if may_be_best(r)]
    # A run that faulted, hung or gave a wrong answer failed; one its constraints skipped did not.
    failed = [r for r in records if did_not_finish(r) or (r.get("correct") is False and not r.get("expected_wrong"))]
    row = {"experiment": exp.name, "mode": mode, "shape": shape, "runs": len(records),
           "runs_timed": sum(1 for r in records if r.get("time_ms")), "runs_failed": len(failed),
           "wall_s": round(wall_s, 2)}
    if not own:  # where the gate refused every timed row, the fastest one's verdict says why
        refused = sorted(timed, key=lambda r: r["time_ms"])
        return row | ({"best_variant": "", SANITIZED: refused[0][SANITIZED]} if refused else {})
    best = min(own, key=lambda r: r["time_ms"])
    rate = "gflops" if best.get("gflops") else "gbps"
    variant = best.get("picked") or best["variant"]
    return row | {"best_variant": str(variant).split(" (")[0], "best_params": best.get("params", ""),
                  "time_ms": best["time_ms"], rate: best.get(rate), "ceiling": best.get("ceiling", ""),
                  "pct_of_ceiling": best.get("pct_of_ceiling"), "pct_of_copy": best.get("pct_of_copy"),
                  "vendor": ", ".join(sorted(libraries)), "pct_of_vendor": best.get("pct_of_cublas"),
                  SANITIZED: best.get(SANITIZED, "")}
