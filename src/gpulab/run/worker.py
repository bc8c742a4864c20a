"""Checks and timings in a worker process, so that a faulting or hanging kernel costs only its row.

A kernel that faults (an illegal or misaligned address, `__trap()`) leaves the CUDA context of its
process unusable, and one that never ends holds it forever. So the lab runs in a worker process
started with the *spawn* method (CUDA does not survive fork): the worker holds the Lab (the
device, the L2 flusher, the loaded kernels) and is reused while it is healthy; after a fault, a
death or a run past its time limit it is replaced, and the run's row says what happened:
"faulted: <the error>" or "timed out after N s" in skip_reason.

`LabWorker` is one process on one GPU (`device` pins it through CUDA_VISIBLE_DEVICES): a sweep over
several GPUs can hold one per GPU (a Dask worker each, say) and feed each its share of the specs.
`IsolatedLab` is what bench, run and tune use: the Lab's surface (device, arch, env, preflight,
execute) over one LabWorker, replaced as needed, with the list of runs that did not finish.

Set GPULAB_IN_PROCESS=1 to run in the calling process instead (a fault then ends the sweep), and
GPULAB_RUN_TIMEOUT to change the per-run limit (seconds; default 600).
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import pickle
import signal
import sys
import traceback
from typing import Any, Callable

from gpulab.errors import DeviceFault, GpulabError
from gpulab.run.lab import Lab
from gpulab.records import FAULTED, TIMED_OUT

RUN_TIMEOUT_S = 600.0  # one check and timing; the slowest default run takes seconds
START_TIMEOUT_S = 180.0  # a fresh worker: import CuPy, open the device


class WorkerFault(Exception):
    """The worker's run faulted on the device, or the worker died: it has been stopped."""


class WorkerTimeout(Exception):
    """The worker's run did not finish in time: it has been killed."""


class WorkerCrash(RuntimeError):
    """An unexpected exception inside the worker (a bug): carries the worker's traceback."""


def run_timeout_s() -> float:
    text = os.environ.get("GPULAB_RUN_TIMEOUT", "")
    if not text:
        return RUN_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise GpulabError(f"GPULAB_RUN_TIMEOUT={text!r} must be a number of seconds above 0, e.g. 600")
    return value


def default_lab_factory(options):
    return Lab(options)


class LabWorker:
    """One worker process holding one lab, made by `factory(options)` (a picklable callable: the
    worker imports it by name). `call(method, *args)` runs `lab.method(*args)` there and returns
    its value; the lab's own GpulabErrors come back raised as they are. A fault raises WorkerFault
    and a run past `timeout_s` WorkerTimeout; either way the process is gone, and the next call
    starts a fresh one."""

    def __init__(self, options: Any = None, factory: Callable = default_lab_factory, device: int | None = None,
                 start_timeout_s: float = START_TIMEOUT_S):
        self.options = options
        self.factory = factory
        self.device = device
        self.start_timeout_s = start_timeout_s
        self.info: dict = {}  # what the lab said when it started: device, arch, env
        self.starts = 0
        self._process = None
        self._conn = None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def start(self) -> dict:
        if self.alive:
            return self.info
        self.stop()
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._process = ctx.Process(target=_serve, args=(child, self.factory, self.options, self.device),
                                    daemon=True, name="gpulab-lab-worker")
        with callers_main_hidden(self.factory, self.options):
            self._process.start()
        child.close()
        self._conn = parent
        self.starts += 1
        try:
            self.info = self._receive(self.start_timeout_s, "starting the worker")
        except WorkerFault as exc:
            raise GpulabError(f"the lab's worker process could not start: {exc}") from None
        except WorkerTimeout as exc:
            raise GpulabError(f"the lab's worker process did not start: {exc}") from None
        return self.info

    def call(self, method: str, *args, timeout_s: float | None = None) -> Any:
        self.start()
        try:
            payload = pickle.dumps((method, args))  # first, so that a run that cannot travel says so
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            raise GpulabError(
                f"{method}: the run cannot be sent to the lab's worker process ({exc}); its experiment must be "
                "importable by name and its variant one of the experiment's own (or picklable). "
                "GPULAB_IN_PROCESS=1 runs it in this process instead") from None
        try:
            self._conn.send_bytes(payload)
        except (BrokenPipeError, OSError):
            raise self._died(method) from None
        return self._receive(timeout_s, method)

    def _receive(self, timeout_s: float | None, what: str) -> Any:
        try:
            ready = self._conn.poll(timeout_s)
        except (EOFError, OSError):
            ready = True  # the other end is gone: recv() says so below
        if not ready:
            self.stop()
            raise WorkerTimeout(f"after {timeout_s:g} s ({what} did not finish; the worker was replaced)")
        try:
            kind, value = self._conn.recv()
        except (EOFError, OSError):
            raise self._died(what) from None
        if kind == "ok":
            return value
        if kind == "fault":
            self.stop()
            raise WorkerFault(value)
        raise value  # "error": the lab's exception, or a WorkerCrash with the worker's traceback

    def _died(self, what: str) -> WorkerFault:
        self._process.join(5)
        code = self._process.exitcode
        self.stop()
        how = "no exit code" if code is None else f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        return WorkerFault(f"the worker process died during {what} ({how})")

    def stop(self) -> None:
        """End the worker now (a kill: a hung kernel does not listen), and wait until it is gone,
        so that the driver has torn its context down before a fresh one starts."""
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join()
            self._process.close()
            self._process = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def callers_main_hidden(*carried: Any):
    """Processes started inside this block (spawned) do not run the caller's main script again.

    Python's spawn method imports the parent's __main__ in every child, by its path or module name,
    so that what the parent defined there can be unpickled; a script without an `if __name__ ==
    "__main__":` guard then runs whole once more per child (a bench from the README's example ran
    it again in its worker). gpulab's children need nothing from the caller's script, so its file
    and module name are hidden while they start, unless one of `carried` (what the child is handed:
    a lab factory, its options, an experiment) is defined there."""
    main = sys.modules.get("__main__")
    if main is None or any(getattr(c, "__module__", None) == "__main__" or type(c).__module__ == "__main__"
                           for c in carried):
        yield
        return
    saved = {name: main.__dict__[name] for name in ("__file__", "__spec__") if name in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


def _serve(conn, factory: Callable, options: Any, device: int | None) -> None:
    """The worker's loop: make the lab, then run (method, args) requests until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops us
    if device is not None:  # before the first CUDA call, which reads it
        os.environ["CUDA_VISIBLE_DEVICES"] = str(device)
    try:
        lab = factory(options)
        conn.send(("ok", {"device": getattr(lab, "device", None), "arch": getattr(lab, "arch", ""),
                          "env": getattr(lab, "env", {})}))
    except BaseException as exc:
        conn.send(("error", _portable(exc)))
        return
    while True:
        try:
            method, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            value = getattr(lab, method)(*args)
        except DeviceFault as exc:
            _fault(conn, exc.error)
        except BaseException as exc:
            healthy = getattr(lab, "healthy", None)
            if healthy is not None and not healthy():  # any error that left the context unusable
                _fault(conn, f"{type(exc).__name__}: {exc}")
            conn.send(("error", _portable(exc)))
        else:
            conn.send(("ok", value))


def _fault(conn, message: str) -> None:
    conn.send(("fault", message))
    conn.close()
    os._exit(3)  # no atexit cleanup: it would call into the broken context


def _portable(exc: BaseException) -> BaseException:
    """The exception itself where it survives pickling (a GpulabError does); else a WorkerCrash
    carrying the worker's traceback."""
    if isinstance(exc, GpulabError):
        try:
            pickle.loads(pickle.dumps(exc))
            return exc
        except Exception:
            return GpulabError(str(exc))
    return WorkerCrash("in the lab's worker process:\n" + "".join(traceback.format_exception(exc)))


@dataclasses.dataclass(frozen=True)
class Unfinished:
    """A run that did not finish: its label and what happened ("faulted: ..." or "timed out ...")."""

    label: str
    reason: str


class IsolatedLab:
    """The Lab's surface for a sweep, each run inside a LabWorker: a fault or a hang becomes that
    run's row (skip_reason "faulted: ..." or "timed out ..."), the worker is replaced, and the
    sweep goes on. `unfinished` lists those runs for the summary line."""

    def __init__(self, options: Any = None, factory: Callable = default_lab_factory, device: int | None = None,
                 timeout_s: float | None = None):
        self.options = options
        self.timeout_s = run_timeout_s() if timeout_s is None else timeout_s
        self.worker = LabWorker(options, factory, device)
        self.unfinished: list[Unfinished] = []
        info = self.worker.start()
        self.device = info["device"]
        self.arch = info["arch"]
        self.env = info["env"]

    def preflight(self, specs: list) -> None:
        self.worker.call("preflight", specs, timeout_s=self.timeout_s)

    def execute(self, spec) -> dict:
        try:
            return self.worker.call("execute", spec, timeout_s=self.timeout_s)
        except WorkerFault as exc:
            reason = f"{FAULTED}{exc}"
        except WorkerTimeout as exc:
            reason = f"{TIMED_OUT} {exc}"
        self.unfinished.append(Unfinished(spec.label, reason))
        return spec.base_record() | {"skip_reason": reason} | self.env

    def close(self) -> None:
        self.worker.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_lab(options: Any = None):
    """The lab a sweep uses: an IsolatedLab, or the plain in-process Lab under GPULAB_IN_PROCESS=1."""
    if os.environ.get("GPULAB_IN_PROCESS", "") not in ("", "0"):
        return default_lab_factory(options)
    return IsolatedLab(options)


def unfinished_line(lab) -> str | None:
    """One line naming the runs that faulted or timed out, or None when every run finished."""
    runs = getattr(lab, "unfinished", [])
    if not runs:
        return None
    shown = "; ".join(f"{u.label}: {u.reason}" for u in runs[:3])
    more = f"; and {len(runs) - 3} more" if len(runs) > 3 else ""
    return f"{len(runs)} run(s) did not finish, their rows are marked: {shown}{more}"
