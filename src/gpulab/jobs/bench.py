"""`gpulab bench` (and each experiment of `gpulab run`): plan the runs of one experiment, with the
vendor library beside every shape and gpulab's best row of each shape, run them on a lab (this
machine's isolated worker, or a Dask cluster's card group), and keep every finished row in the
experiment's CSV as the sweep goes, compared with the vendor library and held to the card's
ceilings (measured once per card, gpulab.jobs.ceilings).

A suite's shapes (gpulab.experiments.suites) are benched the same way; their rows carry the suite's
columns (`suite`, `layer`, ...) and go to results/<gpu>/<experiment>-<suite>.csv. Every best row
says in `chosen_by` why it runs what it runs (gpulab.jobs.best)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

from gpulab.errors import GpulabError
from gpulab.files import check_writable
from gpulab.gpu.stats import parse_noise
from gpulab.gpu.timing import TimingPolicy
from gpulab.jobs.best import Pick, Selector, selector
from gpulab.jobs.ceilings import ensure
from gpulab.jobs.clean import Gate, vet_best
from gpulab.jobs.model_errors import Unseen
from gpulab.jobs.suite_plan import contenders
from gpulab.jobs.tune import tuned_defaults
from gpulab.records import BEST, Records, card_folder, read_csv, upsert_runs
from gpulab.records.ceilings import attach, attach_copy, ceilings_path, load
from gpulab.run import sweep
from gpulab.run.lab import LabOptions, RunSpec, config_run_key, derive, plan
from gpulab.run.precompile import precompiled
from gpulab.run.progress import QUIET, Progress
from gpulab.run.worker import open_lab


@dataclasses.dataclass(frozen=True)
class BenchOptions:
    """How a bench runs, beside what it runs (experiment, variants, shapes, params).

    warm_l2: leave the L2 as the last repetition left it (default: flushed before each one).
    exact: check with small-integer inputs, so any mismatch is an indexing bug.
    seed: of the random inputs. out: the CSV (default results/<gpu>/<experiment>.csv).
    save: write the rows at all. workers / scheduler: compile on N local processes, or use a running
    Dask cluster, and time on every GPU (gpulab.run.sweep). noise ('0.5%' or 0.005): each row
    repeats until its median's 95% interval is within it, or its budget ends (gpulab.gpu.timing).
    retime_throttled: a row timed under a heat or power slowdown is timed again after a cool-down."""

    warm_l2: bool = False
    exact: bool = False
    seed: int = 0
    out: str | Path | None = None
    save: bool = True
    workers: int | None = None
    scheduler: str | None = None
    noise: float | str = TimingPolicy.noise
    retime_throttled: bool = False
    # At each shape, only the variants the model (gpulab.jobs.best) puts within this factor of its
    # pick's time, beside the best row and the vendor library; None: every variant named.
    contenders: float | None = None
    # The sanitizer gate before a row is called best (gpulab.jobs.clean); off, every such row says
    # "not sanitized" (a sweep of many shapes whose picks differ would sanitize each pick first).
    sanitize: bool = True
    # At each shape also the config the model picks knowing nothing at or near it (jobs.model_errors.
    # Unseen), as an ordinary row of that config: what `gpulab best --alone` judges the model by.
    alone: bool = False

    def lab_options(self) -> LabOptions:
        timing = TimingPolicy(flush_l2=not self.warm_l2, noise=parse_noise(self.noise))
        return LabOptions(timing=timing, seed=self.seed, exact=self.exact, retime_throttled=self.retime_throttled)


def ensure_ceilings(device, folder: Path, progress: Progress = QUIET):
    """This card's ceilings from folder/ceilings.csv, measured first (and said so) if missing."""
    if load(ceilings_path(folder)) is None:
        progress.say(f"measuring this card's ceilings once (stored in {ceilings_path(folder)}) ...")
    return ensure(device, folder, progress=lambda text: progress.status(f"ceilings: {text}"))


def variant_names(exp, variants) -> list[str] | None:
    """The variants `bench` plans from its --variant names (None: all of them). gpulab's best row is
    planned apart, and the vendor library runs beside every shape anyway: naming it is no error, and
    naming it alone benches only it."""
    if not variants:
        return None
    return [n for n in variants if n != BEST and n not in exp.vendor_baselines()]


def best_picks(chooser: Selector, shapes, progress: Progress = QUIET) -> dict[str, Pick | None]:
    """gpulab's best row at each shape (gpulab.jobs.best), by shape label; where no variant runs a
    shape, None, and progress.say gives the one line that says why."""
    picks = {}
    for shape in dict.fromkeys(shapes):
        picks[shape.label] = chooser.pick(shape)
        if picks[shape.label] is None:
            progress.say(f"no best row at {shape.label}: {chooser.why_none(shape)}")
    return picks


def bench_plan(exp, names, overrides, shapes, folder: Path, with_best: bool,
               picks: dict[str, Pick | None] | None = None, within: float | None = None,
               chooser: Selector | None = None) -> list[RunSpec]:
    """bench's runs: the variants (tuned defaults from `folder`) and the vendor rows, and with
    `with_best` gpulab's best row of each shape (`picks`, else gpulab.jobs.best's from `folder`) just
    before that shape's vendor rows. With `within`, at each shape only the variants the model puts
    within that factor of its pick's time (gpulab.jobs.suite_plan.contenders)."""
    specs = plan(exp, names, overrides, shapes, defaults=tuned_defaults(exp, folder))
    if not with_best and within is None:
        return specs
    if (with_best and picks is None) or within is not None:
        chooser = chooser or selector(exp, folder)
    if with_best and picks is None:
        picks = best_picks(chooser, shapes)
    libraries = set(exp.vendor_baselines())
    out: list[RunSpec] = []
    for shape in dict.fromkeys(shapes):  # once each: `mine` already holds every spec of a repeated shape
        mine = [s for s in specs if s.shape == shape]
        own = [s for s in mine if s.library not in libraries]
        if within is not None:
            keep = set(contenders(chooser, shape, within))
            own = [s for s in own if s.variant is not None and s.variant.name in keep]
        chosen = picks.get(shape.label) if with_best else None
        best = [RunSpec(exp, chosen.variant, chosen.params, shape, picked=chosen.variant.name)] if chosen else []
        out += own + best + [s for s in mine if s.library in libraries]
    return out


def row_columns(picks: dict[str, Pick | None] | None, by_shape: dict[str, dict] | None = None) -> Callable[[dict], dict]:
    """What bench adds to each finished row: its shape's columns (`by_shape`: a suite's `suite`,
    `layer`, ...), and on a best row `chosen_by`, why it ran what it ran."""
    def columns(row: dict) -> dict:
        extra = dict((by_shape or {}).get(row.get("shape"), {}))
        chosen = (picks or {}).get(row.get("shape"))
        if row.get("variant") == BEST and chosen is not None:
            extra["chosen_by"] = chosen.why
        return extra
    return columns


def run_one_by_one(lab, specs, progress: Progress, save: Callable | None = None) -> list[dict]:
    """Every spec in order on `lab`; after each, progress.finished(record) and save(records so far)."""
    progress.planned(len(specs))
    records = []
    for spec in specs:
        progress.started(spec.label)
        record = lab.execute(spec)
        records.append(record)
        progress.finished(record)
        if save is not None:
            save(records)
    return records


def sweep_specs(exp, lab, specs, folder: Path, path: Path | None, progress: Progress = QUIET,
                execute: Callable | None = None, columns: Callable[[dict], dict] | None = None,
                sanitize: bool = True) -> Records:
    """Run `specs` of one experiment; the rows, compared (derive) and against the ceilings, merged
    into `path` after every run and at the end: a run's row replaces the file's row of the same run
    (experiment, variant, params, shape), every other row the file holds stays. `execute` runs them
    (default: one after the other on `lab`); one that is given (a cluster's) uses the ceilings already
    measured on that card, if any, since the card may be on another host. `columns(row)` gives what
    each row carries beside the run's own (row_columns). The rows that could be called best carry the
    sanitizer gate's verdict (gpulab.jobs.clean.vet_best)."""
    if path is not None:
        check_writable(path)
        if path.exists():
            read_csv(path)  # a damaged file is refused before any work, not after the first run
    ceilings = ensure_ceilings(lab.device, folder, progress) if execute is None else load(ceilings_path(folder))
    # The gate reads sanitize.csv: a damaged one stops us before any run.
    gate = Gate(folder, lab.arch, lab.env, progress, off="" if sanitize else "the gate was turned off (--no-sanitize)")

    def finished(rows: list[dict]) -> list[dict]:
        if columns is not None:
            rows = [r | columns(r) for r in rows]
        return attach_copy(attach(derive(rows, exp.baseline), exp, ceilings), exp, ceilings)

    def save(done: list[dict]) -> None:
        if path is not None:
            upsert_runs(path, finished([dict(r) for r in done]), key=config_run_key)

    records = Records(finished((execute or run_one_by_one)(lab, specs, progress, save)), path)
    # No row is called best before compute-sanitizer finds its kernel clean (gpulab.jobs.clean).
    vet_best(records, specs, gate, tuple(exp.vendor_baselines()))
    if path is not None:
        upsert_runs(path, list(records), key=config_run_key)
    records.lab = lab
    return records


def bench(exp, names, overrides, shapes, options: BenchOptions, progress: Progress = QUIET,
          suite=None) -> Records:
    """Check and time `names` (None: every variant, with its sweep) of `exp` at `shapes`, with the
    vendor library and gpulab's best row beside (the best row where it is named, or where nothing is
    named and no params are overridden: -p sweeps the variants, not the best row's pick); the rows of
    the first card model, with `.per_card`.
    With `suite` (gpulab.experiments.suites.Suite) its shapes for `exp` instead, every row carrying
    the suite's columns, into results/<gpu>/<experiment>-<suite>.csv unless options.out says."""
    # Named, the best row runs whatever -p sweeps beside it: `-v t4,best -p STAGES=4,6` had dropped
    # it without a word (an H100, 2026-12-06, call 60).
    with_best = BEST in names if names else not overrides
    by_shape = None
    if suite is not None:
        found = suite.shapes(exp)  # a bad suite file is refused before anything runs
        shapes, by_shape = [s.shape for s in found], {s.shape.label: s.columns for s in found}
    chosen = variant_names(exp, names)
    plan(exp, chosen, overrides, shapes)  # names and values are checked before the GPU is touched
    if options.contenders is not None and not options.contenders >= 1:
        raise GpulabError(f"contenders {options.contenders}: a factor of the pick's modelled time, at least 1 (e.g. 1.5)")
    if options.save and options.out is not None:
        check_writable(Path(options.out))  # ... and where the rows go (a folder, no permission)
    if options.workers is not None or options.scheduler:
        return _bench_on_cluster(exp, chosen, overrides, shapes, options, with_best, progress, suite, by_shape)
    lab = open_lab(options.lab_options())
    folder = card_folder(lab.device.slug)
    if with_best or options.alone or options.contenders is not None:
        # The model picks with this card's ceilings, so on a card that has none yet they are measured
        # before it plans, not after (sweep_specs would measure them at its start): planned with the
        # reference ceilings, bench --alone timed other configs than `gpulab best --alone` then
        # judged with the measured ones (an H100, 2026-12-06, tests/gpu/test_suite_gpu.py).
        ensure_ceilings(lab.device, folder, progress)
    specs, columns = _planned(exp, chosen, overrides, shapes, folder, with_best, options, progress, by_shape)
    lab.preflight(specs)
    with precompiled(specs, lab.arch):
        records = sweep_specs(exp, lab, specs, folder, _csv_path(exp, folder, options, suite), progress,
                              columns=columns, sanitize=options.sanitize)
    records.per_card = [records]
    return records


def _planned(exp, names, overrides, shapes, folder: Path, with_best: bool, options: BenchOptions,
             progress: Progress, by_shape: dict | None):
    """(specs, row columns) of one card's bench: the picks made once, for the plan and the rows."""
    chooser = selector(exp, folder) if with_best or options.contenders is not None else None
    picks = best_picks(chooser, shapes, progress) if with_best else None
    specs = bench_plan(exp, names, overrides, shapes, folder, with_best, picks, options.contenders, chooser)
    if options.alone:
        specs = with_alone_picks(exp, specs, shapes, folder, progress)
    return specs, row_columns(picks, by_shape)


def with_alone_picks(exp, specs: list[RunSpec], shapes, folder: Path, progress: Progress = QUIET) -> list[RunSpec]:
    """`specs` and, at each shape, the model-alone pick's config (Unseen: this card's tunes and runs
    at or very near the shape left out) as an ordinary row, before the shape's vendor rows, unless a
    row of that config is planned there already (a best row counts: calibration.timed_runs reads it
    as the variant it ran)."""
    unseen = Unseen(exp, folder)
    libraries = set(exp.vendor_baselines())
    out = list(specs)
    for shape in dict.fromkeys(shapes):
        progress.status(f"the model alone at {shape.label}")
        pick = unseen.pick(shape)
        if pick is None or any(s.shape == shape and s.variant is not None
                               and (s.variant.name, s.params) == (pick.variant.name, pick.params) for s in out):
            continue
        at = next((i for i, s in enumerate(out) if s.shape == shape and s.library in libraries), len(out))
        out.insert(at, RunSpec(exp, pick.variant, pick.params, shape))
    return out


def _csv_path(exp, folder: Path, options: BenchOptions, suite=None) -> Path | None:
    if not options.save:
        return None
    if options.out:
        return Path(options.out)
    return folder / (suite.csv_name(exp.name) if suite is not None else f"{exp.name}.csv")


def _bench_on_cluster(exp, names, overrides, shapes, options: BenchOptions, with_best: bool,
                      progress: Progress, suite=None, by_shape: dict | None = None) -> Records:
    """bench on a Dask cluster (gpulab.run.sweep): every run once per card model among its GPUs."""
    per_card = []
    with sweep.open_cluster(options.workers, options.scheduler, options.lab_options()) as cluster:
        groups = cluster.groups()
        if options.save and options.out is not None and len(groups) > 1:
            raise GpulabError(f"out names one CSV and the cluster has {len(groups)} card models; leave it out")
        for group in groups:
            folder = card_folder(group.device.slug)
            specs, columns = _planned(exp, names, overrides, shapes, folder, with_best, options, progress, by_shape)
            group.preflight(specs)
            per_card.append(sweep_specs(exp, group, specs, folder, _csv_path(exp, folder, options, suite), progress,
                                        execute=cluster.execute, columns=columns, sanitize=options.sanitize))
    per_card[0].per_card = per_card
    return per_card[0]
