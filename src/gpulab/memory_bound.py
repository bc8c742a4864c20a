"""% of the copy ceiling for the memory-bound shapes of a compute-bound experiment.

A compute-bound experiment (SGEMM) is shown against the FMA rate and cuBLAS (gpulab.ceilings.attach);
but a 1 x N x K product does 2 flops per 4-byte element of B it must read, and no kernel can pass the
card's copy bandwidth on it. A shape is memory-bound on a card when its arithmetic intensity (flops
per compulsory byte: gflops / gbps of one row, since both rates share its time) is below the card's
ridge point: the row's compute ceiling (`ceiling_gflops`, which gpulab.ceilings.attach set from the
experiment's compute_ceiling: the FP32 FMA rate for SGEMM) over the copy GB/s, ~15 flop/byte for
FP32 on an H200. Its rows then also get
`pct_of_copy`: the GB/s of the bytes the problem must move (each input read once, the output
written once) against the copy ceiling.
"""

from __future__ import annotations

from typing import Iterable


def attach_copy(records: Iterable[dict], experiment, ceilings) -> list[dict]:
    """Add `pct_of_copy` to the timed rows of memory-bound shapes (compute-bound experiments only;
    a memory-bound experiment's `pct_of_ceiling` is already against the copy)."""
    records = list(records)
    if ceilings is None or experiment.bound != "compute" or not ceilings.copy_gbps:
        return records
    for r in records:
        if not (r.get("time_ms") and r.get("gflops") and r.get("gbps") and r.get("ceiling_gflops")):
            continue
        if r["gflops"] / r["gbps"] < r["ceiling_gflops"] / ceilings.copy_gbps:
            r["pct_of_copy"] = 100.0 * r["gbps"] / ceilings.copy_gbps
    return records
