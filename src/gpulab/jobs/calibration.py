"""The card's measured runs that the best-row model (gpulab.jobs.best) calibrates on: each timed
row of results/<gpu>/<experiment>.csv and each tuned config's time (Measured, measured_runs), every
config its tunes timed (tune_runs), another card's runs, tune rows and tuned configs where a card
has no runs of its own yet (lent_evidence), and what the model reads off them: the fastest run of
each variant and config at each shape, and a fixed cost a round plus a multiple of the model where
memory-bound runs fit one (fixed_cost_fit, Calibration). What a card knows, its own or lent, in one
place (Evidence, evidence): best's Selector and the model alone (model_errors.Unseen) are built
from it."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.jobs.cost import REFERENCE_SOURCE, Card, card_for, k_chain
from gpulab.jobs.tune import accepted_params, load_tuned, shape_of, tune_path
from gpulab.params import parse_params_label
from gpulab.records import LAB_RESULTS, RUN_COLUMNS, read_csv, variant_ran


@dataclasses.dataclass(frozen=True)
class Measured:
    variant: str
    params: Params
    shape: tuple[int, ...]
    seconds: float
    # The blocks an SM held at once as the kernel ran (the row's theoretical_blocks_per_sm: registers
    # counted); 0 where the row has none (a tune's pick read from tuned.json).
    resident: int = 0


def timed_runs(experiment: Experiment, path: Path) -> list[Measured]:
    """Every correct, timed row of a results CSV as a Measured (a best row counts as the variant it
    ran), where the variant still takes its params; a damaged file is refused (DamagedFile), never
    read as untimed."""
    out = []
    names = {v.name: v for v in experiment.variants}
    for r in read_csv(path, required=RUN_COLUMNS):
        name = variant_ran(r)
        if name not in names or not r.get("correct") or not r.get("time_ms") or r.get("skip_reason"):
            continue
        try:
            params = names[name].completed_params(parse_params_label(r.get("params")))
            shape = shape_of(r["shape"])
        except (ValueError, TypeError, KeyError):
            continue
        if params is not None and len(shape) == len(experiment.dims):
            fits = r.get("theoretical_blocks_per_sm")
            out.append(Measured(name, params, shape, float(r["time_ms"]) / 1e3, int(float(fits)) if fits else 0))
    return out


def tune_runs(experiment: Experiment, folder: Path) -> list[Measured]:
    """Every config the experiment's tunes timed on the card whose results are in `folder` (tune-
    <experiment>-<variant>.csv, timed_runs): how a variant's configs fared beside its fastest
    (Selector.config_factor), never its efficiency. Read whatever source timed them: ks's tune
    predates its fixup change (2-8% faster on the H200, 2026-12-05), which moved its configs alike."""
    out = []
    for v in experiment.variants:
        path = tune_path(folder, experiment.name, v.name)
        if path.exists():
            out += [run for run in timed_runs(experiment, path) if run.variant == v.name]
    return out


def measured_runs(experiment: Experiment, folder: Path | None, table: dict) -> list[Measured]:
    """This card's timed runs of the experiment's variants: every correct row of results/<gpu>/
    <experiment>.csv (timed_runs), and each tuned config's time where its tune found it fastest. A
    suite's rows (in their own files) are never read: a figure measured at a suite's shapes is not
    fitted to them."""
    names = {v.name: v for v in experiment.variants}
    path = Path(folder) / f"{experiment.name}.csv" if folder is not None else None
    out = timed_runs(experiment, path) if path is not None and path.exists() else []
    for name, entry in (table or {}).items():
        if name not in names or not isinstance(entry, dict):
            continue
        for label, best in (entry.get("by_shape") or {}).items():
            params = accepted_params(names[name], (best or {}).get("params"))
            rate = (best or {}).get("rate")
            if params is None or not rate or len(shape_of(label)) != len(experiment.dims):
                continue
            shape = experiment.shape(*shape_of(label))
            out.append(Measured(name, params, shape.values, tuned_seconds(experiment, shape, rate)))
    return out


def work_of(experiment: Experiment, shape: Shape) -> float:
    """What a rate counts at `shape`: its FLOPs, or the bytes it must move where the experiment
    counts no FLOPs."""
    return experiment.flops(shape) or experiment.bytes_moved(shape)


def tuned_seconds(experiment: Experiment, shape: Shape, rate: float) -> float:
    """The time of a tune's config from the rate tuned.json keeps: GFLOP/s, or GB/s where the
    experiment counts no FLOPs (work_of)."""
    return work_of(experiment, shape) / (float(rate) * 1e9)


FIXED_COST_SPAN = 1.5  # the model's times of the runs a fixed cost is fitted to must span this ratio


def spanning(points: list[tuple[float, float, float]], least: int) -> list[tuple[float, float, float]]:
    """The first `least` of `points` (model seconds, measured seconds, rounds; nearest first) and,
    where their model times span less than FIXED_COST_SPAN, the next ones until they do: the runs a
    fixed cost below them is fitted to (Calibration.below)."""
    for count in range(least, len(points) + 1):
        xs = [x for x, _, _ in points[:count]]
        if xs and min(xs) > 0 and max(xs) >= FIXED_COST_SPAN * min(xs):
            return points[:count]
    return points


def fixed_cost_fit(points: list[tuple[float, float, float]], fixed: float | None = None) -> tuple[float, float] | None:
    """(slope, fixed) of measured = slope * model + fixed * rounds, least squares over (model seconds,
    measured seconds, rounds): `rounds` the blocks the busiest SM runs one after another
    (Estimate.rounds), each paying a fixed cost (its pipeline's fill, its tile's epilogue, a split's
    partials); where every point has the same rounds this is a fixed cost per launch. Only where the
    points allow one: at least two, the model's times spanning FIXED_COST_SPAN, and the fit's fixed
    cost and slope positive. None otherwise (the ratio's median stands). gemm_bf16's d0 at 1 to 16
    rows ran 1.05x its model plus 9 us (H200, 2026-12-04), so its efficiency measured on small
    weights (0.69 at 12288x4096) undersold it on large ones (0.91 at 57344x8192).
    With `fixed` given (the kernel's own, fitted where its tiles hold rows), only the slope is fitted
    (least squares, from one point on): a fixed cost a round is the kernel's pipeline fill and
    epilogue, whatever its rows hold, and runs whose row tiles are mostly padding differ in their
    slope. Fitted to padded runs alone, kc's came out at 2.6 us a round and 2.4x the model (runs of
    15-62 us modelled), 7.3 us from its other runs: at 7x3000x1000 (1.6 us modelled) the first put it
    at 6.5 us, ahead of d0, and it ran 11.6 on an H100, d0 7.9 (2026-12-06, call 81)."""
    if fixed is not None:
        sxx = sum(x * x for x, _, _ in points)
        slope = sum(x * (y - fixed * r) for x, y, r in points) / sxx if sxx > 0 else 0.0
        return (slope, fixed) if slope > 0 else None
    if len(points) < 2:
        return None
    xs = [x for x, _, _ in points]
    if min(xs) <= 0 or max(xs) < FIXED_COST_SPAN * min(xs):
        return None
    # Normal equations of y = s x + f r (no intercept beyond the rounds' fixed cost)
    sxx = sum(x * x for x, _, _ in points)
    srr = sum(r * r for _, _, r in points)
    sxr = sum(x * r for x, _, r in points)
    sxy = sum(x * y for x, y, _ in points)
    sry = sum(r * y for _, y, r in points)
    det = sxx * srr - sxr * sxr
    if det <= 1e-12 * sxx * srr:
        return None
    slope = (sxy * srr - sry * sxr) / det
    fixed = (sxx * sry - sxr * sxy) / det
    return (slope, fixed) if slope > 0 and fixed > 0 else None


@dataclasses.dataclass(frozen=True)
class Calibration:
    """A variant's efficiency from its measured runs near a shape: the median of their model-over-
    measured ratios, where the runs are (`where`), and the fixed cost they fit, where they fit one."""

    median: float
    where: str
    fit: tuple[float, float] | None = None  # (slope, fixed seconds a round): fixed_cost_fit
    # The most the fit may lend: its runs' highest ratio, or the model's roof (1) where they fell short of
    # it. A fit with a slope under 1 grows without bound past its runs: t3's at 128 tokens (0.64x the
    # model plus 17 us, from its runs at K = 8192) lent it 1.36 at 128x8192x28672, where it ran 0.84.
    most: float = math.inf
    # Where the runs fit no fixed cost (their model times too alike): the line fitted to more of them
    # (spanning), and the least model time of the runs the median is of. Below that time the kernel
    # still pays its fixed cost, so the median alone would put it too fast. Above, the median stands:
    # the farther runs the line needed are less like the shape (ks's runs at 16 tokens, in 16-wide
    # tiles, lent it 0.83 of its model at 128x8192x28672, where its 128-wide tiles ran 0.77).
    below: tuple[float, float] | None = None
    least_s: float = 0.0

    def at(self, roof_s: float | None, rounds: float = 1.0) -> tuple[float, str]:
        """(efficiency, where from) for a candidate the model puts at `roof_s` in `rounds` (Estimate.
        rounds): the fit's where there is one (the model's time over the line's), else the median, or
        below the runs, the lower of the median and the line fitted to more runs (`below`)."""
        if not roof_s:
            return self.median, self.where
        if self.fit is not None:
            return (min(self.most, _on_line(self.fit, roof_s, rounds)),
                    f"{self.where} ({_line_label(self.fit)})")
        below = self.below is not None and roof_s < self.least_s and _on_line(self.below, roof_s, rounds)
        if below and below < self.median:
            return below, f"{self.where}; below its runs, {_line_label(self.below)}, fitted to more of them"
        return self.median, self.where


def _on_line(line: tuple[float, float], roof_s: float, rounds: float) -> float:
    """The efficiency a (slope, fixed seconds a round) line gives a launch modelled at `roof_s`."""
    slope, fixed = line
    return roof_s / (slope * roof_s + fixed * rounds)


def _line_label(line: tuple[float, float]) -> str:
    slope, fixed = line
    return f"{fixed * 1e6:.3g} us a round + {slope:.3g}x the model"


class StepFloors:
    """What the k-loops that wait on their own loads every step (Variant.k_step_param) take at least
    on a card: a launch's waves times its steps (cost.k_chain) at the least step the variant's runs
    allow. Each run's step is its time over its waves times its steps; a step is a latency plus work
    that grows with its depth, so one d deep takes at least that of a run D deep where d >= D, and at
    least d/D of it where d < D. v1 in 8-wide tiles ran 0.34 us a step at 1x8192x8192 on the H200
    (1024 steps, one wave), and 125 steps of it took 42.3 us at 7x3000x1000 on an H100, where the
    model had put it at 15 us and picked it; gemm_bf16's t0 stepped 3.3 us in 128 x 128 tiles 64
    deep on the H200 (1024^3) and 3.3 us in 32 x 64 tiles 32 deep on an H100 (512^3, 52.2 us where
    the model had 6.2): the latency, more than the work."""

    def __init__(self, experiment: Experiment, runs: list[Measured], runs_card: Card):
        self.experiment, self.runs, self.runs_card = experiment, list(runs), runs_card
        self._least: dict[tuple, Measured | None] = {}

    def least(self, variant: Variant, depth: int) -> Measured | None:
        """The run that bounds a step `depth` deep lowest, its seconds that bound; None where the
        variant ran nowhere."""
        key = (variant.name, depth)
        if key not in self._least:
            found = []
            for run in (run for run in self.runs if run.variant == variant.name):
                chain = k_chain(variant, run.params, self.experiment.shape(*run.shape), self.runs_card.sms,
                                self.runs_card.arch)
                if chain:
                    scale = min(1.0, depth / run.params[variant.k_step_param])
                    found.append(dataclasses.replace(run, seconds=scale * run.seconds / (chain[0] * chain[1])))
            self._least[key] = min(found, key=lambda r: r.seconds) if found else None
        return self._least[key]

    def least_s(self, variant: Variant, params: Params, shape: Shape, card: Card) -> tuple[float, str] | None:
        """(seconds, why) the config's k-loop takes at least at `shape` on `card`; None where its
        variant's k-loop is pipelined or never ran."""
        chain = k_chain(variant, params, shape, card.sms, card.arch)
        step = self.least(variant, params[variant.k_step_param]) if chain else None
        if step is None:
            return None
        return (chain[0] * chain[1] * step.seconds, f"{chain[0]} x {chain[1]} k-steps of at least "
                f"{step.seconds * 1e6:.2g} us (its run at {'x'.join(map(str, step.shape))})")


def fastest_per_shape(runs: list[Measured]) -> dict[str, list[Measured]]:
    """Per variant, its fastest run at each shape it ran."""
    by_variant: dict[str, dict[tuple, Measured]] = {}
    for run in runs:
        shapes = by_variant.setdefault(run.variant, {})
        if run.shape not in shapes or run.seconds < shapes[run.shape].seconds:
            shapes[run.shape] = run
    return {name: sorted(shapes.values(), key=lambda r: r.shape) for name, shapes in by_variant.items()}


def fastest_per_config(runs: list[Measured]) -> dict[tuple, list[Measured]]:
    """Per (variant, params), its fastest run at each shape it ran."""
    by_config: dict[tuple, dict[tuple, Measured]] = {}
    for run in runs:
        shapes = by_config.setdefault((run.variant, tuple(sorted(run.params.items()))), {})
        if run.shape not in shapes or run.seconds < shapes[run.shape].seconds:
            shapes[run.shape] = run
    return {key: list(shapes.values()) for key, shapes in by_config.items()}


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What a card knows of an experiment, which the best-row model (gpulab.jobs.best.Selector)
    is built from: its tune (`table`: tuned.json's entry), the card the model's times are for
    (`card`), the runs its efficiencies come from and the tunes' rows its configs are weighed by;
    where those runs are another card's, that card's ceilings (`runs_card`) and folder name
    (`runs_from`), and that card's tune (`lent_table`): its configs are candidates here, never
    picks. gpulab.jobs.model_errors.Unseen builds from the same, less what lies near one shape."""
    table: dict
    card: Card
    runs: list[Measured]
    tune_rows: list[Measured] = ()
    runs_card: Card | None = None
    runs_from: str = ""
    lent_table: dict = dataclasses.field(default_factory=dict)


def lent_evidence(experiment: Experiment, folder: Path | None) -> Evidence | None:
    """What the first other card (by name) with runs of the experiment in `folder`'s results root,
    else in LAB_RESULTS (the runs gpulab's repository recorded, where it runs from a clone: a user's
    own results folder, outside the clone, starts empty), knows of it: its runs, its tunes' rows, its
    ceilings (runs_card) and folder name (runs_from), and its tune as `lent_table` (its `table`, this
    card's, is left empty: nothing the other card tuned is a pick here). A card whose files cannot be
    read is passed over. `folder` None (no card and no results named): LAB_RESULTS alone. None where
    there is none."""
    seen: set[Path] = set()
    own = folder.resolve() if folder is not None else None
    for root in ((folder.parent,) if folder is not None else ()) + (LAB_RESULTS,):
        if not root.is_dir() or root.resolve() in seen:
            continue
        seen.add(root.resolve())
        others = sorted(p for p in root.iterdir() if p.is_dir() and p.resolve() != own)
        for other in others:
            try:
                table = load_tuned(other).get(experiment.name, {})
                found = measured_runs(experiment, other, table)
                if found:
                    card = card_for(other)
                    return Evidence({}, card, found, tune_runs(experiment, other), runs_card=card,
                                    runs_from=other.name, lent_table=table)
            except GpulabError:  # a damaged file of another card: not this card's to fail on
                continue
    return None


def evidence(experiment: Experiment, folder: Path | None) -> Evidence:
    """What the card whose results are in `folder` (results/<gpu>/: tuned.json, the experiment's
    CSV, ceilings.csv; None: nothing tuned or measured, the H200's reference ceilings) knows of the
    experiment. Where that card has no run of it yet, the runs of another card beside it, else of
    one in the results gpulab's repository recorded (lent_evidence), stand in for the efficiencies: the
    bare model holds every kernel to its roof, and with it the ladder's first rungs (sgemm's v1 at
    16x4096x4096, v2 at 128x4096x4096) came out the pick. That card's tuned configs stand in for
    the candidates (Selector's seeds), never for picks: with the declared defaults alone, a fresh H100
    ran d0 in G=2 U=2 and G=4 U=1 at every decode shape, never in the G=1 U=4 the H200's tune had
    found fastest at all eight it tuned (2026-12-06). Where the card has no ceilings measured
    either, the lending card's stand in for them too: the runs' efficiencies were read against
    those, and the reference values differ from them by kernel (the reference's TF32 rate is 0.81
    of the H200's measured one, its FMA rate 0.97)."""
    table = load_tuned(folder).get(experiment.name, {}) if folder is not None else {}
    runs = measured_runs(experiment, folder, table)
    tune_rows = tune_runs(experiment, Path(folder)) if folder is not None else []
    lent = lent_evidence(experiment, Path(folder) if folder is not None else None) if not runs else None
    own = card_for(folder)
    if lent is None:
        return Evidence(table, own, runs, tune_rows)
    # The model's times are for this card (its ceilings, where measured), its efficiencies and
    # candidate configs the other card's.
    return dataclasses.replace(lent, table=table, card=lent.card if own.source == REFERENCE_SOURCE else own)
