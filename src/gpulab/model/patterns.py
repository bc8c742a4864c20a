"""The pattern catalogue: one warp instruction per rule of the warp model, as data.

Each pattern is one warp-wide access: the byte offset each lane touches (None: the lane is
predicated off), the width, the space and the kind. The same table drives both sides:
`scripts/pattern_fixtures.py` loads the offsets into the probe kernels of `patterns.cu` and
measures each pattern under ncu on a GPU; `tests/test_warp_fixtures.py` feeds the offsets to `warp.py` and holds
its counts to those measurements. A pattern is therefore written once and cannot drift between
the kernel and the model.

Shared offsets are from the start of the shared window (bank = offset / 4 mod 32); global offsets
are from a buffer aligned to 512 bytes, so sector and line boundaries fall where the offsets say.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

LANES = 32
# Bytes the probe kernels reserve: every offset below must leave room for its access.
SHARED_BYTES = 8192
GLOBAL_BYTES = 8192


@dataclasses.dataclass(frozen=True)
class Pattern:
    name: str
    space: str  # 'global' or 'shared'
    kind: str  # 'load' or 'store'
    width: int  # bytes per lane
    offsets: tuple[int | None, ...]  # per lane; None = predicated off
    rule: str  # what the pattern settles, in a line

    @property
    def probe(self) -> str:
        """The kernel of patterns.cu that performs this access."""
        op = {("shared", "load"): "lds", ("shared", "store"): "sts",
              ("global", "load"): "ldg", ("global", "store"): "stg"}[(self.space, self.kind)]
        return f"probe_{op}{self.width * 8}"

    @property
    def repeat(self) -> int:
        """How many times the probe issues the access (see LDG_PROBE in patterns.cu)."""
        return 2 if (self.space, self.kind) == ("global", "load") else 1

    @property
    def active(self) -> list[bool]:
        return [o is not None for o in self.offsets]

    @property
    def addresses(self) -> list[int]:
        """Offsets with inactive lanes at 0 (their value is ignored by the model)."""
        return [0 if o is None else o for o in self.offsets]


def lanes(offset: Callable[[int], int], active: Callable[[int], bool] = lambda i: True) -> tuple:
    return tuple(offset(i) if active(i) else None for i in range(LANES))


def _p(name, space, kind, width, offsets, rule) -> Pattern:
    return Pattern(name, space, kind, width, offsets, rule)


def _ex2_full(i: int) -> int:
    """Lanes 8-23 on distinct banks per quarter, except that T16 reads T15's uint4; T23 takes the
    free slot at 128 B so that quarter 2 stays conflict-free."""
    if i == 16:
        return 16 * 7
    if i == 23:
        return 16 * 8
    return 16 * (i - 8)


def _shared_loads() -> list[Pattern]:
    s = "shared"
    return [
        # LDS.32: banks, broadcast, conflicts.
        _p("lds32_consecutive", s, "load", 4, lanes(lambda i: 4 * i), "32 words in 32 banks: one wavefront"),
        _p("lds32_broadcast", s, "load", 4, lanes(lambda i: 0), "one word to every lane: one wavefront"),
        _p("lds32_multicast_pairs", s, "load", 4, lanes(lambda i: 4 * (i // 2)), "16 words, two lanes each: one wavefront"),
        _p("lds32_stride2", s, "load", 4, lanes(lambda i: 8 * i), "two words per bank: 2-way conflict"),
        _p("lds32_stride3", s, "load", 4, lanes(lambda i: 12 * i), "odd stride walks all banks: no conflict"),
        _p("lds32_stride32", s, "load", 4, lanes(lambda i: 128 * i), "32 words in one bank: 32-way conflict"),
        _p("lds32_one_bank_two_words", s, "load", 4, lanes(lambda i: 128 * (i % 2)), "two words of bank 0, 16 lanes each: 2 wavefronts"),
        _p("lds32_half_active", s, "load", 4, lanes(lambda i: 4 * i, lambda i: i < 16), "inactive lanes cost nothing"),
        _p("lds32_none_active", s, "load", 4, lanes(lambda i: 0, lambda i: False), "a fully predicated-off LDS: does it count?"),
        _p("lds8_consecutive", s, "load", 1, lanes(lambda i: i), "bytes of 8 words: one wavefront"),
        _p("lds16_consecutive", s, "load", 2, lanes(lambda i: 2 * i), "halves of 16 words: one wavefront"),
        _p("lds8_stride128", s, "load", 1, lanes(lambda i: 128 * i), "bytes in 32 words of one bank: 32-way"),
        # LDS.64: half-warp phases and their merge (Tang's blog post, docs/SOURCES.md).
        _p("lds64_ex1_consecutive", s, "load", 8, lanes(lambda i: 8 * i), "Tang's LDS.64 example 1: two half-warp wavefronts"),
        _p("lds64_ex2_xor1_pairs", s, "load", 8, lanes(lambda i: 8 * (i // 2)), "Tang's LDS.64 example 2: T0==T1, ...: merged, one wavefront"),
        _p("lds64_xor2_pairs", s, "load", 8, lanes(lambda i: 8 * ((i // 4) * 2 + i % 2)), "T0==T2, T1==T3, ...: merged, one wavefront"),
        _p("lds64_broadcast", s, "load", 8, lanes(lambda i: 0), "one address for all: merged, one wavefront"),
        _p("lds64_halves_equal", s, "load", 8, lanes(lambda i: 8 * (i % 16)), "halves read the same 128 B but the pair rule fails: 2"),
        _p("lds64_stride16", s, "load", 8, lanes(lambda i: 16 * i), "2-way conflict inside each half-warp: 4 wavefronts"),
        _p("lds64_pairs_conflict", s, "load", 8, lanes(lambda i: 16 * (i // 2)), "merged, but 16 addresses 16 B apart: 2-way, 2 wavefronts"),
        _p("lds64_first_half_only", s, "load", 8, lanes(lambda i: 8 * i, lambda i: i < 16), "one active half-warp: one wavefront"),
        # LDS.128: quarter-warp phases, merged pairwise into half-warps at best (Tang's blog post).
        _p("lds128_ex1_consecutive", s, "load", 16, lanes(lambda i: 16 * i), "Tang's LDS.128 example 1: four quarter-warp wavefronts"),
        _p("lds128_ex2_t15_t16", s, "load", 16, lanes(lambda i: 0, lambda i: i in (15, 16)), "Tang's LDS.128 example 2: T15 and T16 share, halves never merge: 2"),
        _p("lds128_ex2_t15_t16_full", s, "load", 16, lanes(_ex2_full, lambda i: 8 <= i < 24), "example 2 with quarters 1-2 active, T16 = T15: 2"),
        _p("lds128_ex3_t0_t15", s, "load", 16, lanes(lambda i: 0, lambda i: i in (0, 15)), "Tang's LDS.128 example 3: T0 and T15 share: one merged wavefront"),
        _p("lds128_ex4_irregular", s, "load", 16, lanes(lambda i: 16 * (i // 2) if i < 16 else 16 * (8 + ((i - 16) // 4) * 2 + i % 2)), "Tang's LDS.128 example 4: halves pair differently, no merge: 4"),
        _p("lds128_xor1_pairs", s, "load", 16, lanes(lambda i: 16 * (i // 2)), "T0==T1, ...: merged into 2 half-warp wavefronts"),
        _p("lds128_xor2_pairs", s, "load", 16, lanes(lambda i: 16 * ((i // 4) * 2 + i % 2)), "T0==T2, ...: merged into 2 half-warp wavefronts"),
        _p("lds128_broadcast", s, "load", 16, lanes(lambda i: 0), "one address for all: 2 wavefronts, halves never merge"),
        _p("lds128_two_rows", s, "load", 16, lanes(lambda i: 64 * (i // 16)), "SGEMM v1 As[ty][4q]: each half one address: 2"),
        _p("lds128_stride32", s, "load", 16, lanes(lambda i: 32 * i), "2-way conflict inside each quarter-warp: 8 wavefronts"),
        _p("lds128_first_quarter_only", s, "load", 16, lanes(lambda i: 16 * i, lambda i: i < 8), "one active quarter-warp: one wavefront"),
    ]


def _shared_stores() -> list[Pattern]:
    s = "shared"
    return [
        _p("sts32_consecutive", s, "store", 4, lanes(lambda i: 4 * i), "32 words in 32 banks: one wavefront"),
        _p("sts32_same_word", s, "store", 4, lanes(lambda i: 0), "all lanes write one word: one wavefront?"),
        _p("sts32_stride2", s, "store", 4, lanes(lambda i: 8 * i), "2-way conflict on a store"),
        _p("sts32_stride32", s, "store", 4, lanes(lambda i: 128 * i), "32-way conflict on a store"),
        _p("sts32_none_active", s, "store", 4, lanes(lambda i: 0, lambda i: False), "a fully predicated-off STS: does it count?"),
        _p("sts8_consecutive", s, "store", 1, lanes(lambda i: i), "bytes of 8 words: one wavefront?"),
        _p("sts64_consecutive", s, "store", 8, lanes(lambda i: 8 * i), "two half-warp wavefronts"),
        _p("sts64_xor1_pairs", s, "store", 8, lanes(lambda i: 8 * (i // 2)), "does the pair merge apply to stores?"),
        _p("sts128_consecutive", s, "store", 16, lanes(lambda i: 16 * i), "four quarter-warp wavefronts"),
        _p("sts128_xor1_pairs", s, "store", 16, lanes(lambda i: 16 * (i // 2)), "does the pair merge apply to 128-bit stores?"),
        _p("sts128_stride32", s, "store", 16, lanes(lambda i: 32 * i), "2-way conflict inside each quarter-warp"),
    ]


def _global(kind: str) -> list[Pattern]:
    g = "global"
    op = "ldg" if kind == "load" else "stg"
    out = [
        _p(f"{op}32_coalesced", g, kind, 4, lanes(lambda i: 4 * i), "128 contiguous bytes: 4 sectors, 1 line"),
        _p(f"{op}32_broadcast", g, kind, 4, lanes(lambda i: 0), "one address: 1 sector"),
        _p(f"{op}32_stride2", g, kind, 4, lanes(lambda i: 8 * i), "every other float: 8 sectors, half of each wasted"),
        _p(f"{op}32_stride128", g, kind, 4, lanes(lambda i: 128 * i), "one float per line: 32 sectors, 32 lines"),
        _p(f"{op}32_misaligned", g, kind, 4, lanes(lambda i: 4 * i + 4), "128 bytes shifted by 4: 5 sectors, 2 lines"),
        _p(f"{op}32_reversed", g, kind, 4, lanes(lambda i: 4 * (31 - i)), "lane order does not matter: 4 sectors"),
        _p(f"{op}32_two_rows", g, kind, 4, lanes(lambda i: 2048 * (i // 16)), "SGEMM v0 A[row*K+p]: two addresses, 2 sectors"),
        _p(f"{op}32_half_active", g, kind, 4, lanes(lambda i: 4 * i, lambda i: i < 16), "16 active lanes: 2 sectors"),
        _p(f"{op}32_none_active", g, kind, 4, lanes(lambda i: 0, lambda i: False), "executed but fully predicated off: a request or not?"),
        _p(f"{op}8_coalesced", g, kind, 1, lanes(lambda i: i), "32 bytes: 1 sector"),
        _p(f"{op}16_coalesced", g, kind, 2, lanes(lambda i: 2 * i), "64 bytes: 2 sectors"),
        _p(f"{op}64_coalesced", g, kind, 8, lanes(lambda i: 8 * i), "256 bytes: 8 sectors, one request"),
        _p(f"{op}128_coalesced", g, kind, 16, lanes(lambda i: 16 * i), "512 bytes: 16 sectors, one request"),
        _p(f"{op}128_stride32", g, kind, 16, lanes(lambda i: 32 * i), "float4 every 32 B: 32 sectors, half of each wasted"),
    ]
    return out


PATTERNS: tuple[Pattern, ...] = tuple(_shared_loads() + _shared_stores() + _global("load") + _global("store"))


def pattern(name: str) -> Pattern:
    for p in PATTERNS:
        if p.name == name:
            return p
    raise KeyError(f"no pattern named {name!r}")


def _check_catalogue() -> None:
    """Offsets must fit the probe buffers, be aligned, and names unique: a bad entry fails import."""
    names = [p.name for p in PATTERNS]
    assert len(set(names)) == len(names), "pattern names must be unique"
    for p in PATTERNS:
        limit = SHARED_BYTES if p.space == "shared" else GLOBAL_BYTES
        assert len(p.offsets) == LANES, p.name
        for o in p.offsets:
            assert o is None or (0 <= o and o + p.width <= limit and o % p.width == 0), p.name


_check_catalogue()
