"""Sum a variant's access model over its whole launch -> predicted counters, exactly.

An access model describes what one kernel asks of memory, instruction by instruction, as data a
person can check against the `.cu` file (and against the SASS: one `Instruction` per SASS memory
instruction, so a loop the compiler vectorized into LDS.128 is declared as LDS.128). It is a
function `access(params, shape) -> KernelAccess`, registered as `Variant.access`:

    def v1_access(params, shape):
        T, M, N, K = params["TILE"], shape["M"], shape["N"], shape["K"]
        nx, ny, nk = cdiv(N, T), cdiv(M, T), cdiv(K, T)
        A = 0                                                   # byte address of A's first element
        load_a = Instruction(
            "ldg A", "global", "load", 4,
            address=lambda i: A + 4 * ((i.by * T + i.ty) * K + i.kt * T + i.tx),
            active=lambda i: (i.by * T + i.ty < M) & (i.kt * T + i.tx < K),
            loops=(Loop("kt", nk, shifted(nk, 4 * T, edge=ragged(nk, T, K))),),
            blocks={"x": same(nx), "y": shifted(ny, 4 * T * K, edge=ragged(ny, T, M))},
        )
        return KernelAccess(grid=(nx, ny, 1), block=(T, T, 1), instructions=(load_a, ...),
                            flops=2 * M * N * K, dram_compulsory_bytes=4 * (M * K + K * N + M * N))

`address(i)` and `active(i)` are vectorized: `i` carries numpy arrays that broadcast against each
other, blocks and loop steps along axis 0, the threads of one block along axis 1: i.bx, i.by, i.bz,
i.tx, i.ty, i.tz, i.tid (linear thread id), i.lane, i.warp, and one attribute per loop, named by
the Loop. Write guards with `&` and `|`, never `and`/`or`. `active` is the guard that lets a thread
reach the instruction (an early `return`, an `if`, a predicated ternary); omit it when every thread
does. A lane with an inactive address is ignored; a warp with no active lane makes no request.

Symmetry, for speed and never at the cost of exactness. Evaluating every block and every loop step
of a 4096^3 SGEMM would be billions of warp instructions, so each axis (block x, y, z and each loop)
is split into classes of indices that give identical counts, `((representative, how_many), ...)`;
the launch is evaluated at the representatives and weighted. Indices are interchangeable when they
move the instruction's addresses by a multiple of 128 bytes (which changes no sector, no line and
no bank) and no guard treats them differently. The helpers say that in one line:
  same(n)                         the address does not depend on this index, nor does any guard;
  shifted(n, stride_bytes, edge)  the address moves by stride_bytes per index; indices are grouped
                                  by the address modulo 128, each index in `edge` is its own class;
  periodic(n, period, edge)       as shifted, for an address that repeats every `period` indices;
  ragged(n, tile, extent)         the tiles that stick out past `extent` (the ones a guard cuts);
  every(n)                        each index its own class: the default, always exact.
A wrong class declaration is caught by `predict(..., exhaustive=True)`, which ignores the classes
and enumerates everything: the tests compare the two at small ragged shapes for every model.

cp.async (SASS LDGSTS) is the third kind of global instruction: `Instruction(name, "global",
"ldgsts", width, address=<global source>, reads=<guard>)`. Its global side is counted like a load
(requests, sectors) over the lanes that read: `reads` says which active lanes read global memory at
all (cp.async with src-size 0 reads nothing and zero-fills its destination); its instructions are
the warps with any active lane. Nsight Compute counts the global side inside the global-load counters
(`..._global_op_ld`: recorded for sgemm v9 at 512^3, 49,152 requests = 64 warps x 64 tiles x 12
LDGSTS and no LDG), and the instructions on their own (`..._op_ldgsts`); the shared side never under
shared loads or stores. `summarize` follows: gmem_load_* include LDGSTS; gmem_ldgsts_requests and
smem_ldgsts_requests (instructions) count it alone.

ldmatrix (SASS LDSM) is a kind of shared load: `Instruction(name, "shared", "ldsm", 16,
address=<the row this lane gives>)`, one lane per 16-byte row of an 8x8 matrix (gpulab.model.warp.
ldsm_counts). Nsight Compute counts it apart from LDS (`..._mem_shared_op_ldsm`: instructions,
wavefronts, bank conflicts, all instrumented), and so does `summarize`: smem_ldsm_*.

The shared side's wavefronts of cp.async are not predicted. On the H200 (2026-11-30) they follow no rule this
model knows: 2 per fully active 4-byte LDGSTS where an STS would take 1 (512^3: 196,608 measured,
98,304 by the store rules, the surplus reported as bank conflicts); 8.5 to 12 per 16-byte LDGSTS
reading rows that are 16 B off a sector boundary (300x388x196); up to 31 where lanes zero-fill. The
shared writes land as the global sectors arrive, so they depend on the global side's alignment.
"""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from gpulab.arith import cdiv
from gpulab.errors import GpulabError
from gpulab.model import warp

Classes = tuple[tuple[int, int], ...]

# Moving every address of an instruction by a multiple of this leaves its sectors (32 B), lines
# (128 B) and shared banks (32 banks x 4 B) unchanged: the unit of translation symmetry.
SYMMETRY_BYTES = 128
# Base alignment of device allocations (cudaMalloc guarantees 256 B): laid-out arrays start there.
ALLOC_ALIGN_BYTES = 256
# Lanes evaluated per numpy batch: bounds memory whatever the model declares.
_BATCH_LANES = 1 << 20
# Past this many lanes an evaluation would take minutes: the model is missing symmetry classes.
MAX_LANES = 1 << 28
# The kind of a cp.async instruction (SASS LDGSTS): a global read and a shared write in one.
LDGSTS = "ldgsts"
# The kind of an ldmatrix instruction (SASS LDSM): a shared load, 16 bytes (one matrix row) a lane.
LDSM = "ldsm"
# The global sectors of a 16-byte LDGSTS are counted per quarter-warp (8 lanes, 128 B) and summed,
# not as the warp's distinct sectors (LDG.128 is): fitted to ncu's op_ld sectors for sgemm v9 at
# 300x388x196 on the H200 (B rows 16 B off a sector boundary: 20 sectors per misaligned row of 32
# float4, not 17; 117,920 counted, 112,040 by distinct sectors). 4-byte LDGSTS: distinct sectors
# (exact there and at 129x67x33). 8-byte: not measured; assumed per half-warp.
LDGSTS_SECTOR_GROUP_LANES = {16: 8, 8: 16}


# -- the model's vocabulary -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Loop:
    """A loop around an instruction: its index name, its trip count and (optionally) classes."""

    name: str
    trips: int
    classes: Classes | None = None


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One memory instruction of the kernel (one SASS LDG/STG/LDS/STS/LDGSTS), executed by every
    warp of every block, once per iteration of its loops."""

    name: str
    space: str  # 'global' or 'shared'
    kind: str  # 'load' or 'store'; or 'ldgsts' (space 'global'): cp.async, global -> shared
    width: int  # bytes per lane: 1, 2, 4, 8 or 16
    address: Callable[[SimpleNamespace], Any]  # for 'ldgsts': the global source
    active: Callable[[SimpleNamespace], Any] | None = None
    loops: tuple[Loop, ...] = ()
    blocks: Mapping[str, Classes] = dataclasses.field(default_factory=dict)  # keys 'x', 'y', 'z'
    reads: Callable[[SimpleNamespace], Any] | None = None  # 'ldgsts' only: active lanes with src-size > 0

    def __post_init__(self) -> None:
        if self.kind == LDGSTS:
            if self.space != "global" or self.width not in (4, 8, 16):
                raise ValueError(f"{self.name}: an ldgsts is space 'global', 4, 8 or 16 bytes")
        elif self.kind == LDSM:
            if self.space != "shared" or self.width != 16:
                raise ValueError(f"{self.name}: an ldsm is space 'shared', 16 bytes (one matrix row) a lane")
        elif self.space not in warp.SPACES or self.kind not in warp.KINDS or self.width not in warp.WIDTHS:
            raise ValueError(f"{self.name}: bad space/kind/width {self.space}/{self.kind}/{self.width}")
        elif self.reads is not None:
            raise ValueError(f"{self.name}: reads belongs to ldgsts (cp.async) only")
        reserved = {"bx", "by", "bz", "tx", "ty", "tz", "tid", "lane", "warp"}
        for loop in self.loops:
            if loop.name in reserved:
                raise ValueError(f"{self.name}: loop name {loop.name!r} shadows a thread/block index")


@dataclasses.dataclass(frozen=True)
class KernelAccess:
    """Everything predict needs about one launch of one variant."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    instructions: tuple[Instruction, ...]
    flops: float = 0.0
    # Each input read once, each output written once: the kernel's DRAM floor. A model may add what
    # its kernel cannot avoid beyond that (gemm_bf16's ks: the passes over Bt its L2 does not keep).
    dram_compulsory_bytes: int = 0
    # Counts the code fixes outside warp memory instructions, by key (BULK_KEYS): a TMA copy is one
    # instruction of one thread moving a whole box, a wgmma one instruction per warp reading its
    # operands from shared memory through descriptors. Computed by the model from the tiles; every
    # key left out is 0 (a kernel with no TMA and no wgmma predicts none, and that is judged too).
    bulk: Mapping[str, int] = dataclasses.field(default_factory=dict)


# The keys of KernelAccess.bulk (gpulab.quantities says which ncu metric measures each):
#   tma_load_requests  TMA tensor loads issued (SASS UTMALDG), one per box
#   tma_load_bytes     bytes the TMA loads read from L2, as Nsight Compute counts them: the 32-byte
#                      sectors every box row touches inside the row's pitch (the part of a box past a
#                      row's end is zero-filled, not read), box rows past the last row included
#   gmma_requests      wgmma instructions executed (SASS HGMMA), counted per warp: 4 per warpgroup
BULK_KEYS = ("tma_load_requests", "tma_load_bytes", "gmma_requests")


# -- symmetry helpers -----------------------------------------------------------------------------


def every(n: int) -> Classes:
    return tuple((i, 1) for i in range(n))


def same(n: int) -> Classes:
    return ((0, n),) if n > 0 else ()


def ragged(n: int, tile: int, extent: int) -> tuple[int, ...]:
    """Indices i < n whose tile [i*tile, (i+1)*tile) reaches past `extent`."""
    first = extent // tile  # the first tile not wholly inside
    return tuple(range(max(first, 0), n))


def shifted(n: int, stride_bytes: int, edge: Iterable[int] = ()) -> Classes:
    """Classes of range(n) for an address moving stride_bytes per index: regular indices group by
    (i * stride_bytes) mod 128; each edge index stands alone."""
    return periodic(n, SYMMETRY_BYTES // math.gcd(stride_bytes % SYMMETRY_BYTES, SYMMETRY_BYTES), edge)


def periodic(n: int, period: int, edge: Iterable[int] = ()) -> Classes:
    """Classes of range(n) by index mod `period`, each edge index alone: for an address that
    repeats, up to a multiple of 128 bytes, every `period` indices (any period, where `shifted`
    derives it from a stride)."""
    period = max(1, int(period))
    special = sorted({i for i in edge if 0 <= i < n})
    special_set = set(special)
    classes = [(i, 1) for i in special]
    for r in range(min(period, n)):
        members = (n - r + period - 1) // period - sum(1 for i in special if i % period == r)
        if members <= 0:
            continue
        rep = r
        while rep in special_set:
            rep += period
        classes.append((rep, members))
    return tuple(classes)


def buffers(**sizes_bytes: int) -> dict[str, int]:
    """Lay arrays out one after another at 256-byte aligned bases, as separate cudaMallocs would
    land: {name: base byte address}. Only the alignment matters to the counts."""
    bases, at = {}, 0
    for name, size in sizes_bytes.items():
        bases[name] = at
        at += cdiv(max(size, 1), ALLOC_ALIGN_BYTES) * ALLOC_ALIGN_BYTES
    return bases


# -- evaluation -----------------------------------------------------------------------------------


def instruction_counts(model: KernelAccess, instr: Instruction, exhaustive: bool = False) -> dict:
    """The counts of one instruction summed over the launch (python ints)."""
    axes = _axes(model, instr, exhaustive)
    bdx, bdy, bdz = model.block
    n_threads = bdx * bdy * bdz
    padded = cdiv(n_threads, warp.WARP_LANES) * warp.WARP_LANES
    combos = math.prod(len(c) for _, c in axes)
    if combos * padded > MAX_LANES:
        raise ValueError(
            f"{instr.name}: evaluating {combos:,} block/step combinations x {padded} threads is too "
            "slow; declare symmetry classes (same/shifted/ragged) for its block axes and loops"
        )
    reps = np.meshgrid(*[np.array([r for r, _ in c], dtype=np.int64) for _, c in axes], indexing="ij")
    mults = np.meshgrid(*[np.array([m for _, m in c], dtype=np.int64) for _, c in axes], indexing="ij")
    reps = [r.ravel() for r in reps]
    weight = np.prod(np.stack([m.ravel() for m in mults]), axis=0)

    tid = np.arange(padded, dtype=np.int64)
    exists = tid < n_threads  # the lanes of a partial last warp that have no thread
    thread = dict(tx=tid % bdx, ty=(tid // bdx) % bdy, tz=tid // (bdx * bdy), tid=tid,
                  lane=tid % warp.WARP_LANES, warp=tid // warp.WARP_LANES)

    # instructions: warp instructions with an active lane (an ldgsts whose lanes all have
    # src-size 0 is one, though it makes no global request)
    fields = ("requests", "sectors", "lines", "wavefronts", "ideal_wavefronts", "bytes_requested", "instructions")
    totals = dict.fromkeys(fields, 0)
    batch = max(1, _BATCH_LANES // padded)
    for start in range(0, weight.size, batch):
        sl = slice(start, start + batch)
        c = weight[sl].size
        index = SimpleNamespace(
            **{name: r[sl, None] for (name, _), r in zip(axes, reps)},
            **{k: v[None, :] for k, v in thread.items()},
        )
        addr = np.broadcast_to(np.asarray(instr.address(index), dtype=np.int64), (c, padded))
        act = np.broadcast_to(exists, (c, padded))
        if instr.active is not None:
            act = act & np.broadcast_to(np.asarray(instr.active(index), dtype=bool), (c, padded))
        if instr.kind == LDGSTS:  # the global side as a load of the lanes that read
            reads = act
            if instr.reads is not None:
                reads = act & np.broadcast_to(np.asarray(instr.reads(index), dtype=bool), (c, padded))
            glob = warp.count(addr.reshape(-1, warp.WARP_LANES), instr.width, "global", "load",
                              reads.reshape(-1, warp.WARP_LANES))
            # Sectors per 128-byte lane group (8 lanes of 16 B), summed: a sector two groups share
            # counts twice (fitted to the H200, see LDGSTS_SECTOR_GROUP_LANES)
            group = LDGSTS_SECTOR_GROUP_LANES.get(instr.width, warp.WARP_LANES)
            parts = warp.count(addr.reshape(-1, group), instr.width, "global", "load", reads.reshape(-1, group))
            sectors = parts.sectors.reshape(-1, warp.WARP_LANES // group).sum(axis=1)
            # Instructions: warps with an active lane, whether or not any lane reads. The shared
            # side's wavefronts are not modelled (see the module docstring).
            per_warp = {"requests": glob.requests, "sectors": sectors, "lines": glob.lines,
                        "bytes_requested": glob.bytes_requested,
                        "instructions": act.reshape(-1, warp.WARP_LANES).any(axis=1).astype(np.int64)}
        else:
            lanes = (addr.reshape(-1, warp.WARP_LANES), act.reshape(-1, warp.WARP_LANES))
            counts = (warp.ldsm_counts(*lanes) if instr.kind == LDSM
                      else warp.count(lanes[0], instr.width, instr.space, instr.kind, lanes[1]))
            per_warp = {f: getattr(counts, f) for f in fields if hasattr(counts, f)}
            per_warp["instructions"] = counts.requests
        w = weight[sl]
        for f, values in per_warp.items():
            totals[f] += int(np.dot(values.reshape(c, -1).sum(axis=1), w))
    return {"name": instr.name, "space": instr.space, "kind": instr.kind, "width": instr.width,
            **totals, "bank_conflicts": totals["wavefronts"] - totals["ideal_wavefronts"]}


def active_blocks(model: KernelAccess, instr: Instruction) -> int:
    """How many of the launch's blocks run `instr` with any lane active on any trip of its loops:
    the blocks that take part in it (a cluster's block past the matrix's last row stores nothing;
    a block of a split over K stores its share). Summed over the symmetry classes like the counts."""
    axes = _axes(model, instr, exhaustive=False)
    bdx, bdy, bdz = model.block
    n_threads = bdx * bdy * bdz
    padded = cdiv(n_threads, warp.WARP_LANES) * warp.WARP_LANES
    block_axes, loop_axes = axes[:3], axes[3:]
    per_block = math.prod(len(c) for _, c in loop_axes)
    if math.prod(len(c) for _, c in axes) * padded > MAX_LANES:
        raise ValueError(f"{instr.name}: too many block/step combinations to say which blocks run it")
    reps = [r.ravel() for r in np.meshgrid(*[np.array([r for r, _ in c], dtype=np.int64) for _, c in axes],
                                            indexing="ij")]
    weight = np.prod(np.stack([m.ravel() for m in np.meshgrid(
        *[np.array([m for _, m in c], dtype=np.int64) for _, c in block_axes], indexing="ij")]), axis=0)
    tid = np.arange(padded, dtype=np.int64)
    index = SimpleNamespace(**{name: r[:, None] for (name, _), r in zip(axes, reps)},
                            tid=tid[None, :], tx=(tid % bdx)[None, :], ty=((tid // bdx) % bdy)[None, :],
                            tz=(tid // (bdx * bdy))[None, :], lane=(tid % warp.WARP_LANES)[None, :],
                            warp=(tid // warp.WARP_LANES)[None, :])
    act = np.broadcast_to(tid < n_threads, (reps[0].size, padded))
    if instr.active is not None:
        act = act & np.broadcast_to(np.asarray(instr.active(index), dtype=bool), act.shape)
    # meshgrid's 'ij' order puts the block axes first: each block class owns `per_block` rows
    runs = act.reshape(weight.size, per_block * padded).any(axis=1)
    return int(np.dot(runs.astype(np.int64), weight))


def instruction_table(model: KernelAccess, exhaustive: bool = False) -> list[dict]:
    """One row per instruction: what it costs over the whole launch."""
    return [instruction_counts(model, instr, exhaustive) for instr in model.instructions]


def predict(
    model: KernelAccess,
    *,
    fma_gflops: float | None = None,
    copy_gb_per_s: float | None = None,
    launch: Any = None,
    exhaustive: bool = False,
) -> dict[str, float | int | str]:
    """The predicted counters of one launch, as a flat dict (names in the project's vocabulary;
    gpulab.quantities says which ncu metric measures each).

    fma_gflops and copy_gb_per_s are the card's measured ceilings; with them the roofline floor is
    added: the larger of flops / FMA rate and compulsory bytes / copy rate. `launch` (a Launch from
    the registry), when given, must agree with the model's grid and block.
    """
    if launch is not None:
        check_launch(model, launch)
    return summarize(instruction_table(model, exhaustive), model, fma_gflops, copy_gb_per_s)


def summarize(rows: Sequence[dict], model: KernelAccess, fma_gflops=None, copy_gb_per_s=None) -> dict:
    out: dict[str, float | int | str] = {}

    def total(space, kind, field):
        return sum(r[field] for r in rows if r["space"] == space and r["kind"] == kind)

    # ncu's global-load counters include the global side of LDGSTS (see the module docstring)
    for kinds, op in ((("load", LDGSTS), "load"), (("store",), "store")):
        requests = sum(total("global", k, "requests") for k in kinds)
        sectors = sum(total("global", k, "sectors") for k in kinds)
        out[f"gmem_{op}_requests"] = requests
        out[f"gmem_{op}_sectors"] = sectors
        out[f"gmem_{op}_sectors_per_request"] = sectors / requests if requests else 0.0
        out[f"gmem_{op}_requested_bytes"] = sum(total("global", k, "bytes_requested") for k in kinds)
    out["l1tex_global_load_bytes"] = out["gmem_load_sectors"] * warp.SECTOR_BYTES
    out["l1tex_global_store_bytes"] = out["gmem_store_sectors"] * warp.SECTOR_BYTES
    for kind, op in (("load", "load"), ("store", "store")):
        out[f"smem_{op}_requests"] = total("shared", kind, "requests")
        out[f"smem_{op}_wavefronts"] = total("shared", kind, "wavefronts")
        out[f"smem_{op}_bank_conflicts"] = total("shared", kind, "bank_conflicts")
        out[f"smem_{op}_ideal_wavefronts"] = total("shared", kind, "ideal_wavefronts")
        out[f"smem_{op}_requested_bytes"] = total("shared", kind, "bytes_requested")
    # ldmatrix, apart from LDS as ncu counts it
    out["smem_ldsm_requests"] = total("shared", LDSM, "requests")
    out["smem_ldsm_wavefronts"] = total("shared", LDSM, "wavefronts")
    out["smem_ldsm_bank_conflicts"] = total("shared", LDSM, "bank_conflicts")
    # cp.async alone: its global requests (lanes that read) and its instructions
    out["gmem_ldgsts_requests"] = total("global", LDGSTS, "requests")
    out["smem_ldgsts_requests"] = total("global", LDGSTS, "instructions")
    unknown = set(model.bulk) - set(BULK_KEYS)
    if unknown:
        raise GpulabError(f"unknown bulk counts {sorted(unknown)} in an access model; known: {', '.join(BULK_KEYS)}")
    out |= {key: int(model.bulk.get(key, 0)) for key in BULK_KEYS}
    out["dram_compulsory_bytes"] = int(model.dram_compulsory_bytes)
    out["flops"] = float(model.flops)
    out["arithmetic_intensity_flop_per_byte"] = (
        model.flops / model.dram_compulsory_bytes if model.dram_compulsory_bytes else 0.0
    )
    if fma_gflops and copy_gb_per_s:
        compute_ms = model.flops / (fma_gflops * 1e9) * 1e3
        memory_ms = model.dram_compulsory_bytes / (copy_gb_per_s * 1e9) * 1e3
        out["roofline_compute_ms"] = compute_ms
        out["roofline_memory_ms"] = memory_ms
        out["roofline_floor_ms"] = max(compute_ms, memory_ms)
        out["roofline_bound"] = "compute" if compute_ms >= memory_ms else "memory"
    return out


def check_launch(model: KernelAccess, launch: Any) -> None:
    """The access model and the registry's launch must describe the same grid and block."""
    if tuple(model.grid) != tuple(launch.grid) or tuple(model.block) != tuple(launch.block):
        raise GpulabError(
            f"access model launches grid {model.grid} x block {model.block}, the variant launches "
            f"grid {tuple(launch.grid)} x block {tuple(launch.block)}: fix the access model"
        )


def _axes(model: KernelAccess, instr: Instruction, exhaustive: bool) -> list[tuple[str, Classes]]:
    """(index name, classes) for block x, y, z and each loop, validated: the multiplicities of
    an axis must add up to its length, so a class list cannot silently drop or double indices."""
    axes = []
    for name, n in zip(("x", "y", "z"), model.grid):
        axes.append((f"b{name}", n, instr.blocks.get(name)))
    for loop in instr.loops:
        axes.append((loop.name, loop.trips, loop.classes))
    unknown = set(instr.blocks) - {"x", "y", "z"}
    if unknown:
        raise ValueError(f"{instr.name}: block classes for unknown axes {sorted(unknown)}")
    out = []
    for name, n, classes in axes:
        if classes is None or exhaustive:
            classes = every(n)
        if sum(m for _, m in classes) != n or any(not 0 <= r < n for r, _ in classes):
            raise ValueError(f"{instr.name}: the classes of axis {name} do not cover range({n}) once")
        out.append((name, classes))
    return out
