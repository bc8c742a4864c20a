"""Sweeps past one process: compile on many CPU cores while the GPUs time, on one host or a Dask
cluster spanning several (`--workers N`, `--scheduler ADDRESS`).

The engine is Dask distributed (an optional extra: pip install "gpulab[cluster]"). Its workers
play two parts, told apart by the resources they offer:
  compile=1  a CPU worker: compiles a run's kernel (NVRTC + ptxas) and sends back the cubin and its
             ptxas report (gpulab.gpu.compile.CachedCubin), which the timing worker installs in its
             own compile cache, so that each kernel is compiled once wherever it is timed.
  GPU=1      one worker per GPU, pinned to it by CUDA_VISIBLE_DEVICES, started with one thread: it
             holds the lab (gpulab.run.worker.IsolatedLab, a fault costs its row) and times one run at
             a time, so two timings never share a GPU.
`--workers N` starts such a cluster on this machine (N compile workers and one GPU worker per GPU
here); `--scheduler` uses one already running (README: "Sweeps on many cores and GPUs").

GPUs of one model form a card group: every run of the sweep is timed once per group, on whichever
of its GPUs is free, and its rows go to that card's folder as in a serial sweep (each row says its
host and gpu_index). A worker lost mid-run (killed, its machine gone) costs only the run it held:
the run goes to the next free GPU worker, and after `allowed_failures` losses it is recorded as
"lost: ..." in skip_reason. The driver keeps every finished row as it comes.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, Callable

from gpulab.errors import DeviceFault, GpulabError
from gpulab.gpu.compile import CachedCubin
from gpulab.gpu.device import visible_gpus
from gpulab.records import FAULTED
from gpulab.run.lab import compile_record, compile_spec, constraint_reason
from gpulab.run.progress import QUIET, Progress
from gpulab.run.worker import IsolatedLab, Unfinished, default_lab_factory

INSTALL_HINT = 'pip install "gpulab[cluster]" (or: pip install dask distributed)'
COMPILE, GPU = "compile", "GPU"
LOST = "lost:"  # skip_reason prefix of a run whose worker died every time it was tried
ALLOWED_FAILURES = 2  # times a run may lose its worker and be tried again before it is recorded as lost
WORKER_WAIT_S = 300.0  # how long a sweep waits for a GPU worker when every one is lost
# A scheduler's address as Dask takes it: [tcp:// or tls://]HOST:PORT (an IPv6 host in brackets).
SCHEDULER_ADDRESS = re.compile(r"(?:(?:tcp|tls)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(?P<port>\d{1,5})")
REACH_TIMEOUT_S = 5.0  # to open a connection to the scheduler; a refused one is known at once


def require_dask():
    """The distributed module, or the one line that says how to install it."""
    try:
        import distributed
    except ImportError:
        raise GpulabError(f"workers and scheduler need Dask: {INSTALL_HINT}") from None
    return distributed


@dataclasses.dataclass(frozen=True)
class Card:
    """One GPU worker as its lab described itself."""

    address: str
    device: Any  # gpulab.gpu.device.DeviceInfo
    arch: str
    env: dict

    @property
    def slug(self) -> str:
        return self.device.slug


@dataclasses.dataclass
class CardGroup:
    """The GPUs of one model: the surface of a lab for a tune plan (device, arch, env, preflight),
    with the runs that did not finish on them."""

    cluster: "Cluster"
    cards: list[Card]
    unfinished: list[Unfinished] = dataclasses.field(default_factory=list)
    only: bool = False  # the cluster's one card model: its runs may go to any GPU worker, replacements too

    @property
    def device(self):
        return self.cards[0].device

    @property
    def arch(self) -> str:
        return self.cards[0].arch

    @property
    def env(self) -> dict:
        return self.cards[0].env

    @property
    def addresses(self) -> list[str]:
        return [c.address for c in self.cards]

    def preflight(self, specs: list) -> None:
        alive = self.cluster._gpu_workers(self)
        self.cluster.client.submit(_preflight, specs, self.cluster.options, self.cluster.factory, pure=False,
                                   workers=alive[:1], resources={GPU: 1}).result()


def scheduler_host_port(address: str) -> tuple[str, int]:
    """(host, port) of a scheduler's address, or one line saying what an address looks like."""
    match = SCHEDULER_ADDRESS.fullmatch(address.strip()) if isinstance(address, str) else None
    if match is None:
        raise GpulabError(f"scheduler {address!r:.80} is not a scheduler's address: give [tcp://]HOST:PORT, e.g. "
                          "tcp://host:8786")
    port = int(match["port"])
    if not 1 <= port <= 65535:
        raise GpulabError(f"scheduler {address}: port {port} is not 1 to 65535; e.g. tcp://host:8786")
    return match["host"], port


class Cluster:
    """A Dask client, with the cluster it started (local) or joined (a scheduler's address).
    `options` and `factory` make each GPU worker's lab (the real Lab by default)."""

    def __init__(self, client, options: Any = None, factory: Callable = default_lab_factory, own=None,
                 allowed_failures: int = ALLOWED_FAILURES):
        self.client, self.options, self.factory, self._own = client, options, factory, own
        self.allowed_failures = allowed_failures

    @classmethod
    def local(cls, workers: int, gpus: list[str], options: Any = None, factory: Callable = default_lab_factory,
              allowed_failures: int = ALLOWED_FAILURES, gpu_env: dict | None = None) -> "Cluster":
        """A cluster on this machine: `workers` compile processes and one process per GPU in `gpus`
        (as CUDA_VISIBLE_DEVICES names them), each with one thread. `gpu_env` adds environment
        variables to the GPU processes."""
        distributed = require_dask()
        import dask

        _configure(dask)
        hidden = {"CUDA_VISIBLE_DEVICES": ""}  # compile workers need no GPU, and must not open one
        specs = {f"compile-{i}": _nanny_spec(distributed, {COMPILE: 1}, hidden) for i in range(workers)}
        for gpu in gpus:
            specs[f"gpu-{gpu}"] = _nanny_spec(distributed, {GPU: 1}, {"CUDA_VISIBLE_DEVICES": gpu} | (gpu_env or {}))
        own = distributed.SpecCluster(
            workers=specs, scheduler={"cls": distributed.Scheduler, "options": {"dashboard_address": None}},
            silence_logs=40, name="gpulab")
        client = distributed.Client(own)
        client.wait_for_workers(len(specs), timeout=300)
        return cls(client, options, factory, own, allowed_failures)

    @classmethod
    def connect(cls, address: str, options: Any = None, factory: Callable = default_lab_factory) -> "Cluster":
        host, port = scheduler_host_port(address)
        distributed = require_dask()
        try:  # first a plain connection: nothing listening is said at once, not after Dask's 30 s of retries
            socket.create_connection((host.strip("[]"), port), timeout=REACH_TIMEOUT_S).close()
        except OSError as exc:
            raise GpulabError(f"no Dask scheduler answered at {address} ({exc.strerror or exc}); start one with "
                              "`dask scheduler` and give its address as scheduler, e.g. tcp://host:8786") from None
        try:
            client = distributed.Client(address, timeout=30)
        except (OSError, TimeoutError) as exc:
            raise GpulabError(f"no Dask scheduler answered at {address} ({exc}); start one with "
                              "`dask scheduler` and give its address as scheduler, e.g. tcp://host:8786") from None
        return cls(client, options, factory)

    # -- the workers ---------------------------------------------------------------------------
    def _workers(self) -> dict[str, dict]:
        return self.client.scheduler_info(n_workers=-1)["workers"]

    def groups(self) -> list[CardGroup]:
        """The GPU workers, opened and described, grouped by card model."""
        gpu_workers = [a for a, w in self._workers().items() if w.get("resources", {}).get(GPU)]
        if not gpu_workers:
            raise GpulabError("the cluster has no GPU worker: start one per GPU with "
                              "CUDA_VISIBLE_DEVICES=<i> dask worker <scheduler> --nthreads 1 --resources GPU=1")
        futures = [self.client.submit(_describe, self.options, self.factory, pure=False, workers=[a],
                                      resources={GPU: 1}) for a in gpu_workers]
        groups: dict[str, CardGroup] = {}
        for address, future in zip(gpu_workers, futures):
            device, arch, env = future.result()
            card = Card(address, device, arch, env)
            groups.setdefault(card.slug, CardGroup(self, [])).cards.append(card)
        if len(groups) == 1:
            next(iter(groups.values())).only = True
        return list(groups.values())

    def _compile_resources(self) -> dict | None:
        """Compiles go to the compile workers where the cluster has some, else to any worker."""
        has = any(w.get("resources", {}).get(COMPILE) for w in self._workers().values())
        return {COMPILE: 1} if has else None

    # -- the sweeps ----------------------------------------------------------------------------
    def time(self, specs: list, group: CardGroup, skip_spills: bool = False) -> Iterator[tuple[Any, dict]]:
        """Compile and time every spec once on the group's GPUs; (spec, record) as each finishes.
        With skip_spills, a kernel that spills registers is recorded untimed (as a tune does).

        Every compile is submitted at once; a timing goes to one GPU worker when it is free, the
        next run whose cubin is ready first. A run whose worker is lost goes back in the queue for
        the next free worker, up to `allowed_failures` times; then its row says it was lost."""
        compile_on = self._compile_resources()
        cubins = {id(spec): self.client.submit(_compile, spec, group.arch, pure=False, resources=compile_on)
                  if _needs_compile(spec, group.arch) else None for spec in specs}
        waiting = deque(specs)
        losses = {id(spec): 0 for spec in specs}
        busy: dict = {}  # future -> (spec, the worker it was given to)

        def fill(alive: list[str]) -> None:
            taken = {address for _, address in busy.values()}
            for address in alive:
                if not waiting:
                    return
                if address not in taken:
                    spec = next((s for s in waiting if cubins[id(s)] is None or cubins[id(s)].done()), waiting[0])
                    waiting.remove(spec)
                    future = self.client.submit(_time, spec, cubins[id(spec)], self.options, self.factory,
                                                skip_spills, pure=False, workers=[address], resources={GPU: 1})
                    busy[future] = (spec, address)

        started = time.monotonic()
        while busy or waiting:
            alive = self._gpu_workers(group)
            if alive:
                started = time.monotonic()
            elif time.monotonic() - started > WORKER_WAIT_S:
                raise GpulabError(f"every GPU worker of {group.device.name} was lost and none came back in "
                                  f"{WORKER_WAIT_S:g} s; the rows timed so far are saved, re-running resumes")
            fill(alive)
            done = _first_done(list(busy))
            for future, (spec, address) in list(busy.items()):
                if future in done:
                    record = self._record(future, spec, group)
                elif address not in alive:  # the worker died with the run in it
                    future.cancel()
                    losses[id(spec)] += 1
                    if losses[id(spec)] <= self.allowed_failures:
                        waiting.appendleft(spec)
                        del busy[future]
                        continue
                    reason = f"{LOST} its worker died each of the {losses[id(spec)]} times it ran"
                    group.unfinished.append(Unfinished(spec.label, reason))
                    record = spec.base_record() | {"skip_reason": reason} | group.env
                else:
                    continue
                del busy[future]
                cubins.pop(id(spec), None)
                yield spec, record

    def _gpu_workers(self, group: CardGroup) -> list[str]:
        """The group's GPU workers alive now (of the cluster's one card model: any, replacements too)."""
        alive = [a for a, w in self._workers().items() if w.get("resources", {}).get(GPU)]
        return alive if group.only else [a for a in alive if a in group.addresses]

    def execute(self, group: CardGroup, specs: list, progress: Progress = QUIET, save=None) -> list[dict]:
        """The records of `specs` in their order, timed on the group's GPUs: a bench's sweep step on a
        cluster. After each run (in the order they finish): progress.started(label),
        progress.finished(record) and save(the records so far), so that a stopped sweep keeps them."""
        progress.planned(len(specs))
        order = {id(s): i for i, s in enumerate(specs)}
        done: list[tuple[int, dict]] = []
        for spec, record in self.time(specs, group):
            progress.started(spec.label)
            done.append((order[id(spec)], record))
            progress.finished(record)
            if save is not None:
                save([r for _, r in done])
        return [r for _, r in sorted(done, key=lambda x: x[0])]

    def compile_records(self, specs: list, arch: str) -> list[dict]:
        """Compile-only (no GPU): every spec's compile record, compiled on the compile workers."""
        compile_on = self._compile_resources()
        futures = [self.client.submit(_compile_record, s, arch, pure=False, resources=compile_on) for s in specs]
        return self.client.gather(futures)

    def _record(self, future, spec, group: CardGroup) -> dict:
        from distributed import KilledWorker

        try:
            return future.result()
        except KilledWorker:  # the scheduler's own count of lost workers (its allowed-failures) ran out
            reason = f"{LOST} its worker died each time it ran"
            group.unfinished.append(Unfinished(spec.label, reason))
        except GpulabError as exc:  # a kernel that did not compile
            reason = str(exc)
        return spec.base_record() | {"skip_reason": reason} | group.env

    def close(self) -> None:
        self.client.close()
        if self._own is not None:
            self._own.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _first_done(futures: list, poll_s: float = 0.5) -> set:
    """The futures done within `poll_s` (at least one, unless none is done by then)."""
    from distributed import wait

    if not futures:
        time.sleep(poll_s)
        return set()
    try:
        return wait(futures, timeout=poll_s, return_when="FIRST_COMPLETED").done
    except TimeoutError:
        return set()


def _configure(dask) -> None:
    """Settings of a cluster this process starts: its GPU workers start the lab's own worker
    process (gpulab.run.worker), which a daemonic process may not."""
    dask.config.set({"distributed.worker.daemon": False})


def _nanny_spec(distributed, resources: dict, env: dict) -> dict:
    return {"cls": distributed.Nanny, "options": {"nthreads": 1, "resources": resources, "env": env}}


def _needs_compile(spec, arch: str) -> bool:

    return spec.variant is not None and constraint_reason(spec, arch) is None


# -- what runs on the workers ------------------------------------------------------------------
_LABS: dict = {}  # this worker process's labs, by (factory, options): opened once, reused


def _lab_here(options, factory):
    key = (factory, repr(options))
    lab = _LABS.get(key)
    if lab is None:
        if os.environ.get("GPULAB_IN_PROCESS", "") not in ("", "0"):
            lab = factory(options)
        elif multiprocessing.current_process().daemon:
            raise GpulabError("this Dask worker cannot start the lab's own process (a daemonic process may "
                              "not have children): start it with DASK_DISTRIBUTED__WORKER__DAEMON=False")
        else:
            lab = IsolatedLab(options, factory)
        _LABS[key] = lab
    return lab


def _describe(options, factory) -> tuple:
    lab = _lab_here(options, factory)
    return lab.device, lab.arch, lab.env


def _preflight(specs, options, factory) -> None:
    _lab_here(options, factory).preflight(specs)


def _compile(spec, arch: str):
    return CachedCubin.of(compile_spec(spec, arch))


def _compile_record(spec, arch: str) -> dict:

    return compile_record(spec, arch) | {"host": socket.gethostname()}


def _time(spec, cubin, options, factory, skip_spills: bool) -> dict:
    """One run on this worker's GPU. A fault in an in-process lab (GPULAB_IN_PROCESS) leaves this
    process's CUDA context unusable: the row says so and the process ends, for its nanny to restart."""
    if cubin is not None:
        cubin.install()
    lab = _lab_here(options, factory)
    if cubin is not None and skip_spills:
        resources = compile_spec(spec, lab.arch).resources  # found in the cache just filled
        if resources.spill_stores_bytes:
            return (spec.base_record() | resources.as_record()
                    | {"skip_reason": "spills registers to local memory"} | lab.env)
    try:
        return lab.execute(spec)  # an IsolatedLab returns a fault as the run's marked row
    except DeviceFault as exc:
        _LABS.clear()
        _exit_soon()
        return spec.base_record() | {"skip_reason": f"{FAULTED}{exc.error}"} | lab.env
    except GpulabError as exc:
        return spec.base_record() | {"skip_reason": str(exc)} | lab.env


def _exit_soon() -> None:
    """End this worker process a moment after its last result has gone back."""
    threading.Timer(2.0, os._exit, args=(3,)).start()


# -- tune and bench on a cluster (gpulab tune/bench --workers, --scheduler) --------------------------
def open_cluster(workers: int | None, scheduler: str | None, options: Any) -> Cluster:
    """The cluster the options ask for: joined at `scheduler`, or started here with `workers`."""
    if workers is not None and scheduler:
        raise GpulabError("give workers (a cluster on this machine) or scheduler (one running), not both")
    if workers is not None and workers < 1:
        raise GpulabError("workers must be at least 1 (the processes that compile)")
    if scheduler:
        return Cluster.connect(scheduler, options)

    require_dask()
    gpus = visible_gpus()
    if not gpus:
        raise GpulabError("workers times on this machine's GPUs, and it has none; for GPU workers "
                          "elsewhere, give scheduler a running cluster's address")
    return Cluster.local(workers, gpus, options)
