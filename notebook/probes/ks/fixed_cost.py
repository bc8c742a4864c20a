"""Device probe (call 22): where ks's ~3.5 us of fixed cost over cuBLAS goes at the small decode layers.
1. Empty kernels of 132 blocks x 288 threads with 0-200 KiB of dynamic shared memory, timed as every
   row is (gpulab.gpu.timing: L2 flushed by reading, the hold kernel, events): does a launch that
   needs the large shared-memory carve-out cost more after the flush's small one?
2. ks before and after its fixup change (ks_fixup.patch, reversed, is the kernel before) in
   interleaved rounds (gpulab.jobs.ab) at the tuned configs of the decode layers.
Usage (on the card, repository root): python3 notebook/probes/ks/fixed_cost.py OLD.cu OUT.csv"""

import csv
import dataclasses
import sys

import numpy as np

from gpulab.gpu.seam import cupy
from gpulab.gpu.timing import L2Flusher, TimingPolicy, time_it
from gpulab.jobs import ab as ab_job
from gpulab.run.args import make_spec
from gpulab.run.lab import Lab, LabOptions

EMPTY = r'extern "C" __global__ void empty(int* out) { extern __shared__ int s[]; if (threadIdx.x == 9999) out[0] = s[0]; }'
AB = [("1x4096x4096", dict(TN=8, STAGES=6, BPS=1)), ("16x4096x4096", dict(TN=16, STAGES=6, BPS=1)),
      ("16x6144x4096", dict(TN=16, STAGES=6, BPS=1)), ("1x8192x8192", dict(TN=8, STAGES=6, BPS=1)),
      ("16x4096x14336", dict(TN=16, STAGES=6, BPS=1)), ("1x57344x8192", dict(TN=8, STAGES=6, BPS=2))]


def main() -> None:
    old, out_csv = sys.argv[1], sys.argv[2]
    cp = cupy()
    rows = []
    kernel = cp.RawKernel(EMPTY, "empty")
    kernel.max_dynamic_shared_size_bytes = 200 * 1024
    sink = cp.zeros(1, dtype=cp.int32)
    flush = L2Flusher(cp.cuda.Device().attributes["L2CacheSize"])
    for threads in (32, 288):
        for kib in (0, 16, 48, 100, 148, 200):
            t = time_it(lambda: kernel((132,), (threads,), (sink,), shared_mem=kib * 1024), TimingPolicy(), flush)
            rows.append({"what": f"empty 132x{threads} smem {kib} KiB", "time_us": 1e3 * t.median_ms,
                         "low_us": 1e3 * (t.ci_low_ms or np.nan), "high_us": 1e3 * (t.ci_high_ms or np.nan)})
            print(rows[-1], flush=True)
    lab = Lab(LabOptions(seed=0))
    for shape, params in AB:
        new = make_spec("gemm_bf16", "ks", params, shape)
        before = dataclasses.replace(new, variant=dataclasses.replace(new.variant, file=old))
        result = ab_job.run(lab, before, new, ab_job.AbPolicy(noise=0.01))
        v = result.verdict
        rows.append({"what": f"ks {shape} {params}: after/before", "time_us": 1e3 * float(np.median(result.times_b)),
                     "low_us": v.low, "high_us": v.high, "before_us": 1e3 * float(np.median(result.times_a)),
                     "ratio": v.ratio, "verdict": v.word})
        print(rows[-1], flush=True)
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "what", k))
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
