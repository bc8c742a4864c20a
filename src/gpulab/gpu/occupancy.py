"""Theoretical occupancy from a kernel's resources and the SM's limits, in pure Python: how many
blocks of a kernel one SM holds at once, and which resource stops it from holding more.

It follows the arithmetic of the CUDA occupancy calculator: registers are allocated per warp in
units of 256, and each of the SM's 4 sub-partitions has its own quarter of the register file, so a
warp needing 4,864 registers fits 3 to a sub-partition (16,384 / 4,864), 12 to the SM; shared memory
is allocated per block in units of 128 bytes plus 1 KiB the driver reserves for each block. With a
GPU present the driver's own calculator is the authority (gpulab.run.ncu_child asks it); this module
answers without one, for a named architecture, so `gpulab run` on a laptop can already say that
sgemm v3's 148 registers leave room for one block of 256 threads per SM.
"""

from __future__ import annotations

import dataclasses
import math

from gpulab.errors import GpulabError

WARP = 32
MAX_THREADS_PER_BLOCK = 1024  # every architecture gpulab compiles for
REG_ALLOC_UNIT = 256  # registers, per warp
SUB_PARTITIONS = 4
SMEM_ALLOC_UNIT = 128  # bytes, per block
SMEM_RESERVED_PER_BLOCK = 1024  # bytes the driver keeps per block (sm_80 and later)


@dataclasses.dataclass(frozen=True)
class SmLimits:
    """One SM of an architecture: what all resident blocks share, at the largest shared-memory carveout."""

    max_warps: int
    max_blocks: int
    regs: int
    smem_bytes: int
    smem_reserved_per_block: int = SMEM_RESERVED_PER_BLOCK


# From the CUDA C++ Programming Guide's table of compute-capability limits, for `gpulab run` and
# `list` without a GPU (with one, the card's own attributes are used: gpulab.run.lab.Lab.sm_limits).
# Before sm_80 the driver reserves no shared memory per block. (NVRTC 13 targets nothing older than sm_75.)
SM_LIMITS: dict[str, SmLimits] = {
    "sm_75": SmLimits(max_warps=32, max_blocks=16, regs=65536, smem_bytes=64 * 1024, smem_reserved_per_block=0),
    "sm_80": SmLimits(max_warps=64, max_blocks=32, regs=65536, smem_bytes=164 * 1024),
    "sm_86": SmLimits(max_warps=48, max_blocks=16, regs=65536, smem_bytes=100 * 1024),
    "sm_89": SmLimits(max_warps=48, max_blocks=24, regs=65536, smem_bytes=100 * 1024),
    "sm_90": SmLimits(max_warps=64, max_blocks=32, regs=65536, smem_bytes=228 * 1024),
}


@dataclasses.dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    warps_per_block: int
    max_warps: int
    limits: dict[str, int]  # blocks per SM each resource alone would allow

    @property
    def pct(self) -> float:
        return 100.0 * self.blocks_per_sm * self.warps_per_block / self.max_warps

    @property
    def limiter(self) -> str:
        """The resources that set blocks_per_sm (several when they tie)."""
        return ", ".join(k for k, v in self.limits.items() if v == self.blocks_per_sm)

    def as_record(self) -> dict:
        return {"theoretical_blocks_per_sm": self.blocks_per_sm, "theoretical_occupancy_pct": self.pct,
                "occupancy_limiter": self.limiter}


def card_limits(device, attributes: dict) -> SmLimits:
    """The limits of the card in hand: `device` a gpulab.gpu.device.DeviceInfo, `attributes` CuPy's
    Device().attributes (the driver's names)."""
    return SmLimits(max_warps=device.max_threads_per_sm // WARP,
                    max_blocks=attributes.get("MaxBlocksPerMultiprocessor", 32), regs=device.regs_per_sm,
                    smem_bytes=attributes.get("MaxSharedMemoryPerMultiprocessor", device.smem_per_sm_bytes),
                    smem_reserved_per_block=attributes.get("ReservedSharedMemoryPerBlock", SMEM_RESERVED_PER_BLOCK))


def limits_for(arch: str) -> SmLimits:
    try:
        return SM_LIMITS[arch]
    except KeyError:
        raise GpulabError(f"no SM limits known for {arch}; known: {', '.join(SM_LIMITS)}") from None


def occupancy(threads_per_block: int, regs_per_thread: int, smem_per_block_bytes: int,
              limits: SmLimits) -> Occupancy:
    """Blocks per SM for a block of `threads_per_block` threads using `regs_per_thread` registers
    and `smem_per_block_bytes` of shared memory (static + dynamic)."""
    if not 1 <= threads_per_block <= MAX_THREADS_PER_BLOCK:
        raise GpulabError(f"a block of {threads_per_block} threads: a block has 1 to {MAX_THREADS_PER_BLOCK} "
                          "threads; check the variant's launch (its block)")
    warps = math.ceil(threads_per_block / WARP)
    regs_per_warp = math.ceil(max(regs_per_thread, 1) * WARP / REG_ALLOC_UNIT) * REG_ALLOC_UNIT
    warps_by_regs = (limits.regs // SUB_PARTITIONS) // regs_per_warp * SUB_PARTITIONS
    smem = math.ceil(smem_per_block_bytes / SMEM_ALLOC_UNIT) * SMEM_ALLOC_UNIT
    by = {
        "warps": limits.max_warps // warps,
        "blocks per SM": limits.max_blocks,
        "registers": warps_by_regs // warps,
        # (before sm_80 nothing is reserved: a block without shared memory is not limited by it)
        "shared memory": limits.smem_bytes // (smem + limits.smem_reserved_per_block) if smem or
        limits.smem_reserved_per_block else limits.max_blocks,
    }
    return Occupancy(min(by.values()), warps, limits.max_warps, by)
