"""Device probe: the padded staging copy (gemm_bf16/pad_k.cu) timed on its own, against the copy
ceiling's bytes. Usage: python3 notebook/probes/time_pad_k.py [SOURCE.cu]  (default: the package's pad_k.cu)"""

import sys
from pathlib import Path

import cupy as cp
import numpy as np

from gpulab.experiments.gemm_bf16 import staging
from gpulab.experiments.base import Shape
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.launch import load

source = Path(sys.argv[1]) if len(sys.argv) > 1 else staging.SOURCE
kernel = load(compile_kernel(source, staging.ENTRY, {}, "sm_90"))
for m, n, k in ((4097, 4097, 4097), (1000, 3000, 777), (8192, 8192, 8191)):
    shape = Shape(("M", "N", "K"), (m, n, k))
    kp = staging.padded_k(k)
    a = cp.ones((m, k), cp.uint16)
    bt = cp.ones((n, k), cp.uint16)
    a_pad, bt_pad = cp.empty((m, kp), cp.uint16), cp.empty((n, kp), cp.uint16)
    args = (a, bt, a_pad, bt_pad, np.int32(m), np.int32(n), np.int32(k), np.int32(kp))
    grid = staging.staging_grid(shape)
    for _ in range(3):
        kernel(grid, (staging.THREADS, 1, 1), args)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    reps = 50
    start.record()
    for _ in range(reps):
        kernel(grid, (staging.THREADS, 1, 1), args)
    stop.record()
    stop.synchronize()
    us = cp.cuda.get_elapsed_time(start, stop) * 1e3 / reps
    moved = staging.staged_bytes(shape)
    print(f"{source.name} {m}x{n}x{k}: {us:.1f} us, {moved / us / 1e6:.2f} TB/s ({moved / 1e6:.1f} MB moved)", flush=True)
