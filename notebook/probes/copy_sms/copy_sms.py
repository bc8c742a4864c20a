"""Device probe: the copy rate with only a part of the SMs busy, and with few warps on each.

    python3 notebook/probes/copy_sms/copy_sms.py OUT.csv

The best-row model's DRAM limit is the compulsory bytes over the copy ceiling, however many SMs pull
them: kc at 128 tokens in 128-wide tiles (96 blocks on 132 SMs at 128x6144x4096) is modelled as fast
as in 96-wide ones (128 blocks), and ran 1.05-1.24x slower wherever the other filled the SMs (H200,
2026-12-05/06). This times a grid-stride float4 copy of 1 GiB (read + written) at B blocks of T
threads, B from 8 to 2 x SMs, T from 128 to 1024, L2 flushed between repetitions, and writes one row
each: blocks, threads, warps an SM (where the blocks spread one an SM), GB/s, and GB/s a busy SM.
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

COPY_BYTES = 1 << 30


def main() -> int:
    out = Path(sys.argv[1])
    cupy = seam.cupy()
    device = probe()[0]
    sms = sm_count()
    kernel = load(compile_kernel(Path(__file__).with_name("copy_sms.cu"), "copy_stride", {}, device.arch))
    src = cupy.random.random(COPY_BYTES // 4, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    n4 = COPY_BYTES // 16
    policy, flush = TimingPolicy(), L2Flusher(device.l2_bytes)
    rows = []
    for threads in (128, 256, 512, 1024):
        for blocks in sorted({8, 16, 33, 66, 96, 99, 128, sms, 2 * sms}):
            dst.fill(np.nan)
            t = time_it(lambda: kernel((blocks, 1, 1), (threads, 1, 1), (src, dst, np.int64(n4))), policy, flush)
            if not bool(cupy.array_equal(src, dst)):
                raise SystemExit(f"wrong copy at {blocks} blocks of {threads}")
            gbps = 2 * COPY_BYTES / (t.median_ms / 1e3) / 1e9
            busy = min(blocks, sms)
            rows.append({"gpu": device.name, "blocks": blocks, "threads": threads,
                         "warps_per_sm": threads // 32 * blocks / busy, "time_ms": t.median_ms,
                         "rel_noise": t.rel_noise, "gbps": round(gbps, 1), "gbps_per_busy_sm": round(gbps / busy, 2),
                         "sm_clock_mhz": t.card.get("sm_clock_mhz", "")})
            print(f"{blocks:4d} x {threads:4d}: {gbps:7.1f} GB/s, {gbps / busy:6.2f} a busy SM", flush=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
