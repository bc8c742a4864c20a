"""The warp model (gpulab.model.warp): one warp instruction -> requests, sectors, wavefronts.

The rules come from Tang's SGEMM blog post (docs/SOURCES.md: LDS.32/64/128) and from the sector/line
geometry measured on the H200 (reference/h200.md); the hardware's own word on every rule is
tests/test_warp_fixtures.py. Here the model is also checked against a plain-loop reimplementation
on random instructions, so that the vectorized code counts what the rules say.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from gpulab.model import warp
from gpulab.model.patterns import PATTERNS, pattern


def counts_of(name: str):
    p = pattern(name)
    return warp.count(p.addresses, p.width, p.space, p.kind, p.active)


# -- global memory --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "offsets, width, sectors, lines",
    [
        (4 * np.arange(32), 4, 4, 1),  # 128 contiguous bytes
        (4 * np.arange(32) + 4, 4, 5, 2),  # the same, shifted off the sector grid
        (128 * np.arange(32), 4, 32, 32),  # column order: one sector per lane (copy_cols)
        (np.zeros(32, dtype=int), 4, 1, 1),  # one address for the warp
        (16 * np.arange(32), 16, 16, 4),  # float4 per lane: 512 bytes
        (2048 * (np.arange(32) // 16), 4, 2, 2),  # SGEMM v0 A[row][p]: two rows in a warp
    ],
)
def test_global_sectors_and_lines(offsets, width, sectors, lines):
    c = warp.global_counts(offsets, width)
    assert (c.requests, c.sectors, c.lines) == (1, sectors, lines)
    assert c.bytes_requested == 32 * width
    assert c.bytes_moved == 32 * sectors


def test_global_inactive_lanes_touch_nothing():
    offsets = 128 * np.arange(32)
    half = np.arange(32) < 16
    assert warp.global_counts(offsets, 4, half).sectors == 16
    none = warp.global_counts(offsets, 4, np.zeros(32, dtype=bool))
    assert (none.requests, none.sectors, none.bytes_requested) == (0, 0, 0)


def test_short_rows_are_padded_with_inactive_lanes():
    assert warp.global_counts(4 * np.arange(8), 4).sectors == 1
    assert warp.shared_counts(128 * np.arange(3), 4).wavefronts == 3


def test_misaligned_and_malformed_accesses_are_refused():
    with pytest.raises(ValueError, match="aligned"):
        warp.global_counts(4 * np.arange(32) + 2, 4)
    with pytest.raises(ValueError, match="width"):
        warp.global_counts(np.zeros(32, dtype=int), 3)
    with pytest.raises(ValueError, match="lanes"):
        warp.global_counts(np.zeros(33, dtype=int), 4)
    # An inactive lane's address is ignored, misaligned or not.
    offsets = 4 * np.arange(32)
    offsets[5] += 1
    active = np.ones(32, dtype=bool)
    active[5] = False
    assert warp.global_counts(offsets, 4, active).sectors == 4


# -- shared memory, LDS.32 ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, wavefronts",
    [
        ("lds32_consecutive", 1),
        ("lds32_broadcast", 1),  # one word to all lanes: broadcast is free
        ("lds32_multicast_pairs", 1),
        ("lds32_stride2", 2),
        ("lds32_stride3", 1),
        ("lds32_stride32", 32),
        ("lds32_one_bank_two_words", 2),
        ("lds8_consecutive", 1),  # four lanes per word: still one word per bank
        ("lds8_stride128", 32),
    ],
)
def test_lds32_banks(name, wavefronts):
    c = counts_of(name)
    assert c.wavefronts == wavefronts
    assert c.ideal_wavefronts == 1
    assert c.bank_conflicts == wavefronts - 1


# -- shared memory, the blog post's LDS.64 and LDS.128 worked examples -----------------------------


def test_blog_lds64_example1_consecutive_uint2_takes_two_half_warps():
    c = counts_of("lds64_ex1_consecutive")
    assert (c.wavefronts, c.bank_conflicts) == (2, 0)
    assert not warp.phases_merge(pattern("lds64_ex1_consecutive").addresses)


def test_blog_lds64_example2_pairs_merge_into_one():
    c = counts_of("lds64_ex2_xor1_pairs")
    assert (c.wavefronts, c.bank_conflicts) == (1, 0)
    assert counts_of("lds64_xor2_pairs").wavefronts == 1  # the other pairing rule


def test_blog_lds128_example1_consecutive_uint4_takes_four_quarter_warps():
    c = counts_of("lds128_ex1_consecutive")
    assert (c.wavefronts, c.ideal_wavefronts, c.bank_conflicts) == (4, 4, 0)


def test_blog_lds128_example2_sharing_across_the_half_warp_boundary_does_not_help():
    # T15 and T16 sit in different half-warps, which never merge: two transactions.
    assert counts_of("lds128_ex2_t15_t16").wavefronts == 2
    full = pattern("lds128_ex2_t15_t16_full")
    assert not warp.phases_merge(full.addresses, full.active)
    assert counts_of("lds128_ex2_t15_t16_full").wavefronts == 2


def test_blog_lds128_example3_t0_and_t15_merge_into_one_half_warp():
    p = pattern("lds128_ex3_t0_t15")
    assert warp.phases_merge(p.addresses, p.active)
    assert counts_of("lds128_ex3_t0_t15").wavefronts == 1


def test_blog_lds128_example4_the_rule_must_hold_across_the_whole_warp():
    p = pattern("lds128_ex4_irregular")
    first, second = np.array(p.addresses[:16]), np.array(p.addresses[16:])
    lane = np.arange(16)
    assert (first == first[lane ^ 1]).all()  # the first half pairs i with i^1
    assert (second == second[lane ^ 2]).all()  # the second pairs i with i^2
    assert not warp.phases_merge(p.addresses)  # ... so the warp meets neither rule
    assert counts_of("lds128_ex4_irregular").wavefronts == 4


def test_lds128_merged_half_warps_never_merge_further():
    for name in ("lds128_broadcast", "lds128_xor1_pairs", "lds128_xor2_pairs", "lds128_two_rows"):
        c = counts_of(name)
        assert (c.wavefronts, c.bank_conflicts) == (2, 0), name


def test_bank_conflicts_inside_a_phase():
    # 16 B stride in a half-warp of uint2: words 4i, 4i+1 -> banks repeat after 8 lanes: 2-way.
    c = counts_of("lds64_stride16")
    assert (c.wavefronts, c.ideal_wavefronts, c.bank_conflicts) == (4, 2, 2)
    c = counts_of("lds64_pairs_conflict")  # merged, but its 16 addresses are 2-way on banks
    assert (c.wavefronts, c.ideal_wavefronts, c.bank_conflicts) == (2, 1, 1)
    c = counts_of("lds128_stride32")
    assert (c.wavefronts, c.ideal_wavefronts, c.bank_conflicts) == (8, 4, 4)


def test_stores_do_not_merge_phases_unless_the_fixtures_say_so():
    merged = counts_of("sts64_xor1_pairs").wavefronts
    assert merged == (1 if warp.MERGE_STORES else 2)


def test_inactive_phases_cost_nothing():
    assert counts_of("lds64_first_half_only").wavefronts == 1
    assert counts_of("lds128_first_quarter_only").wavefronts == 1
    c = counts_of("lds32_none_active")
    assert (c.requests, c.wavefronts, c.bank_conflicts) == (0, 0, 0)


# -- vectorized == one warp at a time == a plain-loop reading of the rules -------------------------


def _reference_shared(addrs, width, active, kind):
    """The rules of warp.py's docstring written as loops over lanes, one warp at a time."""
    lanes = [(i, int(a)) for i, (a, on) in enumerate(zip(addrs, active)) if on]
    size = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}[width]
    if width in (8, 16) and (kind == "load" or warp.MERGE_STORES):
        by_lane = dict(lanes)
        rules = [all(by_lane.get(i ^ b, a) == a for i, a in lanes) for b in (1, 2)]
        if any(rules):
            size *= 2
    wavefronts = ideal = 0
    for start in range(0, 32, size):
        words = defaultdict(set)
        for i, a in lanes:
            if start <= i < start + size:
                for j in range(max(1, width // 4)):
                    w = a // 4 + j
                    words[w % 32].add(w)
        if words:
            wavefronts += max(len(s) for s in words.values())
            ideal += 1
    return wavefronts, ideal


def _reference_global(addrs, width, active):
    on = [int(a) for a, ok in zip(addrs, active) if ok]
    return (1 if on else 0), len({a // 32 for a in on}), len({a // 128 for a in on})


def _random_warps(rng, n, width, span_bytes):
    """Random instructions with repeats, pairs and broadcasts, so every rule gets exercised."""
    addrs = rng.integers(0, span_bytes // width, size=(n, 32)) * width
    lane = np.arange(32)
    # In some instructions each lane takes its partner's address (pairs i, i^1 or i, i^2).
    partner = np.broadcast_to(np.minimum(lane, lane ^ rng.choice([1, 2], size=(n, 1))), (n, 32))
    addrs = np.where(rng.random((n, 1)) < 0.4, np.take_along_axis(addrs, partner, axis=1), addrs)
    addrs = np.where(rng.random((n, 1)) < 0.1, addrs[:, :1], addrs)  # and some are one address
    active = rng.random((n, 32)) < rng.choice([0.3, 0.9, 1.0], size=(n, 1))
    return addrs, active


@pytest.mark.parametrize("width", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("kind", ["load", "store"])
def test_vectorized_matches_reference_on_random_warps(width, kind):
    rng = np.random.default_rng(1000 + width + (kind == "store"))
    addrs, active = _random_warps(rng, 300, width, span_bytes=768)
    shared = warp.shared_counts(addrs, width, kind, active)
    glob = warp.global_counts(addrs, width, active)
    for k in range(len(addrs)):
        assert (shared.wavefronts[k], shared.ideal_wavefronts[k]) == _reference_shared(addrs[k], width, active[k], kind)
        assert (glob.requests[k], glob.sectors[k], glob.lines[k]) == _reference_global(addrs[k], width, active[k])
    # The random instructions must exercise the interesting cases, or this test proves little.
    assert (shared.bank_conflicts > 0).any() and (shared.wavefronts == shared.ideal_wavefronts).any()
    if width in (8, 16) and kind == "load":
        assert warp.phases_merge(addrs, active).any() and not warp.phases_merge(addrs, active).all()


def test_catalogue_one_by_one_equals_all_at_once():
    for space, kind, width in {(p.space, p.kind, p.width) for p in PATTERNS}:
        group = [p for p in PATTERNS if (p.space, p.kind, p.width) == (space, kind, width)]
        together = warp.count([p.addresses for p in group], width, space, kind, [p.active for p in group])
        for k, p in enumerate(group):
            alone = warp.count(p.addresses, width, space, kind, p.active)
            field = "wavefronts" if space == "shared" else "sectors"
            assert getattr(together, field)[k] == getattr(alone, field), p.name
