"""A search strategy replayed against a tune already recorded: with a fraction of the evaluations,
how near does it come to the best config the recorded tune found?

Nothing is timed. The objective of a config is the rate the card measured for it, read from the
tune's CSV (results/<gpu>/tune-<experiment>-<variant>.csv, each row dated); a config whose row says
it could not run (it spilled, failed its check) is an evaluation that scores nothing, as it is in
a real tune; a config the variant's constraints reject today is never asked. The search runs
through the tune's own plan (TunePlan.batches and .tell: the same batches, the same budget count,
the same telling), its choices limited to the configs the CSV holds at every asked shape: the
product of the values those configs span, with the unrecorded combinations treated as infeasible.
So the answer is only as wide as the recorded tune: a search that would have gone outside it is
pulled back to the nearest recorded config.

The recorded config the variant runs today is not put first, unlike a real tune: the defaults were
chosen from these same recordings, so leading with them would hand the search its answer.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path
from typing import NamedTuple

from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.jobs.search import Budget, BayesSearch, listed, startup_trials
from gpulab.jobs.tune import TunePlan, feasible, score
from gpulab.params import parse_params_label
from gpulab.records import RUN_KEY, read_csv

REPLAYED = ("random", "bayes")


@dataclasses.dataclass
class Recorded:
    """A recorded tune as an objective: each config recorded at every shape, its score over them
    (GFLOP/s or GB/s, a geometric mean; None where it could not run), and the rows behind it."""

    experiment: Experiment
    variant: Variant
    shapes: list[Shape]
    configs: list[Params]  # in the product's order
    scores: dict[str, float | None]  # by params label
    rows: dict[str, list[dict]]  # by params label, relabelled as the variant takes them today
    dates: tuple[str, str]  # the first and last date among the rows

    @property
    def axes(self) -> dict[str, tuple[int, ...]]:
        """Each param's values among the recorded configs, in the variant's order of choices."""
        return {p.name: tuple(c for c in p.choices if any(cfg[p.name] == c for cfg in self.configs))
                for p in self.variant.params}

    @property
    def best(self) -> float:
        return max(v for v in self.scores.values() if v is not None)


class TuneFile(NamedTuple):
    """A tune's CSV, read: its path, the experiment and variant it holds, its rows."""

    path: Path
    experiment: Experiment
    variant: Variant
    rows: list[dict]


def tuned_variant(path: Path | str) -> TuneFile:
    """The tune a CSV holds, read and checked: a file of several variants (a bench's) or none is
    refused."""
    rows = read_csv(Path(path), required=RUN_KEY)
    if not rows:
        raise GpulabError(f"{path} holds no rows")
    runs = sorted({(r["experiment"], r["variant"]) for r in rows})
    if len(runs) > 1:  # a bench's file: its rates are of other variants and the vendor library
        raise GpulabError(f"{path} holds the runs of {len(runs)} variants ({', '.join(' '.join(r) for r in runs[:4])}"
                          f"{', ...' if len(runs) > 4 else ''}); a replay reads one variant's tune: the "
                          f"results/<gpu>/tune-<experiment>-<variant>.csv that gpulab tune wrote")
    exp = get_experiment(runs[0][0])
    return TuneFile(Path(path), exp, exp.variant(runs[0][1]), rows)


def recorded(source: Path | str | TuneFile, shapes: list[Shape | str]) -> Recorded:
    """The tune recorded in `source` (a CSV's path, or the file tuned_variant read) at `shapes`
    (Shapes, or labels such as '4096x4096x4096'). Rows are read as the variant takes its params
    today (Variant.completed_params: a param added since the row was timed at its default); where a
    config was timed more than once at a shape, the latest row."""
    path, exp, v, rows = source if isinstance(source, TuneFile) else tuned_variant(source)
    wanted = [s if isinstance(s, Shape) else exp.parse_shape(str(s)) for s in shapes]
    shapes = [s.label for s in wanted]
    if not wanted:
        raise GpulabError("name the shapes to replay at, e.g. --shape 4096x4096x4096")
    latest: dict[tuple[str, str], dict] = {}
    for r in rows:
        try:
            params = v.completed_params(parse_params_label(r.get("params")))
        except ValueError as e:
            raise GpulabError(f"{path}: a row's params {r.get('params')!r} cannot be read ({e})") from None
        if params is None or r["shape"] not in {s.label for s in wanted}:
            continue
        key = (v.params_label(params), r["shape"])
        if key not in latest or str(r.get("date") or "") >= str(latest[key].get("date") or ""):
            latest[key] = r | {"params": key[0]}
    if any(r.get("correct") and r.get("time_ms") and not (r.get("gflops") or r.get("gbps")) for r in latest.values()):
        raise GpulabError(f"{path}: a timed row has no gflops or gbps, the rate a replay scores configs by: "
                          f"give the CSV gpulab tune wrote")
    by_label: dict[str, list[dict]] = {}
    for (label, _), r in latest.items():
        by_label.setdefault(label, []).append(r)
    complete = [parse_params_label(label) for label, rs in by_label.items() if len(rs) == len(wanted)]
    ok, _ = feasible(v, complete)
    if not ok:
        raise GpulabError(f"{path} holds no config of {v.name} timed at every one of {', '.join(shapes)}; "
                          f"its shapes: {', '.join(sorted({r['shape'] for r in rows}))}")
    order = {p.name: p.choices for p in v.params}
    ok.sort(key=lambda p: tuple(order[n].index(p[n]) for n in order))
    labels = [v.params_label(p) for p in ok]
    dates = sorted(str(r["date"]) for label in labels for r in by_label[label] if r.get("date"))
    scores = {label: score(by_label[label], wanted) for label in labels}
    if all(v is None for v in scores.values()):
        raise GpulabError(f"{path}: no config ran correctly at every one of {', '.join(shapes)}: nothing to replay")
    return Recorded(exp, v, wanted, ok, scores,
                    {label: by_label[label] for label in labels}, (dates[0][:10], dates[-1][:10]) if dates else ("", ""))


@dataclasses.dataclass
class Replayed:
    strategy: str
    seed: int
    evaluations: int
    asked: list[Params]  # in the order the search asked for them
    found: float  # the best score among them (0 where none could run)
    best: float  # the recorded tune's best

    @property
    def ratio(self) -> float:
        return self.found / self.best


def replay(rec: Recorded, strategy: str, evaluations: int, seed: int) -> Replayed:
    """One search over the recorded configs, `evaluations` of them at most, asked one at a time (as
    one GPU would time them), each told its recorded score."""
    if strategy not in REPLAYED:
        raise GpulabError(f"a replay compares {' or '.join(REPLAYED)}; got {strategy!r}")
    if not 1 <= evaluations <= len(rec.configs):
        raise GpulabError(f"evaluations must be 1 to the {len(rec.configs)} configs recorded; got {evaluations}")
    budget = Budget(configs=evaluations)
    if strategy == "bayes":
        configs, search = [], BayesSearch(rec.axes, rec.configs, seed, None, startup_trials(budget))
    else:
        configs, search = listed(strategy, rec.configs, budget, None, seed), None
    plan = TunePlan(rec.experiment, rec.variant, rec.shapes, None, Path("."), {}, len(rec.configs), configs, [],
                    search=search, budget=budget, strategy=strategy)
    for batch in plan.batches():
        plan.rows += [r for p in batch for r in rec.rows[rec.variant.params_label(p)]]
        plan.tell(batch)
    found = [rec.scores[rec.variant.params_label(p)] for p in plan.configs]
    return Replayed(strategy, seed, len(plan.configs), list(plan.configs),
                    max((f for f in found if f is not None), default=0.0), rec.best)


def replay_seeds(rec: Recorded, strategies, evaluations: int, seeds: int) -> list[Replayed]:
    """replay() for each strategy and each random-number generator start from 0 to seeds - 1."""
    return [replay(rec, s, evaluations, seed) for s, seed in itertools.product(strategies, range(seeds))]


def quarter(rec: Recorded) -> int:
    """A quarter of the recorded configs (rounded up): the evaluations a replay gets by default."""
    return math.ceil(len(rec.configs) / 4)
