"""gpulab's best kernel for a shape: which variant and params to run, and why.

`gpulab bench` (and gpulab.api.bench) adds a `best` row per shape, checked and timed like every other
row, its `picked` column the variant it ran and its `chosen_by` column why; `gpulab best` (gpulab.api.
best) says what it would run, with no GPU. The rule, in full:

1. Tuned here: where this card's tune (results/<gpu>/tuned.json, jobs/tune.py) timed configs at the
   shape, or very near it (shape_distance <= VERY_NEAR: 4000^3 for 4096^3), the fastest tuned there
   runs ('tuned here', 'tuned at 4096x4096x4096'). Any tuned variant counts, whatever its name; one
   the experiment no longer has, or whose params or constraints refuse the shape, is left out.
   Unless the model expects a variant that was not tuned there to run at least 10% faster than the
   tune's fastest, in a config the card has timed somewhere (rivals_ahead), and the card did not
   time that variant there slower than the tune (Selector.lost_here): a tune of one variant says
   which of its configs is best, not which variant is, so there the model chooses (rule 2) among the
   configs the card has timed on shapes of this kind (what overrules a measured tune is measured
   too: Selector.timed_alike), the tuned config among them with its own measured time, and the row's
   chosen_by says what the tune was passed over for; where the model still puts the tuned config
   first, it stays 'tuned here'.
2. Else a model chooses among candidates: every variant the card's architecture runs (demonstrations
   never), each at its tuned params for the shape, its declared defaults, every config a tune found
   best anywhere (on a card with no runs of its own, the lending card's tunes: candidates, never
   picks), the experiment's own default for the shape (Experiment.best_default), and the
   one-param moves from the first two that change its grid or its padded work (a move its
   constraints refuse is repaired by a second param where one can; the blocks an SM runs at once,
   a variant's resident_param, are never moved: registers decide them, which the model cannot see);
   every one its constraints accept, at most MAX_CONFIGS per variant, kept by the cheap bound below.
3. The model of one candidate (Estimate), on this card's measured ceilings (records/ceilings.py):
   - work: the launch's blocks, and its tiles, ceil(M/BM) * ceil(N/BN) where the params name BM and
     BN (else each block is one); with CLUSTER, ceil(M/(BM*CLUSTER)) * CLUSTER * ceil(N/BN): a
     cluster's blocks take consecutive row tiles, those past M computing padding (t4, v14). More
     blocks than tiles are a split over K where the access model shows partials (else the extra
     blocks idle: a cluster's past M); fewer loop over the tiles (a persistent grid), evenly where
     they split them (stream-K: also where the access model cannot say, unless the variant's
     stream_k_param says its tiles go whole). A split that adds its partials in a cluster's shared
     memory shows none in global memory: there the blocks that store a share of the output tell it
     from a cluster padded past M (active_blocks in model/predict.py), or the variant's split_param
     does (kc's SPLIT: where N is under its bands one block a tile stores). The busiest SM's share
     of the work over an even share is the quantization q >= 1 (24 tiles on 132 SMs: 5.5; 250
     blocks: 1.06). The padded tiles compute whole (tiles*BM*BN of M*N, K rounded up to BK).
   - time = max(compute, DRAM, L2) + partials + fixup + staging: compute = q x the padded FLOPs /
     the variant's compute ceiling, over the share of an SM's 4 warp schedulers its resident warps
     keep (schedulers_busy: one block of 2 warps an SM computes at half its rate at best) and, for a
     CUDA-core kernel, over the share of a scheduler's issue rate its few warps keep (latency_hidden:
     one warp a scheduler hides no latency); DRAM = the compulsory bytes (Experiment.bytes_moved, or
     the kernel's own where its access model reads more: v14's split copies) / the copy ceiling,
     times the tail where the launch runs more than one wave of the blocks an SM held as the card ran
     that config (its rows' theoretical_blocks_per_sm, registers counted) and the last leaves slots
     idle (cost.TAIL_IDLE_COST a slot, over the blocks: Estimate.tail); L2 =
     q x what the SMs load and store (the access model's global sectors x 32 and TMA bytes,
     model/predict.py) / the L2 read ceiling; the memory terms over the share of the warps that
     issue the loads, weighted by what each load moves (a launch whose guards idle 7 warps in 8 has
     an eighth of the loads in flight: sgemm's v0 at M = 1; a split's block counts its own slice's
     trips); partials = what a split stores beyond the output (the access model's requested store
     bytes, else a BM x BN tile of FP32 accumulators a block: cost.split_partials_bytes), written and
     read back at the copy ceiling; fixup = where a tile's slices are added one after another
     (Variant.serial_fixup), its partials at one SM's share of the L2 read ceiling; staging = what
     the variant's stage step moves before the kernel (Variant.stage_bytes) at the copy ceiling.
     Where the access model declines a config or is too large to evaluate (LANE_BUDGET), the L2
     bytes of the nearest config it models (one param changed), else of the tiles' panels of A and
     B; one merely too large takes a sibling's of the same launch whole, its partials too.
   - divided by an efficiency read off the card's runs (best_efficiency.py): the config's own
     where it was timed at the shape or very near it, and the model's time per FLOP there is
     within SAME_REGIME of the shape's (measured_here: the median
     of model over measured time of those runs; a config timed there also wins over untimed ones
     the model puts less than MEASURED_EDGE ahead, and failing one, a config timed on this card at
     a shape of the same kind wins so over the others), else by the variant's efficiency: the
     median, over its CALIBRATION_ROWS measured runs on this card nearest the shape among shapes of
     the same kind (memory-bound: flops per compulsory byte below the ridge of its compute ceiling
     over the copy), of the model's time there over the measured one (runs: results/<gpu>/
     <experiment>.csv and the tune's picks, never a suite's rows); for a config whose row tiles are
     mostly padding (M under a quarter of BM: mostly_padding), among runs whose tiles were too,
     where there are any. On a memory-bound shape, where those runs' measured times fit a fixed
     cost a round plus a multiple of the model's (fixed_cost_fit: launch, ramp-up and tail, a few
     microseconds that weigh on small problems and not on large ones, paid again for each block an
     SM runs after another where it holds one at a time: Estimate.rounds), the efficiency that line
     gives at the shape's own modelled time and rounds instead of the median, at most the highest
     its runs reached (or 1); for a config mostly padding, the fixed cost fitted to the variant's
     other runs (the kernel's pipeline fill and epilogue) and only the slope to the padded ones.
     There, too, a config the tunes timed beside the variant's fastest at those runs' shapes, where
     it filled the SMs alike and its warps' chains of steps stood to the fastest's as they do at
     the shape (Variant.warp_k_steps: d0's KW), carries its own ratio to the fastest's (at most 1;
     an untimed config its variant's median: config_factor): the variant's efficiency is its
     fastest config's, and lent whole it ranked slower configs first.
     Measured only on the other kind: that, capped at the lowest of the variants measured on this
     kind near the shape; never measured: that lowest. A card with no run of the experiment yet
     reads all this from another card's runs in the same results root, else in the results gpulab's
     repository recorded (run from a clone), against that card's ceilings (calibration.evidence,
     lent_evidence; chosen_by names the card); with none anywhere, 1 (the bare model, said so).
   - then, measured times: for a config its access model declines (a mechanism it cannot see: t4's
     stream-K), not timed at the shape, what the card's runs of such configs took beyond their
     siblings' at the nearest shapes of its kind (unseen_cost); where a k-loop's every step waits on
     its loads (Variant.k_step_param), at least its waves x steps at the least step its runs allow.
   Every candidate gets the cheap bound (no access model: compute and DRAM alone, which the model
   only adds to); the access model is evaluated in the order of a guess (the bound with the tiles'
   panels as its L2 term), at most MAX_MODELLED per shape, skipping a bound that cannot beat the
   best time found and a variant whose first modelled time is twice it, and at most
   MODELLED_PER_VARIANT more of each variant's own best bounds, so every variant is weighed
   (ranking); the best modelled time is the pick (a tie: to the config its own access model
   evaluated, then to the one with the most headroom on its other limits, Estimate.order).
   A pick whose config the card never timed says so in its chosen_by (UNTIMED): its efficiency is
   its variant's, borrowed from other configs.
4. Nothing accepts the shape: no pick; Selector.why_none says why in one line.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.jobs.best_efficiency import BARE_MODEL, VERY_NEAR, EfficiencyReader
from gpulab.jobs.calibration import Evidence, Measured, evidence, tuned_seconds
from gpulab.jobs.cost import (
    DECLINED, Card, Estimate, Traffic, blocks_per_sm, grid_blocks, latency_hidden, panel_bytes, quantization,
    schedulers_busy, serial_fixup_s, shows_partials, sms_at_once, split_partials_bytes, traffic_of, work_units,
)
from gpulab.jobs.candidates import one_param_moves
from gpulab.jobs.preference import MEASURED_EDGE, MEASURED_HERE, prefer_measured
from gpulab.jobs.tune import accepted_params, defaults_from, nearness, shape_distance, shape_of

MAX_CONFIGS = 20  # candidate configs per variant
MAX_MODELLED = 12  # access-model evaluations per shape (pick)
MODELLED_PER_VARIANT = 3  # ... per variant (ranking)
UNTIMED = "; a config this card never timed"  # chosen_by's caveat: its efficiency is its variant's, borrowed


# -- the pick ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Pick:
    """What the best row runs at a shape, and why (`why`: the row's chosen_by): 'tuned here', 'tuned at
    <shape>', or the model's deciding numbers (`estimate` then holds them)."""

    variant: Variant
    params: Params
    why: str
    estimate: Estimate | None = None
    tuned_at: str = ""  # rule 1: the tuned shape whose fastest config this is


class Selector(EfficiencyReader):
    """Picks the best row's kernel at any shape of one experiment, from this card's tune (`table`:
    tuned.json's entry for the experiment), its measured runs and its ceilings (`card`). Where this
    card has measured nothing yet, `runs` may be another card's (`runs_from`: its results folder's
    name, `runs_card`: its ceilings): each variant's efficiency is then read from what it reached on
    that card against that card's ceilings, said so in chosen_by, and no config counts as timed here
    (what the runs say of efficiency: best_efficiency.EfficiencyReader)."""

    def __init__(self, experiment: Experiment, table: dict | None = None, card: Card | None = None,
                 runs: list[Measured] = (), runs_card: Card | None = None, runs_from: str = "",
                 tune_rows: list[Measured] = (), lent_table: dict | None = None):
        super().__init__(experiment, card, runs, runs_card, runs_from, tune_rows)
        self.table = table or {}
        # The configs tried first (seeds, tuned defaults): this card's tunes', else those of the card
        # whose runs are lent. Only this card's tune is ever a pick (rule 1).
        self.seed_table = self.table or lent_table or {}
        self.defaults = defaults_from(self.seed_table)
        self.refused_arch = {v.name: r for v in self.variants if (r := v.arch_reason(self.card.arch))}
        self._configs: dict[tuple, list[Params]] = {}
        self._ranking: dict[tuple, list[Estimate]] = {}

    @classmethod
    def from_evidence(cls, experiment: Experiment, known: Evidence) -> Selector:
        """A Selector from what a card knows (calibration.Evidence)."""
        return cls(experiment, known.table, known.card, known.runs, runs_card=known.runs_card,
                   runs_from=known.runs_from, tune_rows=known.tune_rows, lent_table=known.lent_table)

    def basis(self) -> str:
        """One line: the card the model's times are for (its ceilings, its SMs) and whose runs its
        efficiencies come from (and, where they are lent, whose tunes its candidates)."""
        if self.runs_from:
            tunes = "; candidate configs from its tunes too" if self.seed_table else ""
            runs = f"{self.runs_from}'s runs (none of this card's yet){tunes}"
        elif self.runs:
            runs = "this card's runs"
        else:
            runs = "none measured (the bare model: every kernel at its roof)"
        return f"the model's card: {self.card.source}, {self.card.sms} SMs; efficiencies from {runs}"

    # -- one candidate -------------------------------------------------------------------------
    def _estimate(self, v: Variant, params: Params, shape: Shape, modelled: bool,
                  efficiency: tuple[float, str] | None = None, card: Card | None = None) -> Estimate | None:
        """The model's estimate (rule 3) on `card` (default: this one); without `modelled`, the cheap
        bound: no access model, so no L2 term and no workspace, and a launch with more blocks than
        tiles counted as a split."""
        units = work_units(v, params, shape)
        if units is None:
            return None
        blocks, tiles, padding = units
        card, exp = card or self.card, self.experiment
        traffic, note, sibling, borrowed = None, "", None, False
        if modelled:
            traffic, note, sibling, borrowed = self._traffic_or_sibling(v, params, shape, tiles)
        # More blocks than tiles: a split over K; fewer: a persistent grid's even share (shows_partials says).
        stores = (traffic.workspace_bytes, traffic.working_blocks) if traffic is not None else (None, None)
        partials = shows_partials(v, params, *stores, tiles)
        split, balanced = blocks > tiles and partials, blocks < tiles and partials
        rate = card.gflops(exp, v)
        flops = exp.flops(shape)
        # The kernel's own DRAM floor where its model gives one above the problem's (the staged
        # copies it reads), and its stage step before it, each at the copy ceiling.
        dram = max(exp.bytes_moved(shape), (traffic.dram_bytes or 0.0) if traffic is not None else 0.0)
        staging = v.stage_bytes(params, shape) / (card.copy_gbps * 1e9)
        ideal = {"compute": flops / (rate * 1e9) if flops and rate else 0.0,
                 "DRAM": dram / (card.copy_gbps * 1e9),
                 "L2": traffic.l2_bytes / (card.l2_gbps * 1e9) if traffic is not None and card.l2_gbps else 0.0}
        workspace = 2 * (partials := split_partials_bytes(v, params, blocks, split, traffic)) / (card.copy_gbps * 1e9)
        ceiling = exp.ceiling_for(v.name)[0]
        at_once = sms_at_once(v, params, shape, card.sms)
        bare = Estimate(v, dict(params), shape, blocks, tiles, split, balanced,
                        quantization(blocks, tiles, card.sms, split, balanced, at_once), ideal, padding, workspace,
                        1.0, "", traffic, note, card.sms, ceiling, schedulers_busy(v, params, shape, card.sms, card.arch),
                        hidden=latency_hidden(v, params, shape, card.sms, card.arch, ceiling), staging_s=staging,
                        at_once=at_once, resident=(blocks_per_sm(v, params, shape, card.arch) or (0, 1))[1],
                        borrowed=borrowed, partials_bytes=partials,
                        fixup_s=serial_fixup_s(v, partials, tiles, split, card),
                        compiled_resident=(self.compiled_resident.get((v.name, tuple(sorted(params.items()))), 0)
                                           if card.arch == self.runs_card.arch else 0))
        eff, source = efficiency or self.measured_here(v, params, shape) or (None, "")
        if eff is None:
            eff, source = self.efficiency(v, shape, params, bare.roof_s, bare.rounds)
            factor = self.config_factor(v, params, shape)
            if factor is not None:
                eff, source = eff * factor[0], f"{source}; {factor[1]}"
            unseen = self.unseen_cost(v, params, sibling, shape) if sibling and bare.roof_s > 0 else None
            if unseen:  # measured time, not the model's: added after the efficiency
                eff, source = bare.roof_s / (bare.roof_s / eff + unseen[0]), f"{source}; {unseen[1]}"
            if (chain := self.steps.least_s(v, params, shape, card)) and chain[0] > bare.roof_s / eff:
                eff, source = bare.roof_s / chain[0], f"{source}; {chain[1]}"
        return dataclasses.replace(bare, efficiency=eff, efficiency_from=source)

    def _traffic_or_sibling(self, v: Variant, params: Params, shape: Shape,
                            tiles: int) -> tuple[Traffic | None, str, Params | None, bool]:
        """(traffic, why, sibling, borrowed): the access model's traffic for the config; where the
        model declines it or is too large to evaluate, the L2 bytes of the nearest config it does
        model (one param changed, the same tiles first: kc's SPLIT=1 for SPLIT=3, t4's SCHEDULE=0
        for 1), else (a variant with no model) what its tiles' panels read (panel_bytes); its partials
        then unknown. Where the model declines the config (a mechanism it cannot see, not a size),
        the sibling whose bytes stand in (unseen_cost reads what they miss). A config merely too
        large to evaluate takes a sibling's of the same launch whole, partials too: a split of K,
        or none, as that sibling's (Estimate.borrowed is then False). (None, why, None, True) where
        nothing can be said."""
        found = traffic_of(self.experiment, v, tuple(params.items()), shape)
        if isinstance(found, Traffic):
            return found, "", None, False
        launch = work_units(v, params, shape)
        siblings = []
        for p in v.params:
            for value in p.choices:
                other = params | {p.name: value}
                if value != params[p.name] and v.constraints(other, shape) is None:
                    units = work_units(v, other, shape)
                    siblings.append((units is None or units[1] != tiles, other, f"{p.name}={value}", units == launch))
        for _, other, label, same_launch in sorted(siblings, key=lambda s: s[0]):
            near = traffic_of(self.experiment, v, tuple(other.items()), shape)
            if not isinstance(near, Traffic):
                continue
            if found == DECLINED:  # what it cannot see may be a split (t4's stream-K): partials unknown
                return Traffic(near.l2_bytes, None), f"{found}: L2 bytes of {label}", other, True
            # Partials unknown make a persistent grid count as stream-K: v14 in STORE=0 (its stores
            # too many lanes to evaluate) at 1000x3000x777, 192 whole tiles on 132 blocks, modelled
            # 70 us, ran 132 in two rounds on an H100 (STORE=1 80; notebook/probes/alone-h100/call65).
            if same_launch:
                return near, f"{found}: bytes and partials of {label}", None, False
            return Traffic(near.l2_bytes, None), f"{found}: L2 bytes of {label}", None, True
        panels = panel_bytes(self.experiment, params, shape, tiles)
        if panels is not None:
            return Traffic(panels, None), f"{found}: L2 bytes of its tiles' panels", None, True
        return None, f"{found}: compulsory bytes only", None, True

    # -- candidates ----------------------------------------------------------------------------
    def refusal(self, variant: Variant, shape: Shape) -> str | None:
        """Why `variant` is not weighed at `shape` (its arch, best_refusal, every config refused), or None."""
        if reason := self.refused_arch.get(variant.name) or variant.best_refusal(shape):
            return reason
        if not self.configs(variant, shape):
            return variant.constraints(variant.default_params(), shape) or "no config accepts this shape"
        return None

    def configs(self, v: Variant, shape: Shape) -> list[Params]:
        """The configs of `v` the model weighs at `shape` (rule 2): seeds first, then the moves, at
        most MAX_CONFIGS by their cheap bound."""
        key = (v.name, shape.values)
        if key not in self._configs:
            self._configs[key] = [] if v.best_refusal(shape) else self._find_configs(v, shape)
        return self._configs[key]

    def _find_configs(self, v: Variant, shape: Shape) -> list[Params]:
        def runnable(p: Params | None) -> bool:
            return p is not None and v.constraints(p, shape) is None and grid_blocks(v, p, shape) is not None

        seeds: list[Params] = []
        for p in (v.canonical(p, shape) if p else p for p in self._seeds(v, shape)):
            if runnable(p) and p not in seeds:
                seeds.append(p)
        moves = one_param_moves(v, seeds, shape, runnable)
        if len(seeds) + len(moves) > MAX_CONFIGS:
            bound = {i: self._estimate(v, m, shape, modelled=False) for i, m in enumerate(moves)}
            order = sorted(range(len(moves)), key=lambda i: (bound[i].seconds if bound[i] else math.inf, i))
            moves = [moves[i] for i in order[:max(0, MAX_CONFIGS - len(seeds))]]
        return (seeds + moves)[:MAX_CONFIGS]

    def _seeds(self, v: Variant, shape: Shape) -> list[Params | None]:
        entry = self.seed_table.get(v.name) or {}
        out: list[Params | None] = [self.defaults(v, shape), v.default_params()]
        out += [accepted_params(v, (b or {}).get("params")) for b in (entry.get("by_shape") or {}).values()]
        chosen = self.experiment.best_default(shape)
        if chosen is not None and chosen[0] == v.name:
            out.append(v.completed_params(chosen[1]))
        return out

    # -- choosing ------------------------------------------------------------------------------
    def tuned(self, shape: Shape) -> Pick | None:
        """Rule 1: the fastest config tuned at the shape or very near it."""
        found = []
        names = {v.name: v for v in self.variants if v.name not in self.refused_arch}
        for name, entry in self.table.items():
            v = names.get(name)
            if v is None or not isinstance(entry, dict):
                continue
            for label, best in (entry.get("by_shape") or {}).items():
                params = accepted_params(v, (best or {}).get("params"))
                tuned = shape_of(label)
                if params is None or len(tuned) != len(shape.values) or v.constraints(params, shape):
                    continue
                if shape_distance(shape, tuned) <= VERY_NEAR:
                    found.append((nearness(shape, label, (best or {}).get("rate")), v, params, label))
        if not found:
            return None
        _, v, params, label = min(found, key=lambda c: c[0])
        return Pick(v, params, "tuned here" if label == shape.label else f"tuned at {label}", tuned_at=label)

    def tuned_time(self, variant: str, tuned_at: str) -> float | None:
        """The seconds `variant`'s tune recorded for its fastest config at the shape `tuned_at`."""
        entry = ((self.table.get(variant) or {}).get("by_shape") or {}).get(tuned_at) or {}
        if not entry.get("rate"):
            return None
        return tuned_seconds(self.experiment, self.experiment.shape(*shape_of(tuned_at)), entry["rate"])

    def untuned_rivals(self, shape: Shape, variant: str, tuned_at: str) -> list[Estimate]:
        """The variants not tuned at or very near `shape` that the model expects at least 10% faster
        than `variant`'s tune recorded at `tuned_at` (rivals_ahead): where there are any, rule 1
        yields to the model, and `gpulab tune` names them. At 128x6144x4096 on the H200 (2026-12-04)
        t4, tuned there alone for a search comparison, ran 22% slower than kc, and sgemm's v14 57%
        slower than v12."""
        tuned_s = self.tuned_time(variant, tuned_at)
        if tuned_s is None:
            return []
        tuned_near = {name for name, e in self.table.items() if isinstance(e, dict) and any(
            len(shape_of(lab)) == len(shape.values) and shape_distance(shape, shape_of(lab)) <= VERY_NEAR
            for lab in (e.get("by_shape") or {}))}
        return [e for e in rivals_ahead(self, variant, shape, tuned_s) if e.variant.name not in tuned_near
                and not self.lost_here(e, shape, tuned_s)]

    def lost_here(self, estimate: Estimate, shape: Shape, seconds: float) -> bool:
        """Whether the estimate's variant was timed at `shape` (or very near it), in another config
        than the estimate's, no faster than `seconds`: then its modelled lead there rests on an
        efficiency borrowed from elsewhere against a measurement here. sgemm's v13 in BK = 16 was
        modelled at 0.61 of sx's tune's time at 512^3 (20.2 us), where v13 in BK = 8 had run 21.8 us (H200)."""
        return not estimate.efficiency_from.startswith(MEASURED_HERE) and any(
            shape_distance(shape, run.shape) <= VERY_NEAR and run.seconds >= seconds
            for run in self.runs.get(estimate.variant.name, ()))

    def _bounds(self, shape: Shape, variants: list[Variant]) -> list[Estimate]:
        """The cheap bound of every candidate config of `variants` at the shape."""
        out = []
        for v in variants:
            if v.name in self.refused_arch:
                continue
            for params in self.configs(v, shape):
                if (est := self._estimate(v, params, shape, modelled=False)) is not None:
                    out.append(est)
        return out

    def _guess(self, bound: Estimate) -> float:
        """The order the access model is evaluated in: the bound with its tiles' panels as the L2
        term (panel_bytes) where the params name BM and BN; a better guess than the bound, not a bound."""
        panels = panel_bytes(self.experiment, bound.params, bound.shape, bound.tiles)
        if panels is None or not self.card.l2_gbps:
            return bound.seconds
        return max(bound.seconds, bound.quantization * panels / (self.card.l2_gbps * 1e9) / bound.efficiency)

    def _modelled(self, bounds: list[Estimate], most: int) -> list[Estimate]:
        """The access model on at most `most` of `bounds`, best guess first, skipping any whose bound
        cannot beat the best time found; best first (Estimate.order: a tie to the config whose bytes
        are its launch's). A config modelled exactly as one before it (same variant, launch and
        time) counts toward neither limit: v14's six alike 128-wide configs at 1536x1600x6400, first
        in the guess, took every turn, and its 192-wide tiles, 1.4x faster modelled and on an H100,
        went unweighed."""
        order = sorted(range(len(bounds)), key=lambda i: (self._guess(bounds[i]), i))
        found: list[Estimate] = []
        best = math.inf
        tried: dict[str, list[float]] = {}  # each variant's modelled times so far
        evaluated: dict[str, int] = {}  # ... and how many configs that took
        alike: set[tuple] = set()  # (variant, blocks, tiles, time) of each config modelled
        for i in order:
            if len(alike) >= most:
                break
            b = bounds[i]
            mine = tried.get(b.variant.name, [])
            # A bound that cannot win is skipped; so is a variant already modelled at twice the best time
            # found (its access pattern, not its config, is what the guess missed), or modelled at three
            # different times (configs the model times alike count once: v14's six 128-wide configs at
            # 1536x1600x6400, alike in what the model can see, took all three turns; up to twice as many
            # evaluations then). A config timed at the shape, or on shapes of its kind, may still win
            # within MEASURED_EDGE (prefer_measured), so its bound is skipped only past that: at
            # 128x8192x8192 kc's timed 128-wide tiles, 1% behind its untimed 192-wide ones, went
            # unmodelled, and prefer_measured, setting the untimed lead aside, fell to t3, 1.11x kc's
            # time there (H200, 2026-12-06).
            edge = 1 + MEASURED_EDGE if b.efficiency_from.startswith(MEASURED_HERE) or self.timed_alike(b) else 1
            if b.seconds >= best * edge or (mine and (min(mine) >= 2 * best or len(set(mine)) >= MODELLED_PER_VARIANT
                                                       or evaluated[b.variant.name] >= 2 * MODELLED_PER_VARIANT)):
                continue
            est = self._estimate(b.variant, b.params, b.shape, modelled=True)
            found.append(est)
            key = (b.variant.name, est.blocks, est.tiles, round(est.seconds, 12))
            if key not in alike:
                alike.add(key)
                tried.setdefault(b.variant.name, []).append(round(est.seconds, 9))
                evaluated[b.variant.name] = evaluated.get(b.variant.name, 0) + 1
            best = min(best, est.seconds)
        rank = {id(e): i for i, e in enumerate(found)}
        return sorted(found, key=lambda e: (*e.order, rank[id(e)]))

    def estimates(self, shape: Shape) -> list[Estimate]:
        """The candidates the access model evaluated at the shape (at most MAX_MODELLED), best first."""
        return self._modelled(self._bounds(shape, self.variants), MAX_MODELLED)

    def ranking(self, shape: Shape) -> list[Estimate]:
        """Each variant's best estimate at the shape, best first: the best of what estimates() modelled,
        of its own few configs modelled in their own order (at most MODELLED_PER_VARIANT), so that
        every variant is weighed by its access model, not its bound alone, and of its tuned config
        for the shape (tune.defaults_from), modelled always: the guess's order can pass it over
        (sgemm's v14 at 8192x57344x8192: its config tuned at 8192^3, modelled at 61 ms, was never
        modelled, and three others at 74 ms were; the llm suite ran it 6% faster than the pick)."""
        if shape.values not in self._ranking:
            shared = self.estimates(shape)
            out = []
            for v in self.variants:
                found = [e for e in shared if e.variant.name == v.name]
                found += self._modelled(self._bounds(shape, [v]), MODELLED_PER_VARIANT)
                tuned = self.defaults(v, shape)
                if (v.name not in self.refused_arch and all(e.params != tuned for e in found)
                        and tuned in self.configs(v, shape)):
                    found += [e for e in (self._estimate(v, tuned, shape, modelled=True),) if e is not None]
                if found:
                    out.append(prefer_measured(found, self.timed_alike))
            ranked = sorted(out, key=lambda e: e.order)
            top = prefer_measured(ranked, self.timed_alike) if ranked else None
            self._ranking[shape.values] = [top] + [e for e in ranked if e is not top] if top else ranked
        return self._ranking[shape.values]

    def pick(self, shape: Shape) -> Pick | None:
        """The best row's variant and params at `shape` (rules 1-3), or None (why_none says why)."""
        chosen = self.tuned(shape)
        passed_over = ""
        if chosen is not None:
            rivals = self.untuned_rivals(shape, chosen.variant.name, chosen.tuned_at)
            if not rivals:
                return chosen
            passed_over = (f"; {chosen.variant.name} {chosen.why} passed over: the model expects "
                           + ", ".join(e.variant.name for e in rivals[:3]) + f" at least {1 - RIVAL_MARGIN:.0%} faster")
        found = self.ranking(shape)
        if chosen is not None:  # a measured tune yields to what the card has timed on shapes like this one
            found = [e for e in found if self.timed_alike(e)]
        if not found:
            return chosen
        top = found[0]
        if chosen is not None and (top.variant.name, top.params) == (chosen.variant.name, chosen.params):
            return chosen  # the model, weighing the rival, still puts the tuned config first
        untimed = "" if self.timed_somewhere(top) or not self.config_runs else UNTIMED
        return Pick(top.variant, top.params, top.reason() + untimed + passed_over, top)

    def why_none(self, shape: Shape) -> str:
        """One line: why no variant of the experiment runs `shape`."""
        reasons = [f"{v.name}: {self.refusal(v, shape)}" for v in self.variants]
        return f"no variant of {self.experiment.name} runs {shape.label}: " + "; ".join(reasons[:4]) + (
            f"; and {len(reasons) - 4} more" if len(reasons) > 4 else "")


def pick(experiment: Experiment, table: dict, shape: Shape, card: Card | None = None,
         runs: list[Measured] = ()) -> Pick | None:
    """The pick at `shape` from `table` (tuned.json's entry) and measured `runs`, on `card` (default: reference)."""
    return Selector(experiment, table, card, runs).pick(shape)


def selector(experiment: Experiment, folder: Path | None) -> Selector:
    """A Selector on the card whose results are in `folder`, from what it knows (calibration.evidence:
    its tune and runs, or another card's runs where it has none yet)."""
    return Selector.from_evidence(experiment, evidence(experiment, folder))


RIVAL_MARGIN = 0.9  # a rival is named only where the model expects it 10% faster: its times are estimates


def rivals_ahead(chooser: Selector, variant: str, shape: Shape, measured_s: float) -> list[Estimate]:
    """The other variants the model expects to run `shape` at least 10% faster than `variant` was
    measured there (its tune's fastest, `measured_s`), best first (Selector.untuned_rivals). The
    model's times are estimates, so only a wide margin counts, and a variant with nothing measured
    on the card (the bare model, an optimistic bound) is no rival; nor is a config never timed on
    the card, whose efficiency is borrowed from its variant's other configs: sgemm's v12 in MINB=3,
    never timed, was put at 2x the speed of v12 as timed at 4096x64x4096 and passed over sx's tune
    there, where v12 had run 1.87x sx's time (H200, 2026-12-04)."""
    return [e for e in chooser.ranking(shape) if e.variant.name != variant and e.seconds < RIVAL_MARGIN * measured_s
            and e.efficiency_from != BARE_MODEL and chooser.timed_somewhere(e)]
