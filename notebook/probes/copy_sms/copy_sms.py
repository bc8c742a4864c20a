"""Device probe: the DRAM rate with only a part of the SMs busy, few warps on each, few loads in flight.

    python3 notebook/probes/copy_sms/copy_sms.py OUT.csv

The best-row model's DRAM limit is the compulsory bytes over the copy ceiling, however many SMs pull
them: kc at 128 tokens in 128-wide tiles (96 blocks on 132 SMs at 128x6144x4096) is modelled as fast
as in 96-wide ones (128 blocks), and ran 1.05-1.24x slower wherever the other filled the SMs (H200,
2026-12-05/06); d0's KW = 4 against KW = 8 turns on the same question. This times a grid-stride copy
(read + write) and a grid-stride read (summed, as a GEMV reads its weights) of 256 MiB at B blocks of
T threads, each thread keeping U float4 loads in flight, B from 8 to 2 x SMs, T from 128 to 1024,
the L2 flushed between repetitions. One row each: kernel, U, blocks, threads, warps an SM (where the
blocks spread one an SM), KiB in flight an SM, GB/s, GB/s a busy SM, and the timing's noise and clock.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

from gpulab.gpu import seam
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.device import probe, sm_count
from gpulab.gpu.launch import load
from gpulab.gpu.timing import L2Flusher, TimingPolicy, time_it

BYTES = 1 << 28  # 256 MiB: over four times the H200's L2, and the slowest config still under 0.1 s
SOURCE = Path(__file__).with_name("copy_sms.cu")


def main() -> int:
    out = Path(sys.argv[1])
    cupy = seam.cupy()
    device = probe()[0]
    sms = sm_count()
    src = cupy.random.random(BYTES // 4, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    n4 = BYTES // 16
    want_sum = float(src.astype(cupy.float64).sum())
    policy, flush = TimingPolicy(target_ms=60.0), L2Flusher(device.l2_bytes)
    rows = []
    for kernel_name, moved_per_byte in (("read_stride", 1), ("copy_stride", 2)):
        for unroll in (1, 4):
            kernel = load(compile_kernel(SOURCE, kernel_name, {"U": unroll}, device.arch))
            for threads in (128, 256, 512, 1024):
                for blocks in sorted({8, 16, 33, 66, 96, 99, 128, sms, 2 * sms}):
                    dst.fill(np.nan)
                    t = time_it(lambda: kernel((blocks, 1, 1), (threads, 1, 1), (src, dst, np.int64(n4))), policy, flush)
                    if kernel_name == "copy_stride":
                        ok = bool(cupy.array_equal(src, dst))
                    else:
                        got = float(dst[: blocks * threads].astype(cupy.float64).sum())
                        ok = abs(got - want_sum) <= 1e-3 * abs(want_sum)  # float32 sums a thread; a chunk missed is far more
                    if not ok:
                        raise SystemExit(f"{kernel_name} U={unroll} wrong at {blocks} blocks of {threads}")
                    gbps = moved_per_byte * BYTES / (t.median_ms / 1e3) / 1e9
                    busy = min(blocks, sms)
                    warps = threads // 32 * blocks / busy
                    rows.append({"gpu": device.name, "kernel": kernel_name, "U": unroll, "blocks": blocks,
                                 "threads": threads, "warps_per_sm": round(warps, 2),
                                 "kib_in_flight_per_sm": round(warps * 32 * 16 * unroll / 1024, 1),
                                 "time_ms": round(t.median_ms, 5), "rel_noise": t.rel_noise,
                                 "gbps": round(gbps, 1), "gbps_per_busy_sm": round(gbps / busy, 2),
                                 "sm_clock_mhz": t.card.get("sm_clock_mhz", "")})
                    print(f"{kernel_name} U={unroll} {blocks:4d} x {threads:4d}: {gbps:7.1f} GB/s, "
                          f"{gbps / busy:6.2f} a busy SM", flush=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
