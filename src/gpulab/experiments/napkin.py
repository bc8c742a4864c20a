"""Napkin math shared by the memory-bound experiments (coalesce, stencil, grayscale).

A memory-bound record carries the bytes its problem must move (read and written, in MB, the same
numbers `bytes_moved` divides by the time) and whether that traffic fits in the card's L2. The L2
label matters for reading the rate: the timing flushes L2 before each repetition, so reads start
cold, but a kernel's writes can still end in L2 as dirty lines when the buffers fit (or nearly fit)
there, and then the measured GB/s is not a DRAM rate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpulab.gpu.device import l2_bytes
from gpulab.gpu.seam import cupy

MB = 1e6


def napkin_columns(read_bytes: int, written_bytes: int, l2: int | None = None) -> dict[str, Any]:
    """The record columns: napkin bytes, and two L2 labels.

    `fits_in_l2`: reads and writes together fit in L2 (the whole problem could live there).
    `writes_fit_in_l2`: the output alone fits, so part of what is written may never reach DRAM
    inside the timed window.
    """
    l2 = l2_bytes(without_gpu=None) if l2 is None else l2
    columns: dict[str, Any] = {
        "napkin_read_mb": read_bytes / MB,
        "napkin_written_mb": written_bytes / MB,
    }
    if l2:
        columns["l2_mb"] = l2 / MB
        columns["fits_in_l2"] = read_bytes + written_bytes <= l2
        columns["writes_fit_in_l2"] = written_bytes <= l2
    return columns


def napkin_lines(records: list[dict]) -> list[str]:
    """One line per shape: the bytes the rates are computed from, and what the L2 may hide."""
    lines = []
    for shape in dict.fromkeys(r["shape"] for r in records if r.get("napkin_read_mb") is not None):
        r = next(r for r in records if r["shape"] == shape and r.get("napkin_read_mb") is not None)
        read, written = r["napkin_read_mb"], r["napkin_written_mb"]
        line = f"{shape}: napkin {read:,.1f} MB read + {written:,.1f} MB written = {read + written:,.1f} MB"
        if r.get("fits_in_l2"):
            line += f"; FITS IN THE {r['l2_mb']:.1f} MB L2: reads start cold (flushed), writes may end in L2"
        elif r.get("l2_mb"):
            line += f"; {(read + written) / r['l2_mb']:.1f}x the {r['l2_mb']:.1f} MB L2: DRAM-bound"
            if r.get("writes_fit_in_l2"):
                line += " (the output alone fits: some writes may still be in L2 when the timing stops)"
        lines.append(line)
    return lines


def array_module(array):
    """numpy for a numpy array, else cupy (through gpulab.gpu.seam, only then)."""
    return np if isinstance(array, np.ndarray) else cupy()
