"""gpulab's best kernel for a shape: which variant and params to run, and why.

`gpulab bench` (and gpulab.api.bench) adds a `best` row per shape, checked and timed like every other
row, its `picked` column the variant it ran and its `chosen_by` column why; `gpulab best` (gpulab.api.
best) says what it would run, with no GPU. The rule, in full:

1. Tuned here: where this card's tune (results/<gpu>/tuned.json, jobs/tune.py) timed configs at the
   shape, or very near it (shape_distance <= VERY_NEAR: 4000^3 for 4096^3), the fastest tuned there
   runs ('tuned here', 'tuned at 4096x4096x4096'). Any tuned variant counts, whatever its name; one
   the experiment no longer has, or whose params or constraints refuse the shape, is left out.
2. Else a model chooses among candidates: every variant the card's architecture runs (demonstrations
   never), each at its tuned params for the shape, its declared defaults, every config a tune found
   best anywhere, the experiment's own default for the shape (Experiment.best_default), and the
   one-param moves from the first two that change its grid or its padded work (a move its
   constraints refuse is repaired by a second param where one can); every one its constraints accept,
   at most MAX_CONFIGS per variant, kept by the cheap bound below.
3. The model of one candidate (Estimate), on this card's measured ceilings (records/ceilings.py):
   - work: the launch's blocks, and its tiles, ceil(M/BM) * ceil(N/BN) where the params name BM and
     BN (else each block is one). More blocks than tiles are a split over K where the access model
     shows partials (else the extra blocks idle: a cluster's past M); fewer blocks loop over the tiles
     (a persistent grid), evenly where they split them (stream-K). A split that adds its partials in
     a cluster's shared memory shows none in global memory: there the blocks that store a share of
     the output tell it from a cluster padded past M (active_blocks in model/predict.py). The busiest SM's share of the work
     over an even share is the quantization q >= 1 (24 tiles on 132 SMs: 5.5; 250 blocks: 1.06). The
     padded tiles compute whole (tiles*BM*BN of M*N, K rounded up to BK).
   - time = max(compute, DRAM, L2) + partials: compute = q x the padded FLOPs / the variant's compute
     ceiling, over the share of an SM's 4 warp schedulers its resident warps keep (schedulers_busy:
     one block of 2 warps an SM computes at half its rate at best); DRAM = the compulsory bytes (Experiment.bytes_moved) / the copy ceiling; L2 = q x what
     the SMs load and store (the access model's global sectors x 32 and TMA bytes, model/predict.py)
     / the L2 read ceiling; the memory terms over the share of the warps that issue the loads,
     weighted by what each load moves (a launch whose guards idle 7 warps in 8 has an eighth of the
     loads in flight: sgemm's v0 at M = 1); partials = what a
     split stores beyond the output (the access model's requested store bytes), written and read
     back at the copy ceiling. Where the access model declines a config or is too large to evaluate
     here (LANE_BUDGET), the L2 bytes of the nearest config it models (one param changed), else of
     the tiles' panels of A and B.
   - divided by the variant's efficiency: the median, over its CALIBRATION_ROWS measured runs on
     this card nearest the shape among shapes of the same kind (memory-bound: flops per compulsory
     byte below the ridge of its compute ceiling over the copy), of the model's time there over the
     measured one (runs: results/<gpu>/<experiment>.csv and the tune's picks, never a suite's rows).
     Measured only on the other kind: that, capped at the median of the variants measured on this
     kind; never measured: that median; nothing measured on the card: 1 (the bare model, said so).
   Every candidate gets the cheap bound (no access model: compute and DRAM alone, which the model
   only adds to); the access model is evaluated in the order of a guess (the bound with the tiles'
   panels as its L2 term), at most MAX_MODELLED per shape, skipping a bound that cannot beat the
   best time found and a variant whose first modelled time is twice it, and at most
   MODELLED_PER_VARIANT more of each variant's own best bounds, so every variant is weighed
   (ranking); the best modelled time is the pick (a tie: to the config its own access model
   evaluated, then to the one with the most headroom on its other limits, Estimate.order).
4. Nothing accepts the shape: no pick; Selector.why_none says why in one line.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from pathlib import Path
from typing import Any

from gpulab.arith import cdiv
from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.gpu.device import sm_count
from gpulab.gpu.occupancy import SM_LIMITS, SMEM_ALLOC_UNIT, SUB_PARTITIONS
from gpulab.jobs.tune import accepted_params, defaults_from, load_tuned, nearness, shape_distance, shape_of
from gpulab.model.predict import LDGSTS, active_blocks, instruction_table, summarize
from gpulab.params import parse_params_label
from gpulab.records import read_csv, variant_ran
from gpulab.records.ceilings import H200_REFERENCE_CEILINGS, ceilings_path
from gpulab.records.ceilings import load as load_ceilings

# A tuned shape this close (shape_distance: summed |log2| of the dimensions' ratios) speaks for the
# asked one: 4000^3 for 4096^3 (0.10), not 3072^3 (1.2).
VERY_NEAR = 0.15
MAX_CONFIGS = 20  # candidate configs per variant
MAX_MODELLED = 12  # access-model evaluations per shape (pick)
MODELLED_PER_VARIANT = 3  # ... per variant (ranking)
# Lanes an access-model evaluation may take (model/predict.py evaluates representative blocks and
# loop steps lane by lane): about a tenth of a second on one core.
LANE_BUDGET = 1 << 19
CALIBRATION_ROWS = 3  # measured runs per variant its efficiency is the median of
WARP = 32
ARCH_WITHOUT_CERTAINTY = "sm_90"  # the card assumed where no ceilings file names one (gpulab's default target)


# -- the card ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Card:
    """What the model holds kernels to: SMs, the measured copy and L2 read bandwidths (GB/s), the
    compute ceilings by name (GFLOP/s), the architecture, and where these came from."""

    sms: int
    copy_gbps: float
    l2_gbps: float | None
    compute: dict[str, float]
    arch: str
    source: str

    def gflops(self, experiment: Experiment, variant: Variant) -> float | None:
        """The compute ceiling `variant` is held to, in the problem's FLOPs (Experiment.ceiling_for)."""
        name, ops = experiment.ceiling_for(variant.name)
        rate = self.compute.get(name)
        return rate / ops if rate else None


def card_for(folder: Path | None) -> Card:
    """The card whose results are in `folder` (its ceilings.csv), else the H200's reference values
    (records.ceilings.H200_REFERENCE_CEILINGS, labelled so; no L2 term then)."""
    stored = load_ceilings(ceilings_path(folder)) if folder is not None else None
    if stored is not None and stored.copy_gbps:
        compute = {str(r["ceiling"]): float(r["gflops"]) for r in stored.rows if r.get("gflops")}
        arch = next((str(r["arch"]) for r in stored.rows if r.get("arch")), ARCH_WITHOUT_CERTAINTY)
        return Card(sm_count(), float(stored.copy_gbps), stored.l2_gbps, compute, arch,
                    f"ceilings measured in {stored.path}")
    ref = H200_REFERENCE_CEILINGS
    compute = {"fma_fp32": ref["fma_gflops"], **{k: v for k, v in ref.items() if k not in ("fma_gflops", "copy_gb_per_s")}}
    return Card(sm_count(), ref["copy_gb_per_s"], None, compute, ARCH_WITHOUT_CERTAINTY,
                "H200 reference ceilings (none measured for this card)")


# -- the model of one candidate ---------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Traffic:
    """What the access model says a launch moves: bytes the SMs load and store through L2, and the
    partials a split writes beyond the output (read back once by its fixup)."""

    l2_bytes: float
    workspace_bytes: float | None  # None: not known (the L2 bytes came from elsewhere, see Estimate.note)
    warps_loading: float | None = None  # the share of the launch's warps that issue its loads (_warps_loading)
    # Where the launch has more blocks than tiles: how many of them store anything (_working_blocks);
    # None: not asked, or no warp stores to tell (TMA stores)
    working_blocks: int | None = None


@dataclasses.dataclass(frozen=True)
class Estimate:
    """The model's time for one (variant, params) at one shape, and the numbers behind it (rule 3)."""

    variant: Variant
    params: Params
    shape: Shape
    blocks: int
    tiles: int  # == blocks where the params name no BM and BN
    split: bool  # more blocks than tiles, each a slice of K (False: the extra blocks idle)
    balanced: bool  # a persistent grid that shares split tiles evenly (stream-K)
    quantization: float  # q: the busiest SM's share of the work over an even share (>= 1)
    ideal_s: dict  # {'compute', 'DRAM', 'L2'}: each limit's time with the work evenly spread, unpadded
    padding: float  # the work the padded tiles compute over the problem's (>= 1)
    workspace_s: float
    efficiency: float
    efficiency_from: str  # 'from <shape>' (the nearest measured there) or where else it came from
    traffic: Traffic | None  # None: the access model was not evaluated (see note)
    note: str = ""
    sms: int = 132
    rate_name: str = ""
    schedulers: float = 1.0  # the share of an SM's warp schedulers its resident warps keep (schedulers_busy)

    @property
    def limits_s(self) -> dict:
        """Each limit's time at this launch: the quantized compute and L2, the DRAM's (which no
        share of SMs slows: the copy ceiling is the whole card's); the memory limits over the share
        of the warps that load (memory-bound, a kernel is fed by the loads it has in flight)."""
        share = self.warps_loading or 1.0
        return {"compute": self.quantization * self.padding * self.ideal_s["compute"] / self.schedulers,
                "DRAM": self.ideal_s["DRAM"] / share, "L2": self.quantization * self.ideal_s["L2"] / share}

    @property
    def warps_loading(self) -> float | None:
        return self.traffic.warps_loading if self.traffic is not None else None

    @property
    def roof_s(self) -> float:
        return max(self.limits_s.values()) + self.workspace_s

    @property
    def seconds(self) -> float:
        return self.roof_s / self.efficiency

    @property
    def bound(self) -> str:
        limits = self.limits_s
        return max(limits, key=lambda k: limits[k])

    @property
    def order(self) -> tuple:
        """How estimates rank: by time (to a part in 10^12 of a second: float noise breaks no tie); a
        tie to the config its own access model evaluated, then to the one with the most headroom on
        its other limits (two DRAM-bound kernels: the one whose padded tiles compute and load less)."""
        limits = sorted(self.limits_s.values())
        return round(self.seconds, 12), bool(self.note), limits[-2] + self.workspace_s

    @property
    def units(self) -> int:
        """What the SMs share: the blocks, or a persistent grid's (or idle-padded launch's) tiles."""
        return self.blocks if self.split or self.blocks == self.tiles else self.tiles

    def reason(self) -> str:
        """'model: 1.9 waves (250 blocks, 132 SMs), split 4, L2-bound at 61% of the L2 read ceiling,
        efficiency 0.78 from 8192x8192x8192': the numbers that decided the pick (the row's chosen_by)."""
        if self.blocks < self.tiles:
            work = (f"{self.tiles} tiles on {self.blocks} persistent blocks"
                    + (", shared evenly" if self.balanced else f" ({self.tiles / self.blocks:.2g} rounds)"))
        else:
            what = "blocks" if self.units == self.blocks else f"tiles of {self.blocks} blocks"
            last = self.units % self.sms
            fill = f", the last {100 * last / self.sms:.0f}% full" if last and self.units > self.sms else ""
            work = f"{self.units / self.sms:.2g} waves ({self.units} {what}, {self.sms} SMs{fill})"
        parts = [work]
        if self.split:
            parts.append(f"split {self.blocks / self.tiles:.3g}")
        if self.padding >= 1.5 and self.bound == "compute":
            parts.append(f"padded tiles compute {self.padding:.3g}x the product")
        if self.schedulers < 1 and self.bound == "compute":
            parts.append(f"{round(self.schedulers * SUB_PARTITIONS)} of an SM's {SUB_PARTITIONS} warp schedulers busy")
        if self.warps_loading is not None and self.warps_loading < 0.75 and self.bound != "compute":
            parts.append(f"{100 * self.warps_loading:.0f}% of its warps load")
        if self.traffic is not None and self.traffic.workspace_bytes:
            parts.append(f"{self.traffic.workspace_bytes / 1e6:.3g} MB of partials")
        name = {"compute": self.rate_name, "DRAM": "copy", "L2": "L2 read"}[self.bound]
        parts.append(f"{self.bound}-bound at {100 * self.ideal_s[self.bound] / self.seconds:.0f}% of the {name} ceiling")
        parts.append(f"efficiency {self.efficiency:.2f} {self.efficiency_from}")
        if self.note:
            parts.append(self.note)
        return "model: " + ", ".join(parts)


def _output_bytes(experiment: Experiment, shape: Shape) -> float:
    """The bytes of a GEMM's output, from its bytes_moved: what grows with K is the operands, the
    rest (bytes_moved less K times that growth) the output. 0 for a problem with no K."""
    if "K" not in shape.names:
        return 0.0
    i = shape.names.index("K")
    plus = Shape(shape.names, tuple(v + 1 if j == i else v for j, v in enumerate(shape.values)))
    per_k = experiment.bytes_moved(plus) - experiment.bytes_moved(shape)
    return float(experiment.bytes_moved(shape) - shape["K"] * per_k)


def panel_bytes(experiment: Experiment, params: Params, shape: Shape, tiles: int) -> float | None:
    """What a tiled GEMM's blocks read where no access model says: each tile its BM rows of A and BN
    columns of B over all of K, tiles x (BM a + BN b) x K, with a and b the bytes of one element of A
    and of B (from bytes_moved: what one more k adds at M, N = 1, 1 and 2, 1). None where the shape
    or the params are not a GEMM's."""
    if not ({"M", "N", "K"} <= set(shape.names) and {"BM", "BN"} <= set(params)):
        return None

    def per_k(m: int, n: int) -> int:
        values = {"M": m, "N": n, "K": 1}
        one = Shape(shape.names, tuple(values.get(d, shape[d]) for d in shape.names))
        two = Shape(shape.names, tuple(values.get(d, shape[d]) + (d == "K") for d in shape.names))
        return experiment.bytes_moved(two) - experiment.bytes_moved(one)

    a = per_k(2, 1) - per_k(1, 1)
    b = per_k(1, 1) - a
    return float(tiles * (params["BM"] * a + params["BN"] * b) * shape["K"])


def _lanes(model) -> int:
    """Lanes model/predict.py would evaluate for `model`: per instruction, the representative blocks
    and loop steps its symmetry classes leave (all of them on an axis without classes) times the
    block's threads rounded up to warps."""
    threads = math.prod(model.block)
    padded = cdiv(threads, WARP) * WARP
    total = 0
    for instr in model.instructions:
        combos = 1
        for axis, n in zip("xyz", model.grid):
            classes = instr.blocks.get(axis)
            combos *= len(classes) if classes is not None else n
        for loop in instr.loops:
            combos *= len(loop.classes) if loop.classes is not None else loop.trips
        total += combos * padded
    return total


# Traffic by (experiment, variant, its file, params, shape): a process evaluates each config once.
_TRAFFIC: dict[tuple, Traffic | str] = {}


def _traffic(experiment: Experiment, variant: Variant, params: tuple, shape: Shape) -> Traffic | str:
    """The access model's traffic for one config, or why there is none (no model, a config it
    declines, one too large to evaluate here, a model that failed); remembered for the process."""
    key = (experiment.name, variant.name, variant.file, params, shape)
    if key not in _TRAFFIC:
        _TRAFFIC[key] = _evaluate(experiment, variant, params, shape)
    return _TRAFFIC[key]


def _evaluate(experiment: Experiment, variant: Variant, params: tuple, shape: Shape) -> Traffic | str:
    if variant.access is None:
        return "no access model"
    p = dict(params)
    try:
        model = variant.access(p, shape)
        if _lanes(model) > LANE_BUDGET:
            return "access model too large to evaluate here"
        rows = instruction_table(model)
        summary = summarize(rows, model)
    except GpulabError:  # NotModelled and its kin: the model declines this config
        return "the access model declines this config"
    except Exception as exc:  # a user's model that fails costs its candidate the L2 term, not the pick
        return f"the access model failed ({type(exc).__name__})"
    l2 = 32.0 * (summary["gmem_load_sectors"] + summary["gmem_store_sectors"]) + summary["tma_load_bytes"]
    beyond = summary["gmem_store_requested_bytes"] - _output_bytes(experiment, shape)
    units = work_units(variant, p, shape)
    working = _working_blocks(model) if units is not None and units[0] > units[1] else None
    return Traffic(float(l2), max(0.0, float(beyond)), _warps_loading(model, rows), working)


def _working_blocks(model) -> int | None:
    """The blocks that store anything (the most any one global store reaches), or None where no
    warp stores (a TMA store). A launch of more blocks than tiles either splits each tile over
    blocks, which all store a share (kc's cluster adds its partials through distributed shared
    memory, so no partials reach global memory: its blocks are told apart by this), or pads a
    cluster past M, whose blocks past the last row store nothing."""
    stores = [instr for instr in model.instructions if instr.space == "global" and instr.kind == "store"]
    return max((active_blocks(model, instr) for instr in stores), default=None)


def _warps_loading(model, rows: list[dict]) -> float | None:
    """The share of the launch's warps that issue its global loads, weighted by what each load moves:
    per load instruction, its warp requests (a warp whose lanes are all guarded off makes none) over
    what every warp of every block would make on every trip of its loops, averaged by its sectors
    (None: no warp-level global loads, TMA's say). sgemm's v0 at M = 1 keeps one row of threads of
    its 16 x 16 blocks, 1 warp in 8 loads; gemm_bf16's d0 at M = 1 guards off most of its loads of A,
    which move little beside its loads of Bt, which every warp makes."""
    warps = cdiv(math.prod(model.block), WARP) * math.prod(model.grid)
    weighted = moved = 0.0
    for instr, row in zip(model.instructions, rows):
        if instr.space == "global" and instr.kind in ("load", LDGSTS) and row["sectors"]:
            possible = warps * math.prod(loop.trips for loop in instr.loops)
            weighted += row["sectors"] * min(1.0, row["instructions"] / possible)
            moved += row["sectors"]
    return weighted / moved if moved else None


def _grid_blocks(variant: Variant, params: Params, shape: Shape) -> int | None:
    try:
        return math.prod(variant.launch(params, shape).grid)
    except Exception:  # a launch that cannot be computed for this config: not a candidate
        return None


def work_units(variant: Variant, params: Params, shape: Shape) -> tuple[int, int, float] | None:
    """(blocks, tiles, padded fraction): the launch's blocks; the output tiles where the params name
    BM and BN and the shape M and N (else the blocks); the work the padded tiles compute over the
    problem's (>= 1)."""
    blocks = _grid_blocks(variant, params, shape)
    if not blocks:
        return None
    tiles, padded = blocks, 1.0
    if {"BM", "BN"} <= set(params) and {"M", "N"} <= set(shape.names):
        m, n = shape["M"], shape["N"]
        tiles = cdiv(m, params["BM"]) * cdiv(n, params["BN"])
        padded = tiles * params["BM"] * params["BN"] / (m * n)
    if "BK" in params and "K" in shape.names:
        padded *= cdiv(shape["K"], params["BK"]) * params["BK"] / shape["K"]
    return blocks, tiles, padded


def schedulers_busy(variant: Variant, params: Params, shape: Shape, sms: int, arch: str) -> float:
    """The share of an SM's warp schedulers (SUB_PARTITIONS, 4) the launch keeps a warp on: each
    issues only its own warps, so an SM holding fewer warps than it has schedulers computes at that
    share of its rate at best (sgemm's v11 at 128 x 4096 x 4096 in 64 x 64 tiles: 128 blocks of 2 warps,
    one block an SM, half of every SM idle). The warps an SM holds: a block's, times the blocks the
    busiest SM gets, at most the blocks that fit beside each other by threads, blocks and shared
    memory (registers are not known before compiling: they can only fit fewer, never more)."""
    try:
        launch = variant.launch(params, shape)
    except Exception:  # no launch: no candidate either (work_units says so); nothing to scale here
        return 1.0
    warps = cdiv(math.prod(launch.block), WARP)
    limits = SM_LIMITS.get(arch, SM_LIMITS[ARCH_WITHOUT_CERTAINTY])
    smem = cdiv(launch.smem_dynamic_bytes or 0, SMEM_ALLOC_UNIT) * SMEM_ALLOC_UNIT + limits.smem_reserved_per_block
    fit = max(1, min(limits.max_blocks, limits.max_warps // max(1, warps), limits.smem_bytes // smem))
    resident = warps * min(cdiv(math.prod(launch.grid), sms), fit)
    return min(1.0, resident / SUB_PARTITIONS)


def quantization(blocks: int, tiles: int, sms: int, split: bool, balanced: bool) -> float:
    """The busiest SM's share of the work over an even share (>= 1). One block per tile, or a split
    (each block a slice of a tile): the blocks are the units, spread over the SMs, ceil(blocks / SMs)
    on the busiest. More blocks than tiles that do not split (a cluster's blocks past M's last row
    tile): the tiles are the units, one per working block. Fewer blocks than tiles: a persistent
    grid, each block on its own SM looping over ceil(tiles / blocks) tiles, or exactly tiles / blocks
    where it splits them evenly (stream-K)."""
    if blocks >= tiles:
        units = blocks if split or blocks == tiles else tiles
        busiest = cdiv(units, min(units, sms))
    else:
        units, holders = tiles, min(blocks, sms)
        busiest = units / holders if balanced else cdiv(units, holders)
    return busiest * sms / units


# -- measured runs: the efficiency of each variant near a shape -------------------------------------
@dataclasses.dataclass(frozen=True)
class Measured:
    variant: str
    params: Params
    shape: tuple[int, ...]
    seconds: float


def measured_runs(experiment: Experiment, folder: Path | None, table: dict) -> list[Measured]:
    """This card's timed runs of the experiment's variants: every correct row of results/<gpu>/
    <experiment>.csv (a best row counts as the variant it ran), and each tuned config's time where
    its tune found it fastest. A suite's rows (in their own files) are never read: a figure measured
    at a suite's shapes is not fitted to them."""
    out = []
    names = {v.name: v for v in experiment.variants}
    path = Path(folder) / f"{experiment.name}.csv" if folder is not None else None
    if path is not None and path.exists():
        for r in read_csv(path):
            name = variant_ran(r)
            if name not in names or not r.get("correct") or not r.get("time_ms") or r.get("skip_reason"):
                continue
            try:
                params = names[name].completed_params(parse_params_label(r.get("params")))
                shape = shape_of(r["shape"])
            except (ValueError, TypeError, KeyError):
                continue
            if params is not None and len(shape) == len(experiment.dims):
                out.append(Measured(name, params, shape, float(r["time_ms"]) / 1e3))
    for name, entry in (table or {}).items():
        if name not in names or not isinstance(entry, dict):
            continue
        for label, best in (entry.get("by_shape") or {}).items():
            params = accepted_params(names[name], (best or {}).get("params"))
            rate = (best or {}).get("rate")
            if params is None or not rate or len(shape_of(label)) != len(experiment.dims):
                continue
            shape = experiment.shape(*shape_of(label))
            work = experiment.flops(shape) or experiment.bytes_moved(shape)  # GFLOP/s, or GB/s where no FLOPs
            out.append(Measured(name, params, shape.values, work / (float(rate) * 1e9)))
    return out


def fastest_per_shape(runs: list[Measured]) -> dict[str, list[Measured]]:
    """Per variant, its fastest run at each shape it ran."""
    by_variant: dict[str, dict[tuple, Measured]] = {}
    for run in runs:
        shapes = by_variant.setdefault(run.variant, {})
        if run.shape not in shapes or run.seconds < shapes[run.shape].seconds:
            shapes[run.shape] = run
    return {name: sorted(shapes.values(), key=lambda r: r.shape) for name, shapes in by_variant.items()}


# -- the pick ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Pick:
    """What the best row runs at a shape, and why (`why`: the row's chosen_by): 'tuned here', 'tuned at
    <shape>', or the model's deciding numbers (`estimate` then holds them)."""

    variant: Variant
    params: Params
    why: str
    estimate: Estimate | None = None



class Selector:
    """Picks the best row's kernel at any shape of one experiment, from this card's tune (`table`:
    tuned.json's entry for the experiment), its measured runs and its ceilings (`card`)."""

    def __init__(self, experiment: Experiment, table: dict | None = None, card: Card | None = None,
                 runs: list[Measured] = ()):
        self.experiment = experiment
        self.table = table or {}
        self.card = card or card_for(None)
        self.defaults = defaults_from(self.table)
        self.variants = [v for v in experiment.variants if not v.expected_wrong]
        self.refused_arch = {v.name: r for v in self.variants if (r := v.arch_reason(self.card.arch))}
        self.runs = fastest_per_shape(list(runs))
        self._ratios: dict[tuple, float | None] = {}
        self._efficiency: dict[tuple, tuple[float, str]] = {}
        self._configs: dict[tuple, list[Params]] = {}
        self._ranking: dict[tuple, list[Estimate]] = {}

    # -- efficiency ----------------------------------------------------------------------------
    def shape_class(self, v: Variant, shape: Shape | tuple[int, ...]) -> str:
        """'memory' where the problem's FLOPs per compulsory byte are below the card's ridge for the
        variant's compute ceiling (its rate over the copy rate), else 'compute': the same test as the
        % of copy column (records.ceilings.attach_copy)."""
        shape = shape if isinstance(shape, Shape) else self.experiment.shape(*shape)
        flops, rate = self.experiment.flops(shape), self.card.gflops(self.experiment, v)
        if not flops or not rate:
            return "memory"
        return "memory" if flops / self.experiment.bytes_moved(shape) < rate / self.card.copy_gbps else "compute"

    def efficiency(self, v: Variant, shape: Shape) -> tuple[float, str]:
        """(efficiency, where from) of `v` at `shape`: the median, over its CALIBRATION_ROWS measured
        shapes of the same class (shape_class) nearest to `shape` (shape_distance), of the model's
        time there over the measured one. Where it was measured on the other class only, that, but at
        most the median of the variants measured on this class (sgemm's v0, modelled well on squares,
        is not taken to stream a GEMV better than the kernels measured at one); where it was never
        measured, that median; where nothing was measured on the class, its own on the other; where
        nothing at all, 1 (the bare model)."""
        key = (v.name, shape.values)
        if key not in self._efficiency:
            kind = self.shape_class(v, shape)
            other = "memory" if kind == "compute" else "compute"
            own, elsewhere = self._own_efficiency(v, shape, kind), self._own_efficiency(v, shape, other)
            typical = self._typical_efficiency(v, shape, kind)
            if own:
                found = own
            elif elsewhere and typical:
                found = min(elsewhere[0], typical), f"{elsewhere[1]} ({other}-bound), capped at the {kind}-bound median"
            elif typical:
                found = typical, f"(unmeasured {kind}-bound: the measured variants' median)"
            elif elsewhere:
                found = elsewhere[0], f"{elsewhere[1]} ({other}-bound)"
            else:
                found = 1.0, "(nothing measured on this card: the bare model)"
            self._efficiency[key] = found
        return self._efficiency[key]

    def _own_efficiency(self, v: Variant, shape: Shape, kind: str) -> tuple[float, str] | None:
        runs = [r for r in self.runs.get(v.name, ()) if self.shape_class(v, r.shape) == kind]
        runs.sort(key=lambda r: (round(shape_distance(shape, r.shape), 9), r.shape))
        ratios = [(ratio, run) for run in runs[:CALIBRATION_ROWS] if (ratio := self._ratio(v, run)) is not None]
        if not ratios:
            return None
        return statistics.median(r for r, _ in ratios), "from " + "x".join(map(str, ratios[0][1].shape))

    def _typical_efficiency(self, v: Variant, shape: Shape, kind: str) -> float | None:
        """The median of the other measured variants' efficiencies on `kind`-bound shapes near `shape`."""
        found = [own[0] for other in self.variants if other.name in self.runs and other.name != v.name
                 and (own := self._own_efficiency(other, shape, kind))]
        return statistics.median(found) if found else None

    def _ratio(self, v: Variant, run: Measured) -> float | None:
        """The model's time over the measured one, for one measured run (None: the config no longer runs)."""
        key = (v.name, tuple(run.params.items()), run.shape)
        if key not in self._ratios:
            shape = self.experiment.shape(*run.shape)
            est = None
            if v.constraints(run.params, shape) is None:
                est = self._estimate(v, run.params, shape, modelled=True, efficiency=(1.0, ""))
            self._ratios[key] = est.roof_s / run.seconds if est is not None and est.roof_s > 0 else None
        return self._ratios[key]

    # -- one candidate -------------------------------------------------------------------------
    def _estimate(self, v: Variant, params: Params, shape: Shape, modelled: bool,
                  efficiency: tuple[float, str] | None = None) -> Estimate | None:
        """The model's estimate (rule 3); without `modelled`, the cheap bound: no access model, so no
        L2 term and no workspace, and a launch with more blocks than tiles counted as a split."""
        units = work_units(v, params, shape)
        if units is None:
            return None
        blocks, tiles, padding = units
        card, exp = self.card, self.experiment
        traffic, note = None, ""
        if modelled:
            traffic, note = self._traffic_or_sibling(v, params, shape, tiles)
        # More blocks than tiles split K where the model shows partials, or cannot say; a persistent
        # grid likewise shares its tiles evenly (stream-K). Unmodelled, both are assumed: a bound stays a bound.
        partials = (traffic is None or traffic.workspace_bytes is None or traffic.workspace_bytes > 0
                    or (traffic.working_blocks or 0) > tiles)
        split, balanced = blocks > tiles and partials, blocks < tiles and partials
        rate = card.gflops(exp, v)
        flops = exp.flops(shape)
        ideal = {"compute": flops / (rate * 1e9) if flops and rate else 0.0,
                 "DRAM": exp.bytes_moved(shape) / (card.copy_gbps * 1e9),
                 "L2": traffic.l2_bytes / (card.l2_gbps * 1e9) if traffic is not None and card.l2_gbps else 0.0}
        workspace = 2 * (traffic.workspace_bytes or 0.0) / (card.copy_gbps * 1e9) if traffic is not None else 0.0
        eff, source = efficiency or self.efficiency(v, shape)
        return Estimate(v, dict(params), shape, blocks, tiles, split, balanced,
                        quantization(blocks, tiles, card.sms, split, balanced), ideal, padding, workspace, eff,
                        source, traffic, note, card.sms, exp.ceiling_for(v.name)[0],
                        schedulers_busy(v, params, shape, card.sms, card.arch))

    def _traffic_or_sibling(self, v: Variant, params: Params, shape: Shape, tiles: int) -> tuple[Traffic | None, str]:
        """The access model's traffic for the config; where the model declines it or is too large to
        evaluate, the L2 bytes of the nearest config it does model (one param changed, the same
        tiles first: kc's SPLIT=1 for SPLIT=3, t4's SCHEDULE=0 for 1), else (a variant with no model)
        what its tiles' panels read (panel_bytes); its partials then unknown. (None, why) where
        neither can be said."""
        found = _traffic(self.experiment, v, tuple(params.items()), shape)
        if isinstance(found, Traffic):
            return found, ""
        siblings = []
        for p in v.params:
            for value in p.choices:
                other = params | {p.name: value}
                if value != params[p.name] and v.constraints(other, shape) is None:
                    units = work_units(v, other, shape)
                    siblings.append((units is None or units[1] != tiles, other, f"{p.name}={value}"))
        for _, other, label in sorted(siblings, key=lambda s: s[0]):
            near = _traffic(self.experiment, v, tuple(other.items()), shape)
            if isinstance(near, Traffic):
                return Traffic(near.l2_bytes, None), f"{found}: L2 bytes of {label}"
        panels = panel_bytes(self.experiment, params, shape, tiles)
        if panels is not None:
            return Traffic(panels, None), f"{found}: L2 bytes of its tiles' panels"
        return None, f"{found}: compulsory bytes only"

    # -- candidates ----------------------------------------------------------------------------
    def refusal(self, variant: Variant, shape: Shape) -> str | None:
        """Why `variant` cannot run `shape` at all (architecture, or every config refused), or None."""
        if variant.name in self.refused_arch:
            return self.refused_arch[variant.name]
        if not self.configs(variant, shape):
            return variant.constraints(variant.default_params(), shape) or "no config accepts this shape"
        return None

    def configs(self, v: Variant, shape: Shape) -> list[Params]:
        """The configs of `v` the model weighs at `shape` (rule 2): seeds first, then the moves, at
        most MAX_CONFIGS by their cheap bound."""
        key = (v.name, shape.values)
        if key not in self._configs:
            self._configs[key] = self._find_configs(v, shape)
        return self._configs[key]

    def _find_configs(self, v: Variant, shape: Shape) -> list[Params]:
        def runnable(p: Params | None) -> bool:
            return p is not None and v.constraints(p, shape) is None and _grid_blocks(v, p, shape) is not None

        seeds: list[Params] = []
        for p in self._seeds(v, shape):
            if runnable(p) and p not in seeds:
                seeds.append(p)
        moves: list[Params] = []
        for seed in seeds[:2]:
            grid = _grid_blocks(v, seed, shape), work_units(v, seed, shape)
            for p in v.params:
                for value in p.choices:
                    if value == seed[p.name]:
                        continue
                    moved = self._repaired(v, seed | {p.name: value}, p.name, seed, runnable)
                    if moved is not None and (_grid_blocks(v, moved, shape), work_units(v, moved, shape)) != grid \
                            and moved not in seeds and moved not in moves:
                        moves.append(moved)
        if len(seeds) + len(moves) > MAX_CONFIGS:
            bound = {i: self._estimate(v, m, shape, modelled=False) for i, m in enumerate(moves)}
            order = sorted(range(len(moves)), key=lambda i: (bound[i].seconds if bound[i] else math.inf, i))
            moves = [moves[i] for i in order[:max(0, MAX_CONFIGS - len(seeds))]]
        return (seeds + moves)[:MAX_CONFIGS]

    def _seeds(self, v: Variant, shape: Shape) -> list[Params | None]:
        entry = self.table.get(v.name) or {}
        out: list[Params | None] = [self.defaults(v, shape), v.default_params()]
        out += [accepted_params(v, (b or {}).get("params")) for b in (entry.get("by_shape") or {}).values()]
        chosen = self.experiment.best_default(shape)
        if chosen is not None and chosen[0] == v.name:
            out.append(v.completed_params(chosen[1]))
        return out

    @staticmethod
    def _repaired(v: Variant, moved: Params, changed: str, seed: Params, runnable) -> Params | None:
        """`moved`, or where its constraints refuse it, the first single other param changed to make
        it runnable (sk's BM=1 needs TM=1), or None."""
        if runnable(moved):
            return moved
        for q in v.params:
            if q.name == changed:
                continue
            for value in q.choices:
                if value != seed[q.name] and runnable(fixed := moved | {q.name: value}):
                    return fixed
        return None

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
        return Pick(v, params, "tuned here" if label == shape.label else f"tuned at {label}")

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
        cannot beat the best time found; best first, ties to a config its own model evaluated."""
        order = sorted(range(len(bounds)), key=lambda i: (self._guess(bounds[i]), i))
        found: list[Estimate] = []
        best = math.inf
        tried: dict[str, list[float]] = {}  # each variant's modelled times so far
        for i in order:
            if len(found) >= most:
                break
            b = bounds[i]
            mine = tried.get(b.variant.name, [])
            # A bound that cannot win is skipped; so is a variant already modelled at twice the best time
            # found (its access pattern, not its config, is what the guess missed), or modelled thrice.
            if b.seconds >= best or (mine and (min(mine) >= 2 * best or len(mine) >= MODELLED_PER_VARIANT)):
                continue
            est = self._estimate(b.variant, b.params, b.shape, modelled=True)
            found.append(est)
            tried.setdefault(b.variant.name, []).append(est.seconds)
            best = min(best, est.seconds)
        rank = {id(e): i for i, e in enumerate(found)}
        return sorted(found, key=lambda e: (*e.order, rank[id(e)]))

    def estimates(self, shape: Shape) -> list[Estimate]:
        """The candidates the access model evaluated at the shape (at most MAX_MODELLED), best first."""
        return self._modelled(self._bounds(shape, self.variants), MAX_MODELLED)

    def ranking(self, shape: Shape) -> list[Estimate]:
        """Each variant's best estimate at the shape, best first: the best of what estimates() modelled
        and of its own few configs modelled in their own order (at most MODELLED_PER_VARIANT), so
        that every variant is weighed by its access model, not its bound alone."""
        if shape.values not in self._ranking:
            shared = self.estimates(shape)
            out = []
            for v in self.variants:
                found = [e for e in shared if e.variant.name == v.name]
                found += self._modelled(self._bounds(shape, [v]), MODELLED_PER_VARIANT)
                if found:
                    out.append(min(found, key=lambda e: e.order))
            self._ranking[shape.values] = sorted(out, key=lambda e: e.order)
        return self._ranking[shape.values]

    def pick(self, shape: Shape) -> Pick | None:
        """The best row's variant and params at `shape` (rules 1-3), or None (why_none says why)."""
        chosen = self.tuned(shape)
        if chosen is not None:
            return chosen
        found = self.ranking(shape)
        if not found:
            return None
        top = found[0]
        return Pick(top.variant, top.params, top.reason(), top)

    def why_none(self, shape: Shape) -> str:
        """One line: why no variant of the experiment runs `shape`."""
        reasons = [f"{v.name}: {self.refusal(v, shape)}" for v in self.variants]
        return f"no variant of {self.experiment.name} runs {shape.label}: " + "; ".join(reasons[:4]) + (
            f"; and {len(reasons) - 4} more" if len(reasons) > 4 else "")


def pick(experiment: Experiment, table: dict, shape: Shape, card: Card | None = None,
         runs: list[Measured] = ()) -> Pick | None:
    """The best row's pick at `shape` from `table` (tuned.json's entry for the experiment) and the
    measured `runs`, on `card` (default: the H200's reference ceilings)."""
    return Selector(experiment, table, card, runs).pick(shape)


def selector(experiment: Experiment, folder: Path | None) -> Selector:
    """A Selector on the card whose results are in `folder` (results/<gpu>/: tuned.json, the
    experiment's CSV, ceilings.csv; None: nothing tuned or measured, the H200's reference ceilings)."""
    table = load_tuned(folder).get(experiment.name, {}) if folder is not None else {}
    return Selector(experiment, table, card_for(folder), measured_runs(experiment, folder, table))


# -- a suite's tune and its benchmark ---------------------------------------------------------------
def tune_targets(chooser: Selector, shapes: list[Shape], top: int = 2) -> dict[str, list[Shape]]:
    """What `gpulab tune EXP --suite NAME` tunes when no variant is named: at each shape the `top`
    variants the model ranks first, and for each variant the shapes where it is among them (its
    tune then records its fastest config at each, so the best row there reads 'tuned here')."""
    out: dict[str, list[Shape]] = {}
    for shape in shapes:
        for est in chooser.ranking(shape)[:top]:
            out.setdefault(est.variant.name, []).append(shape)
    return {v.name: out[v.name] for v in chooser.variants if v.name in out}


def contenders(chooser: Selector, shape: Shape, within: float) -> list[str]:
    """The variants whose best estimate at `shape` is within `within` times the model's best: the
    ones worth timing beside the pick to learn whether it was right."""
    ranked = chooser.ranking(shape)
    if not ranked:
        return []
    return [e.variant.name for e in ranked if e.seconds <= within * ranked[0].seconds]


def pick_record(experiment: Experiment, chooser: Selector, shape: Shape, columns: dict[str, Any]) -> dict:
    """gpulab best's row for one shape: the pick (variant, params, chosen_by, the model's time) or
    why there is none."""
    chosen = chooser.pick(shape)
    row = {"experiment": experiment.name, **shape.as_record(), **columns}
    if chosen is None:
        return row | {"variant": "", "params": "", "chosen_by": chooser.why_none(shape)}
    est = chosen.estimate
    return row | {"variant": chosen.variant.name, "params": chosen.variant.params_label(chosen.params),
                  "chosen_by": chosen.why, **({"model_ms": est.seconds * 1e3} if est else {})}
