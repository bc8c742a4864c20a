"""Tuning: search a variant's params under its constraints, time each config with the lab's own
harness on several shapes, keep every result as it comes (an interrupted tune resumes), and record
the best config per card, which `bench` and `run` then use as the variant's defaults.

`gpulab tune` is plan_tune (the configs; opens the lab), TunePlan.resume and .preflight, then run_tune
(times, scores, writes tuned.json); the command prints between the steps. Which configs, in which
order and how many is the search's (gpulab.jobs.search: grid, random or bayes, within a budget of
configs or of time); a bayes search is told each batch's scores before it is asked for the next,
and a resumed tune's rows before its first.

A result is resumed only while its kernel is the one that was timed: each row records the source's
fingerprint (source_sha: the .cu file and its headers, gpulab.gpu.compile.source_fingerprint), and a
tune that finds the source changed since times those configs again (rows from before the column was
kept are resumed as they are).

Files, per card (results/<gpu>/):
  tune-<experiment>-<variant>.csv   every config x shape tried, with its skip reason if it could not run
  tuned.json                        {experiment: {variant: {"params": {...}, "score_gflops": ..., ...}}}
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import math
import re
import time
from pathlib import Path
from typing import Any, Callable

from gpulab.errors import DeviceFault, GpulabError
from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.files import locked, write_atomic
from gpulab.gpu.timing import TimingPolicy
from gpulab.jobs.clean import Gate, first_clean
from gpulab.jobs.search import Budget, bayes_search, listed, resolve
from gpulab.params import parse_params_label
from gpulab.records import card_folder, read_csv, read_text, write_csv
from gpulab.run.lab import LabOptions, RunSpec, compile_spec
from gpulab.run.precompile import precompiled
from gpulab.run.progress import QUIET, Progress
from gpulab.run.worker import open_lab

TUNED_FILE = "tuned.json"


def tune_path(folder: Path, experiment: str, variant: str) -> Path:
    """The CSV of every config x shape a tune of `variant` tried on the card whose results are in `folder`."""
    return Path(folder) / f"tune-{experiment}-{variant}.csv"


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


def tuned_path(folder: Path) -> Path:
    return Path(folder) / TUNED_FILE


def load_tuned(folder: Path) -> dict:
    """The card's tuned.json, checked: {experiment: {variant: {"params": {NAME: int}, "by_shape":
    {shape: {"params": {...}}}}}} (other keys are the record of the tune and free)."""
    path = tuned_path(folder)
    if not path.exists():
        return {}
    try:
        table = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise GpulabError(f"{path} is not valid JSON ({exc}); delete it or re-run gpulab tune") from None
    if problem := _tuned_problem(table):
        raise GpulabError(f"{path} is not a tuned.json gpulab wrote: {problem}; delete it or re-run gpulab tune")
    return table


def _tuned_problem(table) -> str | None:
    """What is wrong with a parsed tuned.json, or None."""
    def params_problem(params, where: str) -> str | None:
        if not isinstance(params, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in params.items()):
            return f"{where} params must map names to whole numbers"
        return None

    if not isinstance(table, dict):
        return "the top level must be an object of experiments"
    for exp, variants in table.items():
        if not isinstance(variants, dict):
            return f"{exp} must be an object of variants"
        for name, entry in variants.items():
            where = f"{exp} {name}"
            if not isinstance(entry, dict):
                return f"{where} must be an object"
            if problem := params_problem(entry.get("params", {}), where):
                return problem
            by_shape = entry.get("by_shape", {})
            if not isinstance(by_shape, dict):
                return f"{where} by_shape must be an object of shapes"
            for label, best in by_shape.items():
                if not re.fullmatch(r"\d+(x\d+)*", str(label)) or not isinstance(best, dict):
                    return f"{where} by_shape entry {label!r} must be a shape like 4096x4096x4096 with an object"
                if problem := params_problem(best.get("params", {}), f"{where} at {label}"):
                    return problem
                rate = best.get("rate")  # the model reads a tuned config's time from it (calibration)
                if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate < math.inf):
                    return f"{where} at {label}: rate must be a positive number (GFLOP/s or GB/s); got {rate!r}"
    return None


# The largest shape_distance at which a tuned shape still speaks for another (a factor of 16 spread
# over the dimensions, e.g. 4x along two of them): the best row and the tuned defaults both stop here.
NEAR = 4.0


def shape_distance(a: Shape | tuple[int, ...], b: tuple[int, ...]) -> float:
    """How far apart two shapes are for a tuned config: the sum over dimensions of |log2(a_d / b_d)|
    (4096x64x4096 is 1 from 4096x32x4096 but 6 from 4096^3: the shape's class counts, not only its
    volume). The best row (gpulab.jobs.best) and the tuned defaults both measure with it."""
    values = a.values if isinstance(a, Shape) else a
    return sum(abs(math.log2(x / y)) for x, y in zip(values, b))


def nearness(shape: Shape | tuple[int, ...], label: str, rate) -> tuple[float, float]:
    """Sort key of tuned shapes (labels) for `shape`: the nearest first (shape_distance, rounded so
    that float noise breaks no tie), then the one whose config ran faster where it was tuned (2048^3 is
    as far from 1024^3 as from 4096^3: the larger shape's config, which ran faster, speaks for it).
    The best row (gpulab.jobs.best) and the tuned defaults both order by it."""
    return round(shape_distance(shape, shape_of(label)), 9), -float(rate or 0.0)


def shape_of(label: str) -> tuple[int, ...]:
    """'4096x64x4096' -> (4096, 64, 4096)."""
    return tuple(int(x) for x in str(label).split("x"))


def accepted_params(variant: Variant, params) -> Params | None:
    """Tuned params as the variant takes them today (Variant.completed_params: a param added after
    the tune at its default, None for a name it lost or a value it no longer offers), or None where
    the tune recorded none."""
    if not isinstance(params, dict) or not params:
        return None
    return variant.completed_params(params)


def tuned_defaults(experiment: Experiment, folder: Path) -> Callable[[Variant, Shape], Params]:
    """A `defaults` function for lab.plan: the params this card's tune found best for the tuned
    shape nearest the one asked for, if it is within NEAR (shape_distance: dimension by dimension, so
    4096x64x4096 takes the config tuned there, not the one of 1024^3, the same work), else the tune's
    overall best (its choice over all its shapes), else the variant's declared defaults. A config
    tuned only at small squares thus never becomes a variant's default at 8192^3. Tuned params no
    longer accepted by the variant are ignored."""
    return defaults_from(load_tuned(folder).get(experiment.name, {}))


def defaults_from(table: dict) -> Callable[[Variant, Shape | None], Params]:
    """tuned_defaults on a tuned.json entry of one experiment ({variant: {"params", "by_shape"}})."""

    def defaults(variant: Variant, shape: Shape | None = None) -> Params:
        entry = table.get(variant.name) or {}
        by_shape = entry.get("by_shape") or {}
        if shape is not None and by_shape:
            nearest = min(by_shape, key=lambda label: nearness(shape, label, (by_shape[label] or {}).get("rate")))
            chosen = accepted_params(variant, by_shape[nearest].get("params"))
            if chosen and shape_distance(shape, shape_of(nearest)) <= NEAR:
                return chosen
        return accepted_params(variant, entry.get("params")) or variant.default_params()

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
            out[shape.label] = {"params": parse_params_label(best.get("params")),
                                "rate": best.get("gflops") or best.get("gbps")}
    return out


def write_best(folder: Path, experiment: Experiment, variant: Variant, params: Params, value: float,
               shapes: list[Shape], env: dict, by_shape: dict[str, dict] | None = None,
               gated: dict | None = None) -> list[str]:
    """Record a tune's best config over `shapes` and its fastest per shape in tuned.json, with what
    the sanitizer gate said of it (`gated`: its verdict and the faster configs it passed over). The
    picks an earlier tune of the variant recorded at shapes this one did not time stay: a tune at
    one new shape does not forget the others. Nor does it replace the earlier tune's overall best
    unless it was scored on every shape that one was: t4's config chosen over seven shapes up to
    8192^3 is what every shape without a pick near it runs, and one layer's winner (128x6144x4096 on
    the H200, 2026-12-04: BN=128 CLUSTER=1 against BN=256 CLUSTER=2) would have replaced it. Returns
    the shapes of the overall best kept that way, or [] where this tune's is recorded."""
    with locked(tuned_path(folder)):  # two tunes of different variants both land
        table = load_tuned(folder)
        before = table.get(experiment.name, {}).get(variant.name) or {}
        earlier = before.get("by_shape") or {}
        asked = {s.label for s in shapes}
        by_shape = {label: best for label, best in earlier.items() if label not in asked} | (by_shape or {})
        kept = list(before.get("shapes") or [])
        if before.get("params") and not set(kept) <= asked:
            entry = before | {"by_shape": by_shape}
        else:
            kept = []
            entry = {
                "params": params,
                "score": value,
                "score_unit": "GFLOP/s geomean" if experiment.bound == "compute" else "GB/s geomean",
                "shapes": [s.label for s in shapes],
                "by_shape": by_shape,
                "gpu": env.get("gpu"), "driver": env.get("driver"), "date": env.get("date"),
                **(gated or {}),
            }
        table.setdefault(experiment.name, {})[variant.name] = entry
        write_atomic(tuned_path(folder), json.dumps(table, indent=2, sort_keys=True) + "\n")
    return kept


KEY_COLUMNS = ("params", "shape")  # a tune row's key: one row per config and shape


def row_key(row: dict) -> tuple[str, str]:
    return (row.get("params") or "", row["shape"])


def resume_rows(path: Path) -> list[dict]:
    """A tune's saved rows; a damaged file, or one without the columns a row is keyed by, stops the
    tune with one line (DamagedFile) before anything is timed or written."""
    return read_csv(path, required=KEY_COLUMNS) if path.exists() else []


def done_keys(rows: list[dict]) -> set[tuple[str, str]]:
    return {row_key(r) for r in rows}


def put_row(path: Path, key: tuple[str, str], row: dict | None) -> dict | None:
    """Under the CSV's lock, read afresh: `row` in place of the row saved under `key` (None: that row
    taken out), every other row kept, another tune's of the same variant too. Returns the row it
    replaced, if any."""
    with locked(path):
        rows = resume_rows(path)
        old = next((r for r in rows if row_key(r) == key), None)
        rows = [r for r in rows if row_key(r) != key] + ([row] if row is not None else [])
        write_csv(path, rows)
    return old


# -- one tune, start to end (gpulab tune) -----------------------------------------------------------
def tune_shapes(experiment: Experiment, variant: Variant | None = None) -> list[Shape]:
    """The shapes a tune scores on when none are asked for: the variant's own tune shapes, else the
    experiment's, else its defaults."""
    own = variant.tune_shapes if variant is not None else ()
    return [experiment.shape(*s) for s in (own or experiment.tune_shapes or experiment.default_shapes)]


@dataclasses.dataclass
class TunePlan:
    """What a tune will time: the size of the search space, the configs (a grid's or a random
    sample's, fixed before the first run, today's default first; a bayes search's, growing as the
    search asks for them), those the constraints rejected with the reason, the lab that times them
    and the CSV that keeps every result (rows: what it held when the tune resumed, then each result
    as it comes). `search` (gpulab.jobs.search.BayesSearch) is None for a list of configs."""

    experiment: Experiment
    variant: Variant
    shapes: list[Shape]
    lab: Any  # gpulab.run.worker.IsolatedLab (or the in-process gpulab.run.lab.Lab), imported lazily: it needs the GPU stack
    folder: Path
    current: Params
    space_size: int
    configs: list[Params]
    rejected: list[tuple[Params, str]]
    rows: list[dict] = dataclasses.field(default_factory=list)
    stale: list[dict] = dataclasses.field(default_factory=list)  # rows resume() set aside: another source timed them
    search: Any = None
    budget: Budget = dataclasses.field(default_factory=Budget)
    strategy: str = "grid"
    # The config an earlier tune of the variant found fastest at each of these shapes where this
    # tune's configs do not include it (incumbents): timed again at that shape only, after the
    # configs, so that the shape keeps the fastest of both within one run, not this tune's fastest
    # alone. Not scored for the overall best: that stays over the configs asked for.
    incumbents: list[tuple[Params, Shape]] = dataclasses.field(default_factory=list)

    @property
    def path(self) -> Path:
        return tune_path(self.folder, self.experiment.name, self.variant.name)

    @property
    def candidates(self) -> list[Params]:
        """The configs this tune may time: its list, or every feasible one a search chooses from."""
        return self.configs if self.search is None else list(self.search.feasible.values())

    @property
    def runs(self) -> int:
        """The config x shape runs ahead, at most (a bayes search: those it has not been told yet)."""
        if self.search is None:
            return len(self.configs) * len(self.shapes) + len(self.incumbent_specs())
        ahead = self.search.left if self.budget.configs is None else min(self.budget.configs - len(self.configs), self.search.left)
        return max(ahead, 0) * len(self.shapes) + len(self.incumbent_specs())

    def incumbent_specs(self) -> list[RunSpec]:
        """The incumbents left to time: those whose config this tune did not time after all."""
        timed = {self.variant.params_label(p) for p in self.configs}
        return [RunSpec(self.experiment, self.variant, p, s) for p, s in self.incumbents
                if self.variant.params_label(p) not in timed]

    @functools.cached_property
    def source_sha(self) -> str:
        """The variant's source as this tune found it (RunSpec.source_sha): what its rows record."""
        return RunSpec(self.experiment, self.variant, self.current, self.shapes[0]).source_sha()

    def resume(self) -> set[tuple[str, str]]:
        """Read what an earlier tune of this variant saved; the (params, shape) pairs of this plan it
        need not run again. Rows of this plan timed on another source (their source_sha differs) go
        to `stale` and are timed again, each replaced in the CSV as its new row comes; rows without a
        source_sha (saved before tunes recorded it) are resumed as they are. Rows of other configs or shapes stay in the CSV
        whatever their source: each says which kernel it timed, and a tune that asks for them again
        sets them aside then. A search is told the score of every config resumed at every shape,
        before it is asked for its first config."""
        sha = self.source_sha
        planned = {(self.variant.params_label(p), s.label) for p in self.candidates for s in self.shapes}
        rows = resume_rows(self.path)
        def stale(r: dict) -> bool:
            return r.get("source_sha") not in (None, "", sha) and row_key(r) in planned

        self.stale = [r for r in rows if stale(r)]
        self.rows = [r for r in rows if not stale(r)]
        done = done_keys(self.rows) & planned
        if self.search is not None:
            labels = {label for label, _ in done}
            known = [p for p in self.candidates if self.variant.params_label(p) in labels and p not in self.configs
                     and all((self.variant.params_label(p), s.label) in done for s in self.shapes)]
            self.tell(known)
            self.configs += known
        return done

    def preflight(self) -> None:
        """Stop before the first run if a shape does not fit in the card's free memory."""
        self.lab.preflight([RunSpec(self.experiment, self.variant, self.current, s) for s in self.shapes])

    def batches(self, parallel: int = 1, deadline: float | None = None, chunk: bool = False):
        """The configs to time, batch by batch, each timed before the next is asked for: a list's
        configs at once (in chunks of `parallel` with `chunk`, so a time budget is looked at between
        them), a search's next configs after it was told the last batch's (plan.tell). Stops at the
        budget: its number of configs, or once `deadline` (time.monotonic()) has passed."""
        if self.search is None:
            step = max(parallel, 1) if chunk else max(len(self.configs), 1)
            for i in range(0, len(self.configs), step):
                if past(deadline):
                    return
                yield self.configs[i:i + step]
            return
        while not past(deadline):
            n = self.search.batch(parallel)
            if self.budget.configs is not None:
                n = min(n, self.budget.configs - len(self.configs))
            batch = self.search.ask(n) if n > 0 else []
            if not batch:
                return
            self.configs += batch
            yield batch

    def tell(self, configs: list[Params]) -> None:
        """Tell the search each config's score over the shapes (None where it failed at one)."""
        if self.search is None:
            return
        by_label: dict[str, list[dict]] = {}
        for r in self.rows:
            by_label.setdefault(r.get("params") or "", []).append(r)
        for params in configs:
            self.search.tell(params, score(by_label.get(self.variant.params_label(params), []), self.shapes))


def past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


@dataclasses.dataclass
class TuneResult:
    scored: list[tuple[float, Params]]  # (geomean rate, params), the best first
    by_shape: dict[str, dict]  # best_by_shape of every config this tune timed
    # What tuned.json records as the best: the fastest config the sanitizer gate found clean
    # (gpulab.jobs.clean.first_clean), the fastest where it found none; and the gate's word on it.
    chosen: Params | None = None
    sanitized: str = ""
    # The shapes of an earlier tune whose overall best tuned.json kept (this tune did not score on
    # all of them: write_best); [] where this tune's best was recorded as the overall one.
    overall_kept_from: list[str] = dataclasses.field(default_factory=list)

    @property
    def best(self) -> Params:
        return self.chosen if self.chosen is not None else self.scored[0][1]


def plan_tune(experiment: Experiment, variant: Variant, overrides: dict[str, tuple[int, ...]],
              shapes: list[Shape], budget: Budget | int | str, results_root: Path | None = None, *,
              strategy: str | None = None, seed: int = 0) -> TunePlan:
    """Split the search space by the constraints, open the lab (this needs the GPU) and choose the
    configs within `budget` by `strategy` (gpulab.jobs.search), the one this card runs today leading."""
    return plan_on(open_lab(tune_options()), experiment, variant, overrides, shapes, budget, results_root,
                   strategy=strategy, seed=seed)


def tune_options():
    """The lab options of a tune: shorter timings than bench's, since a tune times many configs."""
    return LabOptions(timing=TimingPolicy(warmup_ms=10.0, target_ms=100.0, min_reps=5, max_reps=50))


def plan_on(lab, experiment: Experiment, variant: Variant, overrides: dict[str, tuple[int, ...]],
            shapes: list[Shape], budget: Budget | int | str, results_root: Path | None = None, *,
            strategy: str | None = None, seed: int = 0) -> TunePlan:
    """The plan of a tune timed by `lab` (anything with device, arch, env, preflight and execute:
    a Lab, an IsolatedLab, or a sweep's card, gpulab.run.sweep.CardGroup)."""
    budget = Budget.parse(budget)
    ok, rejected = feasible(variant, search_space(variant, overrides))
    strategy = resolve(strategy, len(ok), budget)
    if reason := variant.arch_reason(lab.arch):
        raise GpulabError(f"{experiment.name} {variant.name} cannot run on this card: {reason}")
    folder = card_folder(lab.device.slug, results_root)
    current = tuned_defaults(experiment, folder)(variant)
    if strategy == "bayes":
        configs, search = [], bayes_search(variant, overrides, ok, budget, seed, current)
    else:
        configs, search = listed(strategy, ok, budget, current, seed), None
    return TunePlan(experiment, variant, shapes, lab, folder, current, len(ok) + len(rejected), configs, rejected,
                    search=search, budget=budget, strategy=strategy,
                    incumbents=incumbents(experiment, variant, folder, shapes, configs if search is None else []))


def incumbents(experiment: Experiment, variant: Variant, folder: Path, shapes: list[Shape],
               configs: list[Params]) -> list[tuple[Params, Shape]]:
    """(config, shape) for each of `shapes` where tuned.json holds the variant's fastest config of an
    earlier tune (by_shape, at that very shape) and `configs` do not include it. Without them a
    narrower tune forgets a faster config: kc's tune over 64- to 128-wide tiles split two ways at
    128x4096x4096 would have put one of them in place of the 128-wide split three ways tuned there
    before (gpulab's H200 records, 2026-12-05)."""
    by_shape = (load_tuned(folder).get(experiment.name, {}).get(variant.name) or {}).get("by_shape") or {}
    asked = {variant.params_label(p) for p in configs}
    out = []
    for shape in shapes:
        earlier = accepted_params(variant, (by_shape.get(shape.label) or {}).get("params"))
        if earlier and variant.params_label(earlier) not in asked and not variant.constraints(earlier, shape):
            out.append((earlier, shape))
    return out


def run_tune(plan: TunePlan, progress: Progress = QUIET) -> TuneResult:
    """Time the planned configs on every shape, batch by batch (plan.batches: a list at once, a
    search's next configs after it was told the last ones), skipping what plan.resume() found done
    and saving each result as it comes; no config starts past a time budget. Score each config over
    the shapes and record the best one, and the fastest per shape, in tuned.json.
    progress.started(label) and .finished(row or None, where resumed) bracket each config x shape."""
    exp, v = plan.experiment, plan.variant
    deadline = plan.budget.deadline()
    done = done_keys(plan.rows)
    for batch in plan.batches(deadline=deadline):
        ahead = [RunSpec(exp, v, p, s) for p in batch for s in plan.shapes
                 if (v.params_label(p), s.label) not in done] if len(batch) > 1 else []
        ran = []
        with precompiled(ahead, plan.lab.arch):
            for params in batch:
                if past(deadline):
                    break  # no config starts past a time budget; the one under way finished its shapes
                ran.append(params)
                for shape in plan.shapes:
                    spec = RunSpec(exp, v, params, shape)
                    progress.started(spec.label)
                    row = None
                    if (v.params_label(params), shape.label) not in done:
                        row = _tune_one(plan.lab, spec, plan.path, plan.source_sha)
                        plan.rows.append(row)
                    progress.finished(row)
        plan.tell(ran)
    if not past(deadline):
        for spec in plan.incumbent_specs():
            progress.started(spec.label)
            row = _tune_one(plan.lab, spec, plan.path, plan.source_sha)
            plan.rows.append(row)
            progress.finished(row)
    return finish_tune(plan)


def finish_tune(plan: TunePlan) -> TuneResult:
    """Score each planned config over the shapes from plan.rows, and record the best one, and the
    fastest per shape, in tuned.json."""
    exp, v = plan.experiment, plan.variant
    scored = []
    for params in plan.configs:
        mine = [r for r in plan.rows if (r.get("params") or "") == v.params_label(params)]
        value = score(mine, plan.shapes)
        if value is not None:
            scored.append((value, params))
    if not scored:
        raise GpulabError(f"no config of {v.name} ran correctly on every shape; see {plan.path}")
    scored.sort(key=lambda x: -x[0])
    # The winner is checked before it is written (gpulab.jobs.clean): a faster config that is not
    # clean under memcheck and racecheck does not become the card's default.
    gate = Gate(plan.folder, plan.lab.arch, plan.lab.env)
    at, verdict, passed = first_clean([RunSpec(exp, v, p, plan.shapes[0]) for _, p in scored], gate)
    best_value, best = scored[at]
    tried = [r for r in plan.rows if (r.get("params") or "") in {v.params_label(p) for p in plan.configs}]
    # The incumbents as this run timed them (the last row of each), or where its time budget ran out
    # first as the CSV holds them: either way the shape does not forget a config faster than this tune's.
    timed_again = {(v.params_label(p), s.label) for p, s in plan.incumbents}
    again = {row_key(r): r for r in plan.rows if row_key(r) in timed_again}
    by_shape = best_by_shape(tried + list(again.values()), plan.shapes)
    gated = {"sanitized": verdict.text,
             "passed_over": [{"params": p.params, "why": why} for p, why in passed]}
    kept = write_best(plan.folder, exp, v, best, best_value, plan.shapes, plan.lab.env, by_shape, gated)
    return TuneResult(scored, by_shape, best, verdict.text, kept)


def _tune_one(lab, spec, path: Path, source_sha: str) -> dict:
    """One config x shape, its row marked with the kernel's `source_sha`. A row marking it unfinished
    is saved first, so a run that dies inside it (a fault poisons the CUDA context) is skipped, with
    that reason, when the tune resumes. A tune stopped by Ctrl-C or SIGTERM (gpulab's CLI turns both
    into KeyboardInterrupt) puts back the row that was there before (a stale one, or none): the config
    did not stop it, and the resumed tune times it."""
    pending = spec.base_record() | {"skip_reason": "did not finish: the process stopped during this run",
                                    "source_sha": source_sha}
    key = row_key(pending)
    before = put_row(path, key, pending)
    try:
        resources = compile_spec(spec, lab.arch).resources
        if resources.spill_stores_bytes:
            record = pending | resources.as_record() | {"skip_reason": "spills registers to local memory"}
        else:
            try:
                record = lab.execute(spec)  # a fault in the worker comes back as a marked row
            except DeviceFault:
                raise  # in-process (GPULAB_IN_PROCESS): the context is gone, the pending row stays
            except GpulabError as exc:
                record = spec.base_record() | {"skip_reason": str(exc)}
    except KeyboardInterrupt:
        put_row(path, key, before)
        raise
    record = record | {"source_sha": source_sha}  # every row says which source it timed, a worker's too
    put_row(path, key, record)
    return record


# -- on a Dask cluster (gpulab.run.sweep): compiles spread out, timings on every GPU ----------------
def plan_tunes_on(cluster, experiment, variant, overrides, shapes, budget, results_root=None, *,
                  strategy: str | None = None, seed: int = 0) -> list:
    """One tune plan per card model among the cluster's GPUs (a TunePlan, its lab a CardGroup)."""
    return [plan_on(group, experiment, variant, overrides, shapes, budget, results_root, strategy=strategy, seed=seed)
            for group in cluster.groups()]


def run_tune_on(cluster, plan, progress: Progress = QUIET) -> TuneResult:
    """run_tune on a cluster (gpulab.run.sweep.Cluster): what the plan's CSV does not hold yet is compiled and
    timed on the card group's GPUs, each row saved as it comes back (a re-run resumes). A search asks
    for as many configs at a time as the group has GPUs; on a time budget a list goes in such
    batches too, so that no batch starts past the time."""
    exp, v = plan.experiment, plan.variant
    deadline = plan.budget.deadline()
    done = done_keys(plan.rows)

    def time_on_cluster(specs: list[RunSpec]) -> None:
        for spec, record in cluster.time(specs, plan.lab, skip_spills=True):
            progress.started(spec.label)
            row = record | {"source_sha": plan.source_sha}
            plan.rows.append(row)
            put_row(plan.path, row_key(row), row)
            progress.finished(row)

    for batch in plan.batches(len(plan.lab.cards), deadline, chunk=deadline is not None):
        todo = []
        for params in batch:
            for shape in plan.shapes:
                if (v.params_label(params), shape.label) in done:
                    progress.finished(None)
                else:
                    todo.append(RunSpec(exp, v, params, shape))
        time_on_cluster(todo)
        plan.tell(batch)
    if (again := plan.incumbent_specs()) and not past(deadline):
        time_on_cluster(again)
    return finish_tune(plan)
