"""The modelled time of one candidate config at one shape, on one card's measured ceilings: the
model gpulab.jobs.best chooses with (its module docstring, point 3, says what goes into it). Here
are the card (Card: SMs, ceilings, architecture), the work and its quantization over the SMs
(work_units, quantization), the share of warp schedulers a launch keeps busy (schedulers_busy), the
bytes the access model says the SMs move (Traffic, from model/predict.py) and the estimate that puts
them together (Estimate)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from gpulab.arith import cdiv
from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.gpu.clusters import blocks_at_once
from gpulab.gpu.compile import DEFAULT_ARCH
from gpulab.gpu.device import sm_count
from gpulab.gpu.occupancy import SM_LIMITS, SMEM_ALLOC_UNIT, SUB_PARTITIONS, WARP
from gpulab.model.predict import LDGSTS, active_blocks, instruction_table, summarize
from gpulab.records.ceilings import H200_REFERENCE_CEILINGS, ceilings_path
from gpulab.records.ceilings import load as load_ceilings

# Lanes an access-model evaluation may take (model/predict.py evaluates representative blocks and
# loop steps lane by lane; here its global-memory instructions alone): about a tenth of a second
# on one core.
LANE_BUDGET = 1 << 19
ARCH_WITHOUT_CERTAINTY = DEFAULT_ARCH  # the card assumed where no ceilings file names one
REFERENCE_SOURCE = "H200 reference ceilings (none measured for this card)"  # Card.source where none were measured


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
    (records.ceilings.H200_REFERENCE_CEILINGS, labelled so)."""
    stored = load_ceilings(ceilings_path(folder)) if folder is not None else None
    if stored is not None and stored.copy_gbps:
        compute = {str(r["ceiling"]): float(r["gflops"]) for r in stored.rows if r.get("gflops")}
        arch = next((str(r["arch"]) for r in stored.rows if r.get("arch")), ARCH_WITHOUT_CERTAINTY)
        return Card(sm_count(), float(stored.copy_gbps), stored.l2_gbps, compute, arch,
                    f"ceilings measured in {stored.path}")
    ref = H200_REFERENCE_CEILINGS
    compute = {"fma_fp32": ref["fma_gflops"],
               **{k: v for k, v in ref.items() if k not in ("fma_gflops", "copy_gb_per_s", "l2_gb_per_s")}}
    return Card(sm_count(), ref["copy_gb_per_s"], ref["l2_gb_per_s"], compute, ARCH_WITHOUT_CERTAINTY,
                REFERENCE_SOURCE)


# -- the model of one candidate ---------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Traffic:
    """What the access model says a launch moves: bytes the SMs load and store through L2, the
    partials a split writes beyond the output (read back once by its fixup), and the DRAM floor of
    what the kernel itself reads and writes (its model's dram_compulsory_bytes: for a kernel that
    reads staged copies, those copies, not the problem's inputs)."""

    l2_bytes: float
    workspace_bytes: float | None  # None: not known (the L2 bytes came from elsewhere, see Estimate.note)
    warps_loading: float | None = None  # the share of the launch's warps that issue its loads (_warps_loading)
    # Where the launch has more blocks than tiles: how many of them store anything (_working_blocks);
    # None: not asked, or no warp stores to tell (TMA stores)
    working_blocks: int | None = None
    dram_bytes: float | None = None  # None: the model gives none; the problem's compulsory bytes stand


# No kernel outruns the card: an estimate is never faster than its work evenly spread at this card's
# measured ceilings (Estimate.floor_s), whatever efficiency its calibration lends it. Reads alone may
# pass the copy ceiling (a read and a write) a little: sgemm's gv streamed its weights at 107.5% of it
# (1x57344x8192, H200, 2026-12-04), none further; no kernel has reached 86% of a compute ceiling.
# gemm_bf16's t0 was put at up to 3.2x the copy ceiling at llm shapes on an H100 with no runs of its
# own (its efficiency read from an H200 run classed by the H100's ridge: best.Selector.shape_class),
# chosen at 11 of the 40, and ran at 0.06-0.45x cuBLAS BF16 there (notebook/device/device_call29.sh).
READ_HEADROOM = 1.1

# A memory-bound launch in more than one wave of blocks, whose last wave leaves block slots idle,
# streams that wave with fewer loads in flight: each idle slot costs this share of a block's time
# (Estimate.tail). Measured as d0's KW = 4 against KW = 8 in G = 1, U = 4 (4 and 2 blocks an SM by
# registers) at the llm suite's decode shapes, where their waves differ: at N = 6144, 384 blocks make
# 0.73 waves of KW = 4 and 1.45 of KW = 8, and KW = 4 ran 0.2-4.6% faster on an H100 (call 80) and
# 6-11% on the H200; at N = 10240 (640 blocks: 1.21 waves against 2.42) KW = 8 ran 5-6% faster on
# both. Those gaps give 0.10-0.13 on the H100 and 0.12-0.29 on the H200. A single wave that fills the
# slots in part is not counted: its runs' efficiencies carry that (a form that counted it put t1's 32-80
# blocks at decode at 2.1-2.3x their time, and the typical error on the H200's llm rows went from 9% to
# 12%: docs/notes/gemm_bf16-notes.md, "A last wave's idle block slots").
TAIL_IDLE_COST = 0.15


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
    hidden: float = 1.0  # the share of a busy scheduler's issue rate its warps keep (latency_hidden)
    # The variant's stage step before the kernel (Variant.stage_bytes at the copy ceiling): sgemm's
    # v14 splits A and B into TF32 parts, 4x their bytes, a pass that outweighs the GEMM at M = 128.
    staging_s: float = 0.0
    at_once: int = 0  # the SMs that run the launch at once (in clusters, fewer: sms_at_once); 0: all `sms`
    resident: int = 1  # the blocks an SM holds at once, by threads and shared memory (blocks_per_sm)
    # Whether the bytes are not this launch's: where its access model declines the config (a
    # mechanism it cannot see), or they are another launch's or the tiles' panels (note says whence).
    # A config too large to evaluate whose sibling of the same launch stands in is not borrowing.
    borrowed: bool = False
    fixup_s: float = 0.0  # one split tile's fixup where it reads the slices in series (serial_fixup_s)
    # The blocks an SM held at once where the card ran this config (its rows' theoretical_blocks_per_sm,
    # registers counted): `resident` counts threads and shared memory only, which put d0's 119-register
    # KW = 8 blocks at 8 an SM where 2 fit. 0: never run here, its waves unknown (no tail counted).
    compiled_resident: int = 0
    partials_bytes: float = 0.0  # what its slices store beyond the output (split_partials_bytes)

    @property
    def limits_s(self) -> dict:
        """Each limit's time at this launch: the quantized compute and L2, the DRAM's (which no
        share of SMs slows: the copy ceiling is the whole card's); the memory limits over the share
        of the warps that load (memory-bound, a kernel is fed by the loads it has in flight)."""
        share = self.warps_loading or 1.0
        return {"compute": self.quantization * self.padding * self.ideal_s["compute"] / (self.schedulers * self.hidden),
                "DRAM": self.ideal_s["DRAM"] * self.tail / share, "L2": self.quantization * self.ideal_s["L2"] / share}

    @property
    def slots(self) -> int:
        """The blocks the card runs at once where the tail counts: the SMs that run the launch at once
        times the blocks an SM held as run here (compiled_resident); 0 for a config never run here or
        a persistent grid (its blocks stay to the end)."""
        if not self.compiled_resident or self.blocks < self.tiles:
            return 0
        return (self.at_once or self.sms) * min(self.compiled_resident, self.resident)

    @property
    def tail(self) -> float:
        """The DRAM limit's factor for a launch of more waves than one whose last leaves slots idle:
        TAIL_IDLE_COST for each idle slot, over the blocks (1 where there is no such wave)."""
        if not self.slots or self.units <= self.slots:
            return 1.0
        return 1 + TAIL_IDLE_COST * (-self.units % self.slots) / self.units

    @property
    def warps_loading(self) -> float | None:
        return self.traffic.warps_loading if self.traffic is not None else None

    @property
    def roof_s(self) -> float:
        return max(self.limits_s.values()) + self.workspace_s + self.fixup_s + self.staging_s

    @property
    def floor_s(self) -> float:
        """The least time the card's ceilings allow: the FLOPs at the compute ceiling, the DRAM bytes
        at READ_HEADROOM times the copy ceiling, each evenly spread."""
        return max(self.ideal_s["compute"], self.ideal_s["DRAM"] / READ_HEADROOM)

    @property
    def floored(self) -> bool:
        """Whether the efficiency lent would put the kernel past the card's ceilings (floor_s)."""
        return self.roof_s / self.efficiency < self.floor_s

    @property
    def seconds(self) -> float:
        return max(self.roof_s / self.efficiency, self.floor_s)

    @property
    def bound(self) -> str:
        limits = self.limits_s
        return max(limits, key=lambda k: limits[k])

    @property
    def order(self) -> tuple:
        """How estimates rank: by time (to a part in 10^12 of a second: float noise breaks no tie); a
        tie to the config whose bytes are its launch's (not `borrowed`), then to the one with the most
        headroom on its other limits (two DRAM-bound kernels: the one whose padded tiles compute and
        load less)."""
        limits = sorted(self.limits_s.values())
        return round(self.seconds, 12), self.borrowed, limits[-2] + self.workspace_s

    @property
    def rounds(self) -> float:
        """How many blocks (or a persistent block's tiles) the busiest SM runs one after another, each
        paying its own start (the pipeline's fill) and end (its tile's epilogue, a split's partials)
        with nothing else on the SM to hide them: where an SM holds one block at a time (`resident`),
        its share of the units; where it holds more, 1 (one block's start or end overlaps the others'
        work: only the launch's own start and end stand out)."""
        return max(1.0, self.quantization * self.units / self.sms) if self.resident == 1 else 1.0

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
            sms = self.at_once or self.sms
            last = self.units % sms
            fill = f", the last {100 * last / sms:.0f}% full" if last and self.units > sms else ""
            where = f"{sms} SMs" if sms == self.sms else f"{sms} of {self.sms} SMs hold its clusters"
            waves = self.units / sms  # two figures below 10, whole waves above ('5e+02' otherwise)
            work = f"{waves:.2g}" if waves < 10 else f"{waves:,.0f}"
            work += f" waves ({self.units} {what}, {where}{fill})"
        parts = [work]
        if self.split:
            parts.append(f"split {self.blocks / self.tiles:.3g}")
        if self.padding >= 1.5 and self.bound == "compute":
            parts.append(f"padded tiles compute {self.padding:.3g}x the product")
        if self.schedulers < 1 and self.bound == "compute":
            parts.append(f"{round(self.schedulers * SUB_PARTITIONS)} of an SM's {SUB_PARTITIONS} warp schedulers busy")
        if self.warps_loading is not None and self.warps_loading < 0.75 and self.bound != "compute":
            parts.append(f"{100 * self.warps_loading:.0f}% of its warps load")
        if self.partials_bytes:
            unsaid = self.traffic is not None and self.traffic.workspace_bytes is None
            parts.append(f"{self.partials_bytes / 1e6:.3g} MB of partials"
                         + (" (a tile of accumulators a block: its access model cannot say)" if unsaid else ""))
        if self.fixup_s >= 0.1 * self.roof_s:
            parts.append(f"a tile's partials added in series {100 * self.fixup_s / self.roof_s:.0f}% of the time")
        if self.tail >= 1.02 and self.bound == "DRAM":
            idle = -self.units % self.slots
            parts.append(f"{self.units / self.slots:.2g} waves of the {self.slots} blocks the SMs hold at once,"
                         f" the last leaving {100 * idle / self.slots:.0f}% idle")
        if self.staging_s >= 0.1 * self.roof_s:
            parts.append(f"staging {100 * self.staging_s / self.roof_s:.0f}% of the time")
        name = {"compute": self.rate_name, "DRAM": "copy", "L2": "L2 read"}[self.bound]
        parts.append(f"{self.bound}-bound at {100 * self.ideal_s[self.bound] / self.seconds:.0f}% of the {name} ceiling")
        parts.append(f"efficiency {self.efficiency:.2f} {self.efficiency_from}")
        if self.floored:
            parts.append("held to the card's ceilings (that efficiency would outrun them)")
        if self.note:
            parts.append(self.note)
        return "model: " + ", ".join(parts)


def _output_bytes(experiment: Experiment, shape: Shape) -> float | None:
    """The bytes of a GEMM's output, from its bytes_moved: what grows with K is the operands, the
    rest (bytes_moved less K times that growth) the output. None for a problem with no K: there is
    no split of a reduction to write partials, so every store is the output (a stencil's 268 MB of
    stores were read as partials before, H200 main job 2026-12-04)."""
    if "K" not in shape.names:
        return None
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


# Why a config has no traffic where its access model declines it: a mechanism the model cannot see
# (t4's stream-K flags), not a config too large to evaluate here.
DECLINED = "the access model declines this config"


def traffic_of(experiment: Experiment, variant: Variant, params: tuple, shape: Shape) -> Traffic | str:
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
        # Only global memory reaches L2 and DRAM: the shared-memory instructions (most of a tiled
        # kernel's, and the costliest to count, bank by bank) are left out of the evaluation.
        model = variant.access(p, shape)
        model = dataclasses.replace(model, instructions=tuple(i for i in model.instructions if i.space == "global"))
        if _lanes(model) > LANE_BUDGET:
            return "access model too large to evaluate here"
        rows = instruction_table(model)
        summary = summarize(rows, model)
    except GpulabError:  # NotModelled and its kin: the model declines this config
        return DECLINED
    except Exception as exc:  # a user's model that fails costs its candidate the L2 term, not the pick
        return f"the access model failed ({type(exc).__name__})"
    l2 = 32.0 * (summary["gmem_load_sectors"] + summary["gmem_store_sectors"]) + summary["tma_load_bytes"]
    output = _output_bytes(experiment, shape)
    beyond = 0.0 if output is None else summary["gmem_store_requested_bytes"] - output
    units = work_units(variant, p, shape)
    working = _working_blocks(model) if units is not None and units[0] > units[1] else None
    # A split over K: each block runs its own slice of the k loop (slices: blocks per tile)
    split = units is not None and units[0] > units[1] and shows_partials(variant, p, max(0.0, beyond), working, units[1])
    slices = units[0] / units[1] if split else 1.0
    return Traffic(float(l2), max(0.0, float(beyond)), _warps_loading(model, rows, slices, summary["tma_load_bytes"]),
                   working, float(model.dram_compulsory_bytes) or None)


def shows_partials(variant: Variant, params: Params, workspace_bytes: float | None, working_blocks: int | None,
                   tiles: int) -> bool:
    """Whether a launch's blocks each compute a part of a tile's sum (a split over K where they
    outnumber the tiles, a stream-K share where fewer loop over them), not a tile each: partials
    stored beyond the output, or not known (None); more blocks storing than there are tiles (kc adds
    its partials in its cluster's shared memory); or the variant's split_param above 1 (kc again,
    where N is under its bands and one block a tile stores). Else the extra blocks idle (a cluster
    padded past M). Partials not known count, unless the variant's stream_k_param says its tiles go
    whole (whole_tiles)."""
    unknown = workspace_bytes is None and not whole_tiles(variant, params)
    return (unknown or (workspace_bytes or 0) > 0 or (working_blocks or 0) > tiles
            or params.get(variant.split_param, 1) > 1)


def whole_tiles(variant: Variant, params: Params) -> bool:
    """Whether the variant's stream_k_param is 0 in `params`: its persistent grid hands out whole
    tiles, round by round, whatever the access model can say."""
    return bool(variant.stream_k_param) and not params.get(variant.stream_k_param)


def _working_blocks(model) -> int | None:
    """The blocks that store anything (the most any one global store reaches), or None where no
    warp stores (a TMA store). A launch of more blocks than tiles either splits each tile over
    blocks, which all store a share (kc's cluster adds its partials through distributed shared
    memory, so no partials reach global memory: its blocks are told apart by this), or pads a
    cluster past M, whose blocks past the last row store nothing."""
    stores = [instr for instr in model.instructions if instr.space == "global" and instr.kind == "store"]
    return max((active_blocks(model, instr) for instr in stores), default=None)


def _warps_loading(model, rows: list[dict], slices: float = 1.0, tma_bytes: float = 0.0) -> float | None:
    """The share of the launch's warps that issue its global loads, weighted by what each load moves:
    per load instruction, its warp requests (a warp whose lanes are all guarded off makes none) over
    what every warp of every block would make on every trip of its loops, averaged by its sectors
    (None: no warp-level global loads, TMA's say). TMA's bytes (`tma_bytes`) weigh in as fully fed:
    one thread keeps a ring of copies in flight whatever the other warps do (gemm_bf16's ks at
    1x4096x4096 loads 38 MB by TMA and 1.3 MB of partials by warps, from one warpgroup in four:
    counted alone those made it a fifth of its loads in flight, 4.6x its memory time). sgemm's v0
    at M = 1 keeps one row of threads of its 16 x 16 blocks, 1 warp in 8 loads; gemm_bf16's d0 at
    M = 1 guards off most of its loads of A, which move little beside its loads of Bt, which every
    warp makes.
    In a split over K (`slices` blocks per tile) a block loads on the trips of its own slice only; an
    access model may write that as the whole k loop with the trips outside the slice guarded off
    (sgemm's v13 and sx), which is a shorter loop, not idle warps: there every warp's possible
    requests are those of its share of the trips. Counted as idle, v13 at 128x10240x8192 in 7
    slices a tile was modelled at 7x its memory time, 0.99 ms; it ran 0.48 (H200, 2026-12-04)."""
    warps = cdiv(math.prod(model.block), WARP) * math.prod(model.grid)
    weighted = moved = 0.0
    for instr, row in zip(model.instructions, rows):
        if instr.space == "global" and instr.kind in ("load", LDGSTS) and row["sectors"]:
            possible = warps * math.prod(loop.trips for loop in instr.loops) / slices
            weighted += row["sectors"] * min(1.0, row["instructions"] / possible)
            moved += row["sectors"]
    if not moved:
        return None
    tma_sectors = tma_bytes / 32.0
    return (weighted + tma_sectors) / (moved + tma_sectors)


# The bytes of one partial's element: every split kernel of gpulab's accumulates in FP32.
ACCUMULATOR_BYTES = 4


def split_partials_bytes(variant: Variant, params: Params, blocks: int, split: bool,
                         traffic: Traffic | None) -> float:
    """What a launch's slices store beyond the output, to be read back: the access model's (its
    requested stores beyond the output); where it cannot say (a config too large to evaluate whose
    sibling runs another launch), a BM x BN tile of accumulators a block of a split, what each slice
    hands on. 0 for the cheap bound (`traffic` None), a launch that does not split, params that name
    no BM and BN, and partials that stay on chip (Variant.split_param: kc adds them in its cluster's
    shared memory). Unknown, they counted nothing: sgemm's v13 at 300x3000x1000 cut its 120 tiles 13
    ways (1,560 blocks, 51 MB of partials), was modelled at 48 us and ran 88.4 on an H100 (cuBLAS
    FP32 59.5; notebook/probes/fixed_cost/, call 90); with them counted it is modelled at 93.8 and
    ran 88.2 there (notebook/probes/alone-h100/call92/, 2026-12-07)."""
    if traffic is None:
        return 0.0
    if traffic.workspace_bytes is not None:
        return traffic.workspace_bytes
    if not split or variant.split_param or not {"BM", "BN"} <= set(params):
        return 0.0
    return blocks * params["BM"] * params["BN"] * ACCUMULATOR_BYTES


def serial_fixup_s(variant: Variant, partials_bytes: float, tiles: int, split: bool, card: Card) -> float:
    """What one split tile's fixup adds where the block that adds its partials reads them one slice
    after another (Variant.serial_fixup): the tile's share of the launch's partials (split_partials_bytes),
    at one SM's share of the L2 read ceiling (a lower bound: each slice waits a round trip too,
    which no ceiling measures). 0 where the launch does not split, the slices' loads are in flight
    at once (the partials' own term counts those at the copy ceiling) or nothing is stored (the
    cheap bound: no access model, so no partials either).
    sgemm's v12 at 300x31x2048 shares 5 tiles among 528 blocks, so each tile's first block waits
    on 105 later segments in turn: modelled at 2.5 us without this, it ran 110 us on an H100
    (cuBLAS FP32 13.0; notebook/probes/fixup/); v13 at 2048x31x4096 in 256 x 64 tiles, 16 slices of
    64 KiB each read one after another, ran 59.2 where sx in 64 x 32 tiles, its 8 slices' loads in
    flight at once, ran 32.6 (both on that card)."""
    if not (split and variant.serial_fixup and card.l2_gbps) or tiles <= 0:
        return 0.0
    return partials_bytes / tiles / (card.l2_gbps * 1e9 / card.sms)


def grid_blocks(variant: Variant, params: Params, shape: Shape) -> int | None:
    try:
        return math.prod(variant.launch(params, shape).grid)
    except Exception:  # a launch that cannot be computed for this config: not a candidate
        return None


def work_units(variant: Variant, params: Params, shape: Shape) -> tuple[int, int, float] | None:
    """(blocks, tiles, padded fraction): the launch's blocks; the output tiles where the params name
    BM and BN and the shape M and N (else the blocks); the work the padded tiles compute over the
    problem's (>= 1)."""
    blocks = grid_blocks(variant, params, shape)
    if not blocks:
        return None
    tiles, padded = blocks, 1.0
    if {"BM", "BN"} <= set(params) and {"M", "N"} <= set(shape.names):
        m, n = shape["M"], shape["N"]
        # A cluster's blocks take CLUSTER consecutive BM-row tiles of one BN column (t4 and v14,
        # which multicast the Bt tile they share): a cluster tile is the unit, and where M ends
        # inside it the blocks past M compute padding. Counted per row tile, t4 at 1x57344x8192 (4
        # blocks a cluster) looked like 3 rounds on 120 SMs; it ran 10 on 30 clusters, 0.78 ms
        # (H200, 2026-12-04, the llm suite).
        rows = params["BM"] * params.get("CLUSTER", 1)
        tiles = cdiv(m, rows) * params.get("CLUSTER", 1) * cdiv(n, params["BN"])
        padded = tiles * params["BM"] * params["BN"] / (m * n)
    if "BK" in params and "K" in shape.names:
        padded *= cdiv(shape["K"], params["BK"]) * params["BK"] / shape["K"]
    return blocks, tiles, padded


# Warps per scheduler at which an SM's issue rate is taken as whole, and how fast it falls below:
# a scheduler with w warps issues at w / (w + LATENCY_WARPS) of the rate it has with 4 (latency_hidden).
FULL_WARPS_PER_SCHEDULER = 4
LATENCY_WARPS = 1.25
FMA_CEILING = "fma_fp32"  # the CUDA cores' FP32 FMA rate (records/ceilings.py): the kernels latency_hidden holds


def sms_at_once(variant: Variant, params: Params, shape: Shape, sms: int) -> int:
    """The SMs that run the launch's blocks at once: all `sms`, or where its blocks come in clusters
    those that hold whole clusters (gpulab.gpu.clusters; each of gpulab's clustered kernels holds an
    SM a block). kc at 1024x1024x4096 in 32 clusters of four was counted as 0.97 waves on the
    H200's 132 SMs, which hold 30 such clusters, and modelled at 16.9 us: it ran 35.2, twice cuBLAS
    BF16's time (2026-12-05, notebook/probes/issue40/call26); in two waves it is modelled at 33.8."""
    try:
        cluster = variant.launch(params, shape).cluster
    except Exception:  # no launch: no candidate either (work_units says so)
        return sms
    return min(sms, blocks_at_once(cluster)) if cluster > 1 else sms


def blocks_per_sm(variant: Variant, params: Params, shape: Shape, arch: str) -> tuple[int, int] | None:
    """(warps a block, blocks an SM holds at once): the blocks that fit beside each other by threads,
    blocks and shared memory (registers are not known before compiling: they can only fit fewer,
    never more). None: no launch for this config."""
    try:
        launch = variant.launch(params, shape)
    except Exception:  # no launch: no candidate either (work_units says so); nothing to scale here
        return None
    warps = cdiv(math.prod(launch.block), WARP)
    limits = SM_LIMITS.get(arch, SM_LIMITS[ARCH_WITHOUT_CERTAINTY])
    smem = cdiv(launch.smem_dynamic_bytes or 0, SMEM_ALLOC_UNIT) * SMEM_ALLOC_UNIT + limits.smem_reserved_per_block
    return warps, max(1, min(limits.max_blocks, limits.max_warps // max(1, warps), limits.smem_bytes // smem))


def k_chain(variant: Variant, params: Params, shape: Shape, sms: int, arch: str) -> tuple[int, int] | None:
    """(waves, steps) of a launch whose k-loop waits for its own loads every step (Variant.
    k_step_param): the blocks over what the SMs that run it at once hold (sms_at_once, blocks_per_sm:
    by threads and shared memory: at most the waves there are), and ceil(K / the step's
    depth) steps in each. None for a pipelined k-loop, or no launch."""
    depth = params.get(variant.k_step_param) if variant.k_step_param else None
    fit = blocks_per_sm(variant, params, shape, arch)
    blocks = grid_blocks(variant, params, shape)
    if not depth or fit is None or not blocks or "K" not in shape.names:
        return None
    return cdiv(blocks, sms_at_once(variant, params, shape, sms) * fit[1]), cdiv(shape["K"], depth)


def resident_warps(variant: Variant, params: Params, shape: Shape, sms: int, arch: str) -> int | None:
    """The warps the busiest SM holds at once: a block's, times the blocks it gets, at most the
    blocks that fit beside each other (blocks_per_sm). None: no launch for this config."""
    found = blocks_per_sm(variant, params, shape, arch)
    if found is None:
        return None
    warps, fit = found
    return warps * min(cdiv(grid_blocks(variant, params, shape) or 1, sms), fit)


def schedulers_busy(variant: Variant, params: Params, shape: Shape, sms: int, arch: str) -> float:
    """The share of an SM's warp schedulers (SUB_PARTITIONS, 4) the launch keeps a warp on: each
    issues only its own warps, so an SM holding fewer warps than it has schedulers computes at that
    share of its rate at best (sgemm's v11 at 128 x 4096 x 4096 in 64 x 64 tiles: 128 blocks of 2 warps,
    one block an SM, half of every SM idle)."""
    resident = resident_warps(variant, params, shape, sms, arch)
    return 1.0 if resident is None else min(1.0, resident / SUB_PARTITIONS)


def latency_hidden(variant: Variant, params: Params, shape: Shape, sms: int, arch: str, ceiling: str) -> float:
    """The share of its issue rate a busy scheduler keeps with the warps it holds: a warp waiting on
    an operand (shared memory, a dependent FMA) issues nothing, and only other warps fill the gap.
    w / (w + LATENCY_WARPS) over its value at FULL_WARPS_PER_SCHEDULER, at most 1. Fitted to sgemm's
    CUDA-core kernels on the H200 (2026-12-04, the bare model's time over the measured one, by the
    warps their SMs held): with one warp a scheduler they reached 0.58-0.74 of what they reached with
    two or three (v6-v9, v11, sx), with two 0.85-0.93 of three (v11, v13, sx).
    Only for kernels held to the FMA ceiling (`ceiling`, the compute ceiling's name): the tensor-core
    kernels show no such fall (gemm_bf16's t1 ran at 0.34 of its model with 4 warps an SM, 0.37 with
    8), and one that always runs the same warps an SM (t4: one block of 12) would have it constant,
    for its calibration to absorb."""
    resident = resident_warps(variant, params, shape, sms, arch)
    if resident is None or ceiling != FMA_CEILING:
        return 1.0
    w = max(1.0, resident / SUB_PARTITIONS)
    full = FULL_WARPS_PER_SCHEDULER / (FULL_WARPS_PER_SCHEDULER + LATENCY_WARPS)
    return min(1.0, w / (w + LATENCY_WARPS) / full)


def mostly_padding(experiment: Experiment, params: Params | None, shape: Shape | tuple[int, ...]) -> bool:
    """Whether most of a tile's rows are past M: fewer than a quarter of its BM rows hold rows of the
    product (M = 16 in tiles of 128). TMA-fed kernels run such tiles slower than their model says,
    more than where the tile is full (t3, t4 and kc on the H200, 2026-12-04: 1.5-2x their time at M =
    128 on the same N and K, the model's the same), so the best-row model reads their efficiency
    there from runs as padded where there are any. False for a kernel without BM (no row tiles)."""
    values = shape.values if isinstance(shape, Shape) else shape
    bm = params.get("BM") if params else None
    if not bm or "M" not in experiment.dims:
        return False
    m = values[experiment.dims.index("M")]
    return 4 * m < -(-m // bm) * bm


def sm_share(variant: Variant, params: Params, shape: Shape, sms: int) -> float | None:
    """The share of the card's `sms` SMs the launch gives work to, at most 1: its blocks, or a
    persistent grid's tiles, over the SMs (24 tiles on 132 SMs: 0.18). None where the launch is
    unknown."""
    units = work_units(variant, params, shape)
    if units is None:
        return None
    blocks, tiles, _ = units
    return min(1.0, (tiles if blocks < tiles else blocks) / sms)


def quantization(blocks: int, tiles: int, sms: int, split: bool, balanced: bool, at_once: int | None = None) -> float:
    """The busiest SM's share of the work over an even share (>= 1). One block per tile, or a split
    (each block a slice of a tile): the blocks are the units, spread over the SMs that run the
    launch at once (`at_once`, default `sms`: fewer where its blocks come in clusters, sms_at_once),
    ceil(blocks / at_once) on the busiest. More blocks than tiles that do not split (a cluster's
    blocks past M's last row tile): the tiles are the units, one per working block. Fewer blocks
    than tiles: a persistent grid, each block on its own SM looping over ceil(tiles / blocks) tiles,
    or exactly tiles / blocks where it splits them evenly (stream-K)."""
    if blocks >= tiles:
        units = blocks if split or blocks == tiles else tiles
        busiest = cdiv(units, min(units, at_once or sms))
    else:
        units, holders = tiles, min(blocks, sms)
        busiest = units / holders if balanced else cdiv(units, holders)
    return busiest * sms / units
