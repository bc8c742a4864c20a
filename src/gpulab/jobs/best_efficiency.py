"""What a card's runs say of a kernel's efficiency at a shape it never ran: the calibration half of
the best row's model (gpulab.jobs.best, rule 3, says how it is used).

The model's time for a config is its roof (the access model's bytes and the FLOPs against the card's
measured ceilings) over an efficiency read off measured runs: the config's own where it ran at the
shape or very near it (measured_here), else its variant's at the nearest runs of the same kind of
shape (efficiency: the median of model over measured time, with a fixed cost a round where those
runs fit one), times how the config fared beside its variant's fastest where both ran
(config_factor), plus what the runs show of a mechanism the access model cannot see
(unseen_cost). `EfficiencyReader` holds the runs and answers those questions; `best.Selector`,
which searches the configs and ranks them, is one, and supplies the one thing this half needs from
the other: the model of one config (`_estimate`).
"""

from __future__ import annotations

import dataclasses
import statistics

from gpulab.arith import cdiv
from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.jobs.calibration import (
    Calibration, Measured, StepFloors, fastest_per_config, fastest_per_shape, fixed_cost_fit, spanning, work_of,
)
from gpulab.jobs.cost import Card, Estimate, card_for, mostly_padding, sm_share
from gpulab.jobs.preference import MEASURED_HERE
from gpulab.jobs.siblings import unseen_seconds
from gpulab.jobs.tune import shape_distance

# A tuned shape this close (shape_distance: summed |log2| of the dimensions' ratios) speaks for the
# asked one: 4000^3 for 4096^3 (0.10), not 3072^3 (1.2).
VERY_NEAR = 0.15
CALIBRATION_ROWS = 3  # measured runs per variant its efficiency is the median of
FIT_ROWS = 6  # ... and at most the fixed cost below them is fitted to (Calibration.below)
BARE_MODEL = "(nothing measured on this card: the bare model)"
# How far the model's time per unit of work may move between a config's run and a shape very near it
# for the run to speak for the shape (EfficiencyReader._same_regime).
SAME_REGIME = 1.5


def alike(a: float, b: float) -> bool:
    """Whether two positive quantities of one kind are within SAME_REGIME of each other."""
    return max(a, b) <= SAME_REGIME * min(a, b)


class EfficiencyReader:
    """One experiment's measured runs on a card, read as efficiencies of the model at other shapes.
    `runs` may be another card's (`runs_from`: its results folder's name, `runs_card`: its
    ceilings): each variant's efficiency is then what it reached there against that card's ceilings,
    said so (lent_note), and no config counts as timed on this card (`card`). `tune_rows`: the tunes'
    every config, which config_factor reads and the efficiencies do not."""

    def __init__(self, experiment: Experiment, card: Card | None = None, runs: list[Measured] = (),
                 runs_card: Card | None = None, runs_from: str = "", tune_rows: list[Measured] = ()):
        self.experiment = experiment
        self.card = card or card_for(None)
        self.runs_card = runs_card or self.card
        self.runs_from = runs_from
        self.variants = [v for v in experiment.variants if not v.expected_wrong]
        self.runs = fastest_per_shape(list(runs))
        # Each config's own fastest run at each shape: the variant's calibration above keeps only
        # its fastest config per shape, which would lend coalesce's rows VEC=1 the efficiency its
        # VEC=4 reached beside it (0.98 against its own 0.63, H200 2026-12-04) and tie the two.
        # Lent runs time no config on this card (measured_here, timed_somewhere), but a config they
        # timed on shapes of a kind is still the evidence that wins over one nobody timed (timed_alike).
        self.alike_runs = fastest_per_config(list(runs))
        self.config_runs = {} if runs_from else self.alike_runs
        self._runs_modelled: dict[tuple, tuple[float | None, float]] = {}  # _run_model's memo
        self._efficiency: dict[tuple, tuple] = {}
        # Memos of pure functions of (variant, shape, ...): each llm shape asks them thousands of times
        # (every variant's efficiency reads every other's: _typical_efficiency).
        self._classes: dict[tuple, str] = {}
        self._own: dict[tuple, Calibration | None] = {}
        self._factors: dict[tuple, tuple[float, str] | None] = {}
        self._fastest_at = {name: {run.shape: run for run in found} for name, found in self.runs.items()}
        # (variant, shape): each config's fastest run there, the tunes' every config included
        self._runs_at: dict[tuple, list[Measured]] = {}
        for (name, _), found in fastest_per_config(list(runs) + list(tune_rows)).items():
            for run in found:
                self._runs_at.setdefault((name, run.shape), []).append(run)
        self._unseen: dict[tuple, tuple[float, str] | None] = {}
        # The blocks an SM held as each config ran, the fewest where its runs differ (sgemm's gv in one
        # config: 3 and 4 on the H200): Estimate.compiled_resident, on cards of the runs' architecture.
        self.compiled_resident: dict[tuple, int] = {}
        for run in (r for r in list(runs) + list(tune_rows) if r.resident):
            key = (run.variant, tuple(sorted(run.params.items())))
            self.compiled_resident[key] = min(self.compiled_resident.get(key, run.resident), run.resident)
        self.steps = StepFloors(experiment, list(runs), self.runs_card)

    def _estimate(self, v: Variant, params: Params, shape: Shape, modelled: bool,
                  efficiency: tuple[float, str] | None = None, card: Card | None = None) -> Estimate | None:
        """The model of one config (best.Selector's): what a run's efficiency is measured against."""
        raise NotImplementedError

    @property
    def lent_note(self) -> str:
        """What every efficiency read off another card's runs says of them ('' on this card's own)."""
        return f" ({self.runs_from}'s runs: none on this card yet)" if self.runs_from else ""

    # -- efficiency ----------------------------------------------------------------------------
    def shape_class(self, v: Variant, shape: Shape | tuple[int, ...], card: Card | None = None) -> str:
        """'memory' where the problem's FLOPs per compulsory byte are below `card`'s (default: this
        one's) ridge for the variant's compute ceiling (its rate over the copy rate), else 'compute':
        the same test as the % of copy column (records.ceilings.attach_copy)."""
        card = card or self.card
        values = shape.values if isinstance(shape, Shape) else tuple(shape)
        key = (v.name, values, card.source)
        if key not in self._classes:
            shape = shape if isinstance(shape, Shape) else self.experiment.shape(*shape)
            flops, rate = self.experiment.flops(shape), card.gflops(self.experiment, v)
            self._classes[key] = ("memory" if not flops or not rate
                                  or flops / self.experiment.bytes_moved(shape) < rate / card.copy_gbps
                                  else "compute")
        return self._classes[key]

    def efficiency(self, v: Variant, shape: Shape, params: Params | None = None,
                   roof_s: float | None = None, rounds: float = 1.0) -> tuple[float, str]:
        """(efficiency, where from) of `v` at `shape`: the median, over its CALIBRATION_ROWS
        measured shapes of the same class (shape_class) nearest to `shape` (shape_distance), of the
        model's time there over the measured one. Where it was measured on the other class only,
        that, but at most the lowest of the variants measured on this class (sgemm's v0, modelled
        well on squares, is not taken to stream a GEMV better than the kernels measured at one);
        where it was never measured, that lowest. The lowest, not the median: a kernel never timed
        on this kind of shape borrows no better than the weakest that was (with the median, v14,
        timed only on squares, was taken at 0.87-0.89 of its model at M = 128, where it ran at about
        0.25 of it, and gemm_bf16's t1 at 0.55 beat d0's own 0.56 at 13x9000x9000 once t4's runs at
        M <= 64 raised the median); where no variant was, 1 (the bare model)."""
        padded = mostly_padding(self.experiment, params, shape)
        key = (v.name, shape.values, padded)
        if key not in self._efficiency:
            kind = self.shape_class(v, shape)
            other = "memory" if kind == "compute" else "compute"
            own = self._own_efficiency(v, shape, kind, padded) or self._own_efficiency(v, shape, kind)
            if own and self.runs_from:
                own = dataclasses.replace(own, where=own.where + self.lent_note)
            self._efficiency[key] = kind, other, own, self._own_efficiency(v, shape, other)
        kind, other, own, elsewhere = self._efficiency[key]
        if own:
            return own.at(roof_s, rounds)
        typical = self._typical_efficiency(v, shape, kind, roof_s, rounds)
        if elsewhere and typical:
            found = (min(elsewhere.median, typical),
                     f"{elsewhere.where} ({other}-bound), capped at the lowest {kind}-bound")
        elif typical:
            found = typical, f"(unmeasured {kind}-bound: the lowest of the measured variants)"
        elif elsewhere:
            found = elsewhere.median, f"{elsewhere.where} ({other}-bound)"
        else:
            return 1.0, BARE_MODEL
        return found[0], found[1] + self.lent_note

    def measured_here(self, v: Variant, params: Params, shape: Shape) -> tuple[float, str] | None:
        """The config's own efficiency where it was timed at the shape or very near it (VERY_NEAR),
        doing there what the model says it does here (_same_regime): the median of model over measured
        time of those runs; None where it was not. A measurement of the config itself outranks every
        figure borrowed from other configs or shapes, a lending card's too (said so): the H200's
        tune had timed sgemm's sx in 64 x 32 tiles at 2048x31x4096; a fresh H100 lent the variant's
        fastest run there times a config factor instead, put it behind v12 and ran v12 at 2.08x
        sx's time at 2049x31x4093 (2026-12-06, call 55)."""
        key = tuple(sorted(params.items()))
        runs = [run for run in self.alike_runs.get((v.name, key), ())
                if shape_distance(shape, run.shape) <= VERY_NEAR and self._same_regime(v, params, shape, run)]
        ratios = [ratio for run in runs if (ratio := self._ratio(v, run)) is not None]
        if not ratios:
            return None
        nearest = min(runs, key=lambda run: shape_distance(shape, run.shape))
        return statistics.median(ratios), MEASURED_HERE + "x".join(map(str, nearest.shape)) + self.lent_note

    def _same_regime(self, v: Variant, params: Params, shape: Shape, run: Measured) -> bool:
        """Whether the model puts the config's time per unit of work (FLOPs, else bytes) at `shape`
        within SAME_REGIME of its time at the run's shape: a run very near in size can be far in what
        the kernel does, and its efficiency then says nothing of the shape. gemm_bf16's t0 reads rows
        of 777 elements (K odd) a few bytes at a time, 7x the L2 traffic of 776: its run at
        1000x3000x777 (65 us, 1.32x faster than that model) made it the pick at 1000x3000x776 at 9 us,
        where t4 ran 15 (H200, 2026-12-04)."""
        ratio = self._ratio(v, run)
        # Both on the card that ran it: another card's ceilings would move the model's time by theirs.
        here = self._estimate(v, params, shape, modelled=True, efficiency=(1.0, ""), card=self.runs_card)
        if ratio is None or here is None or here.roof_s <= 0:
            return True
        there = self.experiment.shape(*run.shape)
        per_unit_there = ratio * run.seconds / work_of(self.experiment, there)
        per_unit_here = here.roof_s / work_of(self.experiment, shape)
        return alike(per_unit_there, per_unit_here)

    def config_factor(self, v: Variant, params: Params, shape: Shape) -> tuple[float, str] | None:
        """On a memory-bound shape, how the config fares against the config its variant's efficiency
        is read from (the variant's fastest at each calibration shape: _own_efficiency), where the
        card timed both: at those shapes (the CALIBRATION_ROWS nearest of the kind) where its launch
        filled the SMs as it does here (_fills_alike) and its warps' chain of steps stood to the
        fastest's as it does here (_chains_alike), the median of its model-over-measured ratio
        over the fastest's, at most 1; and where from. A config its tunes never timed there takes the
        median over the configs they did (a typical one, not the fastest of many draws), as does one
        timed only where it filled the SMs otherwise. None where nothing was timed beside the
        fastest, or the factor is 1.

        Without it every config borrows its variant's fastest one's efficiency: d0 in G=2 U=2 took
        G=1 U=4's and was picked at 1x5120x3000 and 7x4096x4096, where G=1 U=4 ran 1.18-1.36x faster
        (gpulab ab, an H100, 2026-12-05; its tunes had timed G=2 U=2 1.07-1.30x G=1 U=4's time at the
        decode shapes nearest). At most 1: uncapped, kc in 256-wide tiles, 1.67x kc's fastest at
        128x4096x4096 but modelled slower still, became the pick at 128x4096x1000 and ran 1.30x the
        pick before. Memory-bound shapes only: a factor on every shape moved 37 picks, which ran
        1.07x slower overall (notebook/probes/config_factor/, docs/notes/gemm_bf16-notes.md)."""
        key = (v.name, tuple(sorted(params.items())), shape.values)
        if key not in self._factors:
            self._factors[key] = self._config_factor(v, params, shape)
        return self._factors[key]

    def _config_factor(self, v: Variant, params: Params, shape: Shape) -> tuple[float, str] | None:
        kind = self.shape_class(v, shape)
        if kind != "memory":
            return None
        nearest = self._nearest_runs(v, shape, kind)[:CALIBRATION_ROWS]
        factors, where = [], ""
        # Only where the config's launch filled the SMs alike (_fills_alike): at 128 tokens t3 and t4
        # in 256-wide tiles, 24-40 tiles on 132 SMs at N = 6144-10240, ran 0.92 of the efficiency of
        # 128-wide tiles, which read at N = 28672 (112 tiles) put them behind, where they ran fastest.
        # And only where its warps' chains of steps stood to the fastest's as they do here (_chains_alike).
        for fastest in (run for run in nearest if self._fills_alike(v, params, shape, run.shape)
                        and self._chains_alike(v, params, run.params, shape, run.shape)):
            run = next((r for r in self._runs_at.get((v.name, fastest.shape), ()) if r.params == params), None)
            if run is not None and (f := self._factor(v, run)) is not None:
                factors.append(f)
                where = where or "x".join(map(str, run.shape))
        how = "this config {:.2f}x the efficiency of its variant's fastest where both ran (at {})"
        if not factors and nearest:
            # Never timed there: a typical config of its variant there, not the fastest of many draws.
            factors = [f for run in self._runs_at.get((v.name, nearest[0].shape), ())
                       if (f := self._factor(v, run)) is not None]
            where = "x".join(map(str, nearest[0].shape))
            how = "an untimed config: {:.2f}x, the median of its variant's configs timed at {}"
            if len(factors) < 2:
                return None
        if not factors:
            return None
        factor = min(1.0, statistics.median(factors))
        return None if factor == 1.0 else (factor, how.format(factor, where))

    def _fills_alike(self, v: Variant, params: Params, shape: Shape, there: tuple[int, ...]) -> bool:
        """Whether the config's launch gives work to shares of the SMs within SAME_REGIME of each other
        at `shape` on this card and at the run's shape `there` on the card that ran it (its blocks, or
        a persistent grid's tiles, over the SMs, at most 1). A config that leaves most SMs idle at one
        shape and fills them at another is held back by other things at each (on a memory-bound shape:
        how many SMs pull from DRAM, which no limit of the model counts), so its standing beside its
        variant's fastest at one says little of the other."""
        mine = sm_share(v, params, shape, self.card.sms)
        theirs = sm_share(v, params, self.experiment.shape(*there), self.runs_card.sms)
        return not mine or not theirs or alike(mine, theirs)

    def _chain(self, v: Variant, params: Params, shape: Shape, card: Card) -> int:
        """The steps one after another of the config's busiest warp over the launch on `card`: its
        rounds of blocks (Estimate.slots: the blocks an SM held as the card ran it; one round where
        that is unknown) times its steps a round (Variant.warp_k_steps); 0 where the variant does not
        say or there is no launch."""
        steps = v.warp_k_steps(params, shape)
        found = self._estimate(v, params, shape, modelled=False, efficiency=(1.0, ""), card=card) if steps else None
        if found is None:
            return 0
        return steps * (cdiv(found.units, found.slots) if found.slots else 1)

    def _chains_alike(self, v: Variant, params: Params, fastest: Params, shape: Shape,
                      there: tuple[int, ...]) -> bool:
        """Whether the config's chain of steps over that of its variant's fastest config at the run's
        shape `there` (on the card that ran it) is within SAME_REGIME of the same ratio at `shape` on
        this card: where a config waits through twice the steps of another at one shape and as many
        at the next, its standing at one says little of the other (Variant.warp_k_steps). True where
        the variant gives no chain."""
        run_shape = self.experiment.shape(*there)
        mine_there = self._chain(v, params, run_shape, self.runs_card)
        theirs_there = self._chain(v, fastest, run_shape, self.runs_card)
        mine, theirs = self._chain(v, params, shape, self.card), self._chain(v, fastest, shape, self.card)
        if not (mine_there and theirs_there and mine and theirs):
            return True
        return alike(mine_there / theirs_there, mine / theirs)

    def _factor(self, v: Variant, run: Measured) -> float | None:
        """A run's model-over-measured ratio over that of its variant's fastest run at its shape (1 where
        it is that one)."""
        fastest = self._fastest_at[v.name].get(run.shape)
        if fastest is None or fastest.seconds >= run.seconds:
            return 1.0
        mine, theirs = self._ratio(v, run), self._ratio(v, fastest)
        return mine / theirs if mine and theirs else None

    def timed_somewhere(self, estimate: Estimate) -> bool:
        """Whether the estimate's config (variant and params) was timed on this card at any shape."""
        return (estimate.variant.name, tuple(sorted(estimate.params.items()))) in self.config_runs

    def timed_alike(self, estimate: Estimate) -> bool:
        """Whether the config was timed on this card (or, where its runs are lent, on the lending
        card) at a shape of the estimate's kind (shape_class): the evidence that wins over untimed
        configs (prefer_measured) and overrules a tune (pick). sgemm's sx in 32-wide tiles, timed only
        where N <= 33 (memory-bound), came out 1% ahead of v13 at 128x4096x4096 and ran 1.30x its time
        (an H100, 2026-12-05; notebook/probes/sx_moved/). Lent runs count: on a fresh H100, d0 in G=4,
        a config no card had timed, came out ahead of the G=1 the H200's tune had timed at every decode
        shape, and ran 0.52x cuBLAS BF16 at 7x5120x3072 (2026-12-06, notebook/probes/alone-h100/)."""
        v = estimate.variant
        runs = self.alike_runs.get((v.name, tuple(sorted(estimate.params.items()))), ())
        kind = self.shape_class(v, estimate.shape)
        return any(self.shape_class(v, run.shape, self.runs_card) == kind for run in runs)

    def _nearest_runs(self, v: Variant, shape: Shape, kind: str) -> list[Measured]:
        """`v`'s runs (its fastest at each shape) of `kind`, nearest `shape` first: what its efficiency
        there is read from (_own_efficiency) and what a config is held against (config_factor)."""
        # A run's class is the one it ran in, on the card that ran it (another card's ridge lies
        # elsewhere: the H100's is 1.4x the H200's for BF16: 321 against 226 FLOP per byte)
        runs = [r for r in self.runs.get(v.name, ()) if self.shape_class(v, r.shape, self.runs_card) == kind]
        return sorted(runs, key=lambda r: (round(shape_distance(shape, r.shape), 9), r.shape))

    def _own_efficiency(self, v: Variant, shape: Shape, kind: str, padded: bool | None = None) -> Calibration | None:
        """`v`'s CALIBRATION_ROWS nearest runs of `kind` (and, where `padded` is given, whose tiles
        were as mostly padding as that: mostly_padding): the median of their model-over-measured
        ratios and, on memory-bound shapes, the fixed cost and slope they fit (fixed_cost_fit)."""
        key = (v.name, shape.values, kind, padded)
        if key not in self._own:
            runs = [r for r in self._nearest_runs(v, shape, kind)
                    if padded is None or mostly_padding(self.experiment, r.params, r.shape) == padded]
            ratios = [(ratio, run) for run in runs[:FIT_ROWS] if (ratio := self._ratio(v, run)) is not None]
            whole = self._own_efficiency(v, shape, kind, False) if padded else None  # its fixed cost: the kernel's
            points = [(r * run.seconds, run.seconds, self._run_model(v, run)[1]) for r, run in ratios]
            fit = below = None
            if ratios and kind == "memory":
                fit = fixed_cost_fit(points[:CALIBRATION_ROWS], whole.fit[1] if whole and whole.fit else None)
                below = None if fit else fixed_cost_fit(spanning(points, CALIBRATION_ROWS))
            found = [r for r, _ in ratios[:CALIBRATION_ROWS]]
            self._own[key] = (Calibration(statistics.median(found), "from " + "x".join(map(str, ratios[0][1].shape)),
                                          fit, max(1.0, max(found)), below,
                                          min(x for x, _, _ in points[:CALIBRATION_ROWS])) if ratios else None)
        return self._own[key]

    def _typical_efficiency(self, v: Variant, shape: Shape, kind: str, roof_s: float | None = None,
                            rounds: float = 1.0) -> float | None:
        """The lowest of the other measured variants' efficiencies on `kind`-bound shapes near `shape`,
        each at a launch the model puts at `roof_s` in `rounds` (Calibration.at: its fixed cost
        counted). Their medians alone lent gemm_bf16's t1, never timed memory-bound, 0.27 of its
        model at 3x2304x768, 6.4 us, where every variant timed small pays 7-11 us a round: it ran
        11.7 us on an H100, d0 6.4 (2026-12-06, call 90)."""
        lenders = [other for other in self.variants if other.name in self.runs and other.name != v.name]
        found = [own.at(roof_s, rounds)[0] for other in lenders if (own := self._own_efficiency(other, shape, kind))]
        return min(found) if found else None

    def _ratio(self, v: Variant, run: Measured) -> float | None:
        """The model's time over the measured one, for one measured run (None: the config no longer runs)."""
        return self._run_model(v, run)[0]

    def _run_model(self, v: Variant, run: Measured) -> tuple[float | None, float]:
        """(_ratio, Estimate.rounds) of one measured run, the bare model evaluated once for both."""
        # Its seconds too: a suite's and a tune's run of one config at one shape have a ratio each.
        key = (v.name, tuple(run.params.items()), run.shape, run.seconds)
        if key not in self._runs_modelled:
            shape = self.experiment.shape(*run.shape)
            est = None
            if v.constraints(run.params, shape) is None:
                est = self._estimate(v, run.params, shape, modelled=True, efficiency=(1.0, ""), card=self.runs_card)
            ratio = est.roof_s / run.seconds if est is not None and est.roof_s > 0 else None
            self._runs_modelled[key] = ratio, est.rounds if est is not None else 1.0
        return self._runs_modelled[key]


    def unseen_cost(self, v: Variant, params: Params, sibling: Params, shape: Shape) -> tuple[float, str] | None:
        """What the card's runs show a config the access model declines takes beyond its sibling's
        bytes (jobs/siblings.py), at the shapes of its kind nearest `shape`; None where none ran."""
        name = next(k for k in params if params[k] != sibling.get(k))
        key = (v.name, name, params[name], sibling[name], shape.values)
        if key not in self._unseen:
            kind = self.shape_class(v, shape)
            shapes = {s for (n, s) in self._runs_at if n == v.name and self.shape_class(v, s, self.runs_card) == kind}
            self._unseen[key] = unseen_seconds(name, params[name], sibling[name], shape.values, shapes,
                                               lambda s: self._runs_at[(v.name, s)],
                                               lambda run: (r := self._ratio(v, run)) and r * run.seconds)
        return self._unseen[key]
