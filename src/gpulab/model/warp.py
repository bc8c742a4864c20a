"""One warp-wide memory instruction -> what the memory system counts for it.

Input: the byte addresses of the 32 lanes of one warp instruction (or of many instructions at once,
a 2-D array `instructions x lanes`), which lanes are active, the access width per lane (1, 2, 4, 8
or 16 bytes), global or shared, load or store. Output: the numbers Nsight Compute counts, per
instruction, as numpy arrays.

Global memory (the L1TEX t-stage, `l1tex__t_{requests,sectors}_pipe_lsu_mem_global_op_{ld,st}`):
- one request per warp instruction that has at least one active lane, whatever the width;
- sectors: the distinct 32-byte sectors the active lanes touch; lines: the distinct 128-byte lines;
- bytes requested (active lanes x width) against bytes moved (sectors x 32).

Shared memory (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}`): 32 banks of 4 bytes; the
data stage moves at most one 4-byte word per bank per wavefront (128 bytes). A warp instruction is
split into phases, lane groups that are served one after the other:
- 1, 2 and 4-byte accesses: one phase of 32 lanes;
- 8-byte accesses (LDS.64): two half-warp phases (lanes 0-15, 16-31), 16 x 8 B = 128 B each;
- 16-byte accesses (LDS.128): four quarter-warp phases of 8 lanes, 8 x 16 B = 128 B each.
For loads, half-warp phases merge into one and quarter-warp phases pairwise into half-warps when,
over the whole warp, every active lane i has lane i^1 inactive or at the same address, or every
active lane i has lane i^2 inactive or at the same address (Yuchen Tang's SGEMM blog post, docs/SOURCES.md, after NVIDIA's own forum
note: the return path carries 128 bytes per cycle, so lanes that share data halve it). Half-warps
of an LDS.128 never merge further, so a merged LDS.128 still takes two wavefronts.
Within a phase, a bank serves each distinct word once: lanes reading the same word get it by
broadcast for free, lanes reading different words of one bank serialize. The phase takes
max over banks (distinct words in that bank) wavefronts.

Bank conflicts, as Nsight Compute's `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}`:
the wavefronts beyond the ideal minimum, where the ideal is one wavefront per phase that has an
active lane (after merging). So 32 consecutive floats: 1 wavefront, 0 conflicts; 32 consecutive
float4: 4 wavefronts (4 phases), 0 conflicts; 32 lanes on different words of one bank: 32
wavefronts, 31 conflicts.

Whether the merge applies to stores is settled by the pattern fixtures (model/patterns.py): the
model assumes it does not (`MERGE_STORES`), as the forum note speaks of loads only.

Every function is vectorized over instructions: pass an (n, 32) array to count n instructions in
one call. Addresses must be naturally aligned (CUDA faults on a misaligned access), so one lane
never straddles a sector or a bank word boundary it should not.
"""

from __future__ import annotations

import dataclasses

import numpy as np

WARP_LANES = 32
SECTOR_BYTES = 32
LINE_BYTES = 128
BANKS = 32
BANK_BYTES = 4
WIDTHS = (1, 2, 4, 8, 16)
SPACES = ("global", "shared")
KINDS = ("load", "store")

# Settled by the fixtures: do 64/128-bit shared stores merge phases the way loads do?
MERGE_STORES = False

# Phase size in lanes, before any merge, per access width in bytes.
_PHASE_LANES = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}
# Shared addresses are packed with the bank index into one int64 key (see _shared_counts).
_WORD_BITS = 40


@dataclasses.dataclass(frozen=True)
class GlobalCounts:
    """Per-instruction counts for global memory (arrays of shape (n,), or ints for one warp)."""

    requests: np.ndarray
    sectors: np.ndarray
    lines: np.ndarray
    bytes_requested: np.ndarray

    @property
    def bytes_moved(self):
        return self.sectors * SECTOR_BYTES


@dataclasses.dataclass(frozen=True)
class SharedCounts:
    """Per-instruction counts for shared memory (arrays of shape (n,), or ints for one warp)."""

    requests: np.ndarray
    wavefronts: np.ndarray
    ideal_wavefronts: np.ndarray
    bytes_requested: np.ndarray

    @property
    def bank_conflicts(self):
        return self.wavefronts - self.ideal_wavefronts


def count(addresses, width: int, space: str, kind: str = "load", active=None):
    """Count one or many warp instructions; dispatches on `space` ('global' or 'shared')."""
    if space == "global":
        return global_counts(addresses, width, active)
    if space == "shared":
        return shared_counts(addresses, width, kind, active)
    raise ValueError(f"space must be one of {SPACES}, not {space!r}")


def global_counts(addresses, width: int, active=None) -> GlobalCounts:
    """Requests, sectors, lines and bytes for global-memory warp instructions."""
    addr, act, single = _normalize(addresses, width, active)
    lanes = act.sum(axis=1)
    counts = GlobalCounts(
        requests=(lanes > 0).astype(np.int64),
        sectors=_distinct_per_row(addr // SECTOR_BYTES, act),
        lines=_distinct_per_row(addr // LINE_BYTES, act),
        bytes_requested=lanes * width,
    )
    return _squeeze(counts) if single else counts


def shared_counts(addresses, width: int, kind: str = "load", active=None) -> SharedCounts:
    """Requests, wavefronts, ideal wavefronts (and so bank conflicts) for shared-memory warp
    instructions; see the module docstring for the phase and merge rules."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    addr, act, single = _normalize(addresses, width, active)
    if act.any() and addr[act].max() >= (1 << (_WORD_BITS + 2)):
        raise ValueError("shared-memory addresses must be offsets into the shared window (< 1 TiB)")
    lanes = act.sum(axis=1)
    merge = kind == "load" or MERGE_STORES
    wavefronts, ideal = _shared_wavefronts(addr, act, width, merge)
    counts = SharedCounts(
        requests=(lanes > 0).astype(np.int64),
        wavefronts=wavefronts,
        ideal_wavefronts=ideal,
        bytes_requested=lanes * width,
    )
    return _squeeze(counts) if single else counts


def ldsm_counts(addresses, active=None) -> SharedCounts:
    """Requests, wavefronts and ideal wavefronts of ldmatrix warp instructions (SASS LDSM).

    Each lane gives the address of one 16-byte row of an 8x8 matrix of 16-bit values: lanes
    8i..8i+7 the rows of matrix i (.x4 reads 4 matrices, .x2 lanes 0-15, .x1 lanes 0-7; the lanes
    that give no address are inactive here). A matrix is one phase, as a quarter-warp of an LDS.128
    that never merges (no two lanes share a row): one wavefront when its 8 rows fall in 8 different
    groups of 4 banks, more where rows share banks. So a conflict-free .x4 takes 4 wavefronts."""
    addr, act, single = _normalize(addresses, 16, active)
    if act.any() and addr[act].max() >= (1 << (_WORD_BITS + 2)):
        raise ValueError("shared-memory addresses must be offsets into the shared window (< 1 TiB)")
    lanes = act.sum(axis=1)
    wavefronts, ideal = _shared_wavefronts(addr, act, 16, merge=False)
    counts = SharedCounts(requests=(lanes > 0).astype(np.int64), wavefronts=wavefronts, ideal_wavefronts=ideal,
                          bytes_requested=lanes * 16)
    return _squeeze(counts) if single else counts


def phases_merge(addresses, active=None) -> np.ndarray:
    """The merge test of Tang's SGEMM blog post, per instruction: over the whole warp, every active lane i has lane
    i^1 inactive or on the same address, or every active lane has lane i^2 so."""
    addr, act, _ = _normalize(addresses, 1, active)
    return _merge_mask(addr, act)


# -- internals ------------------------------------------------------------------------------------


def _normalize(addresses, width: int, active):
    """-> (addresses int64 (n, 32), active bool (n, 32), was_one_warp). Pads short rows with
    inactive lanes and checks width and natural alignment."""
    if width not in WIDTHS:
        raise ValueError(f"access width must be one of {WIDTHS} bytes, not {width}")
    addr = np.asarray(addresses, dtype=np.int64)
    single = addr.ndim == 1
    addr = np.atleast_2d(addr)
    if addr.ndim != 2 or addr.shape[1] > WARP_LANES:
        raise ValueError(f"addresses must be (lanes,) or (instructions, lanes) with lanes <= 32, got {addr.shape}")
    if active is None:
        act = np.ones(addr.shape, dtype=bool)
    else:
        act = np.atleast_2d(np.asarray(active, dtype=bool))
        act = np.broadcast_to(act, addr.shape)
    pad = WARP_LANES - addr.shape[1]
    if pad:
        addr = np.pad(addr, ((0, 0), (0, pad)))
        act = np.pad(act, ((0, 0), (0, pad)))
    if ((addr % width != 0) & act).any():
        raise ValueError(f"a lane's address is not aligned to its {width}-byte access")
    if ((addr < 0) & act).any():
        raise ValueError("addresses must be non-negative byte offsets")
    return addr, act, single


def _distinct_per_row(values: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Number of distinct values among the active entries of each row."""
    keyed = np.where(active, values, -1)  # inactive lanes sort first and are not counted
    keyed.sort(axis=1)
    fresh = np.empty(keyed.shape, dtype=bool)
    fresh[:, 0] = True
    np.not_equal(keyed[:, 1:], keyed[:, :-1], out=fresh[:, 1:])
    return (fresh & (keyed >= 0)).sum(axis=1).astype(np.int64)


def _merge_mask(addr: np.ndarray, act: np.ndarray) -> np.ndarray:
    lane = np.arange(WARP_LANES)
    ok = []
    for partner_bit in (1, 2):
        partner = lane ^ partner_bit
        lane_ok = ~act | ~act[:, partner] | (addr == addr[:, partner])
        ok.append(lane_ok.all(axis=1))
    return ok[0] | ok[1]


def _shared_wavefronts(addr, act, width: int, merge: bool):
    """Wavefronts and ideal wavefronts per instruction.

    Each lane touches width/4 consecutive words (one word for 1-, 2- and 4-byte accesses). A key
    (phase, bank, word) is built per touched word; sorting the keys of one instruction puts each
    distinct word once per phase and bank, and a bincount over (instruction, phase, bank) then gives
    the distinct words each bank must serve in each phase. The phase takes as many wavefronts as
    its busiest bank.
    """
    n = addr.shape[0]
    lane = np.arange(WARP_LANES)
    phase_lanes = _PHASE_LANES[width]
    n_phases = WARP_LANES // phase_lanes
    phase = np.broadcast_to(lane // phase_lanes, addr.shape)
    if merge and width in (8, 16):
        merged = _merge_mask(addr, act)
        phase = np.where(merged[:, None], lane // (2 * phase_lanes), phase)

    words_per_lane = max(1, width // BANK_BYTES)
    word = (addr // BANK_BYTES)[:, :, None] + np.arange(words_per_lane)  # (n, 32, w)
    bank = word % BANKS
    slot = phase[:, :, None] * BANKS + bank  # (phase, bank) as one number < n_phases * 32
    key = (slot << _WORD_BITS) | word
    key = np.where(act[:, :, None], key, -1).reshape(n, -1)
    key.sort(axis=1)
    fresh = np.empty(key.shape, dtype=bool)
    fresh[:, 0] = True
    np.not_equal(key[:, 1:], key[:, :-1], out=fresh[:, 1:])
    fresh &= key >= 0

    rows = np.broadcast_to(np.arange(n)[:, None], key.shape)
    flat = rows[fresh] * (n_phases * BANKS) + (key[fresh] >> _WORD_BITS)
    per_bank = np.bincount(flat, minlength=n * n_phases * BANKS).reshape(n, n_phases, BANKS)
    per_phase = per_bank.max(axis=2)
    return per_phase.sum(axis=1).astype(np.int64), (per_phase > 0).sum(axis=1).astype(np.int64)


def _squeeze(counts):
    """One warp in, plain ints out: easier to read in tests and at a prompt."""
    return type(counts)(**{f.name: int(getattr(counts, f.name)[0]) for f in dataclasses.fields(counts)})
