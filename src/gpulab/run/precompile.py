"""Compile the kernels of a sweep on the spare cores while its runs go one by one on the GPU.

A fresh machine has an empty kernel cache, and NVRTC takes from a fraction of a second to several
seconds per kernel (the Hopper rungs are the slow ones): compiled one at a time in front of each
run, the compiles alone took about a minute of `gpulab run`. Here they are handed, in plan order,
to a pool of processes as the sweep starts; the lab compiles each spec as before, and finds it in
the cache, or waits on that kernel's own lock (gpulab.gpu.compile) while a pool process finishes
it. A compile that fails in the pool fails again in the lab, which says so in the run's row, so
the pool keeps quiet about failures. The pool's processes are spawned (CUDA does not survive a
fork) and touch no GPU.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from gpulab.run.lab import RunSpec, compile_spec, constraint_reason
from gpulab.run.worker import callers_main_hidden

# Cores left to the process that times on the GPU and to the one that drives it.
RESERVED_CORES = 2
MAX_PROCESSES = 16


def _compile_quietly(spec: RunSpec, arch: str) -> None:
    try:
        compile_spec(spec, arch)
    except Exception:  # noqa: BLE001  (the lab compiles it again and reports why in the run's row)
        pass


def processes() -> int:
    """How many compile processes this machine can spare (0: none worth starting)."""
    spare = (os.cpu_count() or 1) - RESERVED_CORES
    return min(MAX_PROCESSES, spare) if spare >= 2 else 0


@contextlib.contextmanager
def precompiled(specs: list[RunSpec], arch: str):
    """Compile the kernels of `specs` (once each, in order) on spare cores for the duration of the
    `with` block; on the way out, compiles not yet started are dropped (a sweep stopped by Ctrl-C
    does not wait for them)."""
    unique = {}
    for spec in specs:
        if spec.variant is not None and constraint_reason(spec, arch) is None:
            unique.setdefault((spec.experiment.name, spec.variant.name, spec.variant.params_label(spec.params)), spec)
    count = min(processes(), len(unique))
    if count < 1:
        yield
        return
    pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"))
    try:
        with callers_main_hidden(*(spec.experiment for spec in unique.values())):  # the pool starts its processes here
            for spec in unique.values():
                pool.submit(_compile_quietly, spec, arch)
        yield
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
