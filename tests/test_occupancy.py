"""Theoretical occupancy without a GPU (gpulab.gpu.occupancy), held to what the H200's driver said
(its occupancy calculator, recorded by `gpulab profile`) and to the calculator's arithmetic."""

from pathlib import Path

import pytest

from gpulab.errors import GpulabError
from gpulab.gpu.occupancy import SM_LIMITS, SmLimits, limits_for, occupancy
from gpulab.records import read_csv

ROOT = Path(__file__).resolve().parents[1]
H90 = SM_LIMITS["sm_90"]


def test_what_the_h200_driver_said_about_v0_and_v1():
    """results/h200/profile.csv: blocks per SM from cuOccupancyMaxActiveBlocksPerMultiprocessor.
    A vendor library's rows hold ncu's limits instead, under the shared-memory carveout the library
    chose for its kernel, which gpulab cannot see (the arithmetic assumes the largest): they may allow
    fewer blocks than the arithmetic, never more (cuBLAS's CUTLASS kernel at 2048^3: 48 KiB of shared
    memory, which ncu says limits it to one block per SM, the arithmetic to four)."""
    rows = read_csv(ROOT / "results" / "h200" / "profile.csv")
    assert rows
    libraries = 0
    for r in rows:
        x, y, z = (int(n) for n in str(r["block"]).split("x"))  # recorded as '16x16x1'
        threads = x * y * z
        smem = (r.get("smem_static_bytes") or 0) + (r.get("smem_dynamic_bytes") or 0)
        got = occupancy(threads, r["reg_per_thread"], smem, H90)
        if r["variant"] == "cublas":
            libraries += 1
            assert 1 <= r["blocks_per_sm"] <= got.blocks_per_sm, r
            continue
        assert got.blocks_per_sm == r["blocks_per_sm"], r["variant"]
        assert got.limiter == r["occupancy_limiter"]
    assert libraries > 0


def test_registers_are_shared_per_sub_partition():
    """Registers go to warps in 256-register units from each quarter of the register file: 200
    registers a thread is 6,400 a warp, 2 warps a quarter, 8 an SM (65,536 // 6,400 would say 10)."""
    assert occupancy(32, 200, 0, H90).limits["registers"] == 8
    assert occupancy(32, 255, 0, H90).limits["registers"] == 8  # 8,160 rounds up to 8,192
    assert occupancy(32, 168, 0, H90).limits["registers"] == 12  # 5,376: 3 a quarter
    assert occupancy(256, 148, 0, H90).blocks_per_sm == 1  # sgemm v3: 12 warps, blocks of 8


def test_shared_memory_counts_the_reserved_kilobyte_and_allocation_unit():
    # 228 KiB / 4 = 57 KiB a block, 1 KiB of it the driver's: 56 KiB of shared memory fits 4 blocks,
    # one byte more is another 128-byte unit and fits 3
    assert occupancy(64, 32, 56 * 1024, H90).limits["shared memory"] == 4
    assert occupancy(64, 32, 56 * 1024 + 1, H90).limits["shared memory"] == 3
    occ = occupancy(1024, 16, 120 * 1024, H90)
    assert occ.blocks_per_sm == 1 and occ.limiter == "shared memory" and occ.pct == 50.0


def test_warps_and_blocks_limits_and_the_record():
    occ = occupancy(64, 16, 0, H90)  # two warps: 32 blocks by warps, 32 by the block limit
    assert occ.blocks_per_sm == 32 and occ.limiter == "warps, blocks per SM" and occ.pct == 100.0
    rec = occupancy(1000, 16, 0, H90).as_record()  # 32 warps (rounded up) a block; registers allow 4
    assert rec == {"theoretical_blocks_per_sm": 2, "theoretical_occupancy_pct": 100.0, "occupancy_limiter": "warps"}
    small = SmLimits(max_warps=48, max_blocks=16, regs=65536, smem_bytes=100 * 1024)
    assert occupancy(64, 16, 0, small).limiter == "blocks per SM"


def test_before_sm_80_a_block_without_shared_memory_is_not_limited_by_it():
    occ = occupancy(256, 32, 0, SM_LIMITS["sm_75"])
    assert occ.limits["shared memory"] == SM_LIMITS["sm_75"].max_blocks and occ.blocks_per_sm == 4  # 32 warps / 8


def test_unknown_arch_and_empty_block():
    with pytest.raises(GpulabError, match="no SM limits known for sm_42"):
        limits_for("sm_42")
    # A variant's launch with an empty or oversized block: one line for the user (a ValueError's
    # traceback before, issue 42), not a bug of gpulab's.
    for threads in (0, -32, 2048):
        with pytest.raises(GpulabError, match=f"a block of {threads} threads: a block has 1 to 1024"):
            occupancy(threads, 32, 0, H90)


def test_card_limits_from_the_driver_attributes():
    """With a GPU the card's own numbers are used (the H200's, as its driver reports them)."""
    from gpulab.gpu.device import DeviceInfo
    from gpulab.gpu.occupancy import card_limits

    h200 = DeviceInfo("NVIDIA H200", (9, 0), 132, 62914560, 232448, 233472, 65536, 2048, 150 << 30,
                      1980000, 3201000, "580.159.04", "13.2")
    attrs = {"MaxBlocksPerMultiprocessor": 32, "MaxSharedMemoryPerMultiprocessor": 233472,
             "ReservedSharedMemoryPerBlock": 1024}
    assert card_limits(h200, attrs) == H90
    assert card_limits(h200, {}) == H90  # the same from the device's own properties and defaults
