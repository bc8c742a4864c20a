"""Device probe: why a GEMM in clusters loses more to the staging copy before it than one without
clusters (1000x3000x777, 2026-12-02: t4 BN=200 in clusters of four 3.2 us over its aligned time,
BN=192 without clusters 0.3 us). At an aligned shape, each --run is timed in alternation with cuBLAS
as it is, then with a kernel launched before every launch of it (ordinary launches, no overlap):
  empty - a kernel that does nothing, on the staging copy's grid (one 256-thread block per 16
          bytes of the padded rows): what a kernel before it costs the GEMM's start;
  copy  - the staging copy itself (pad_k), into buffers the GEMM does not read: that plus the
          copy's traffic and the lines it leaves in L2.
Usage: python3 notebook/probes/ab_after_kernel.py SHAPE --run VARIANT[:NAME=V,...] ... [--rounds N]"""

import argparse
import dataclasses
import statistics

from ab_rungs import alternate, parse_run  # scripts/ is on the path of a script run from it

import numpy as np

from gpulab.experiments import get_experiment
from gpulab.experiments.base import Staged
from gpulab.experiments.gemm_bf16 import staging
from gpulab.gpu.clusters import WHOLE_SM_SOURCE
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.launch import load
from gpulab.gpu.seam import cupy
from gpulab.lab import Lab, LabOptions, RunSpec


def before(variant, what: str):
    """The variant with `what` ('empty' or 'copy') launched before each of its launches."""
    def stage(inputs, shape, params, arch):
        # pad_k's grid at K + 1, the staged shape beside this one (1000x3000x777 for 1000x3000x776)
        grid = staging.staging_grid({"M": shape["M"], "N": shape["N"], "K": shape["K"] + 1})
        if what == "empty":
            kernel = load(compile_kernel(WHOLE_SM_SOURCE, "whole_sm", {}, arch))
            return Staged(inputs={}, copy=lambda: kernel(grid, (staging.THREADS, 1, 1), ()))
        cp = cupy()
        m, n, k = shape["M"], shape["N"], shape["K"]
        a_pad, bt_pad = cp.empty((m, k), dtype=cp.uint16), cp.empty((n, k), dtype=cp.uint16)
        kernel = load(compile_kernel(staging.SOURCE, staging.ENTRY, {}, arch))
        args = (inputs["A"], inputs["Bt"], a_pad, bt_pad, np.int32(m), np.int32(n), np.int32(k), np.int32(k))
        return Staged(inputs={}, copy=lambda: kernel(staging.staging_grid(shape), (staging.THREADS, 1, 1), args))
    return dataclasses.replace(variant, stage=stage)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shape")
    ap.add_argument("--run", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    exp = get_experiment("gemm_bf16")
    shape = exp.shape(*map(int, args.shape.split("x")))
    specs = {}
    for text in args.run:
        variant, params = parse_run(exp, text)
        for what in ("plain", "empty", "copy"):
            v = variant if what == "plain" else before(variant, what)
            specs[f"{text} {what}"] = RunSpec(exp, v, params, shape)
    specs["cublas"] = RunSpec(exp, None, {}, shape, library="cublas")
    times = alternate(Lab(LabOptions(seed=0)), specs, args.rounds, args.shape)
    base = statistics.median(times["cublas"])
    for label, t in times.items():
        med = statistics.median(t)
        print(f"{args.shape} {label}: {med * 1e3:.2f} us, {100 * base / med:.1f}% of cublas "
              f"(range {min(t) * 1e3:.2f}-{max(t) * 1e3:.2f})", flush=True)


if __name__ == "__main__":
    main()
