"""The card's state through NVML (nvidia-ml-py, the `gpu` extra): the one place gpulab reads clocks,
power, temperature and the reasons the clocks are held down, and sets or resets locked clocks.

NVML is initialised once per process, and the device is the one CuPy uses, found by its PCI bus id
(NVML numbers devices its own way, not as CUDA_VISIBLE_DEVICES does). Where NVML is missing or not
permitted nothing fails: `open_device` says why in one line (`unavailable_line`, which a command
prints once) and the row's columns stay empty.

While a row is timed, `Watch` samples from a background thread every SAMPLE_INTERVAL_S, and once
when it starts and once when it stops. A thread, not samples taken between repetitions: after a
repetition's synchronization the GPU is idle, and the reasons that matter (a power cap, a thermal
slowdown) are held only while it is busy, so samples taken between repetitions would mostly see
'idle'. The thread spends its time inside NVML calls, which release the GIL, and the timed window
opens behind the hold kernel (gpulab.gpu.timing.stream_hold), so a sample that delays the host by a
few microseconds does not reach the timing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import statistics
import threading
import time
from typing import Callable, Iterable

from gpulab.errors import GpulabError
from gpulab.gpu import seam

SAMPLE_INTERVAL_S = 0.010

# The clock-event (formerly throttle) reason bits of nvml.h, nvmlClocksEventReason* and the older
# nvmlClocksThrottleReason* names: the same values under both.
REASONS = (
    (0x001, "gpu_idle"),
    (0x002, "applications_clocks_setting"),
    (0x004, "sw_power_cap"),
    (0x008, "hw_slowdown"),
    (0x010, "sync_boost"),
    (0x020, "sw_thermal_slowdown"),
    (0x040, "hw_thermal_slowdown"),
    (0x080, "hw_power_brake"),
    (0x100, "display_clock_setting"),
    (0x200, "board_limit"),
    (0x400, "reliability"),
)
KNOWN_BITS = sum(bit for bit, _ in REASONS)
# Reasons that do not slow a busy GPU: idle is the card between launches, and the applications
# clocks setting is the clocks someone chose (what --lock-clocks does on purpose).
NOT_SLOWDOWNS = frozenset(("gpu_idle", "applications_clocks_setting"))
# The slowdowns by heat or power, which flag a row: its time is the card's state as much as the kernel's.
THERMAL_OR_POWER = frozenset(("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                              "hw_power_brake"))
# The columns a timed row gets from here, empty where NVML is not there.
COLUMNS = ("sm_clock_mhz", "power_w", "temp_c", "throttle")


def decode(mask: int | None) -> tuple[str, ...]:
    """The slowdown reasons set in an NVML clock-event mask, by name, in nvml.h's order; idle and the
    applications clocks setting left out (NOT_SLOWDOWNS); a bit nvml.h did not name when this was
    written kept as 'reason_0x...'."""
    if not mask:
        return ()
    names = [name for bit, name in REASONS if mask & bit and name not in NOT_SLOWDOWNS]
    rest = mask & ~KNOWN_BITS
    names += [f"reason_{1 << b:#x}" for b in range(rest.bit_length()) if rest >> b & 1]
    return tuple(names)


def thermal_or_power(throttle: str | None) -> list[str]:
    """The heat and power slowdowns among a row's `throttle` column (space-separated names)."""
    return [name for name in str(throttle or "").split() if name in THERMAL_OR_POWER]


@dataclasses.dataclass(frozen=True)
class Sample:
    """One reading of the card; a value NVML would not give is None."""

    sm_clock_mhz: int | None
    power_w: float | None
    temp_c: int | None
    reasons: int | None


class Device:
    """An initialised NVML and the handle of one device."""

    def __init__(self, module, handle):
        self.module = module
        self.handle = handle
        # The newer name where the installed binding has it, else the older one (same call).
        self._reasons = (getattr(module, "nvmlDeviceGetCurrentClocksEventReasons", None)
                         or getattr(module, "nvmlDeviceGetCurrentClocksThrottleReasons", None))

    def _read(self, call: Callable[[], object]):
        try:
            return call()
        except Exception:  # one value this card or driver does not report: that one stays empty
            return None

    def sample(self) -> Sample:
        nv, h = self.module, self.handle
        clock = self._read(lambda: int(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)))
        power = self._read(lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0)  # milliwatts
        temp = self._read(lambda: int(nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)))
        reasons = self._read(lambda: int(self._reasons(h))) if self._reasons else None
        return Sample(clock, power, temp, reasons)

    def clock_limits(self) -> dict:
        """The memory clock now and the SM's maximum clock (MHz), where NVML gives them."""
        nv, h = self.module, self.handle
        out = {"mem_clock_mhz": self._read(lambda: int(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM))),
               "sm_clock_max_mhz": self._read(lambda: int(nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)))}
        return {k: v for k, v in out.items() if v is not None}


def _current_bus_id() -> str:
    """The PCI bus id of the device CuPy uses in this process."""
    return seam.cupy().cuda.Device().pci_bus_id


@functools.cache
def _module() -> tuple[object | None, str]:
    """NVML's binding, initialised once per process, or (None, why not)."""
    try:
        nv = seam.gpu_module("pynvml")
    except ImportError:
        return None, "NVML's Python binding is not installed (pip install nvidia-ml-py, or gpulab's [gpu] extra)"
    try:
        nv.nvmlInit()
    except Exception as exc:
        return None, f"NVML could not start ({_words(exc)})"
    return nv, ""


@functools.cache
def _open(bus_id: str) -> tuple[Device | None, str]:
    nv, reason = _module()
    if nv is None:
        return None, reason
    try:
        return Device(nv, nv.nvmlDeviceGetHandleByPciBusId(bus_id)), ""
    except Exception as exc:
        return None, f"NVML does not give the device at PCI {bus_id} ({_words(exc)})"


def _words(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def open_device() -> tuple[Device | None, str]:
    """(the device CuPy uses, '') or (None, why NVML cannot read it)."""
    try:
        bus_id = _current_bus_id()
    except Exception as exc:
        return None, f"no CUDA device to ask NVML about ({_words(exc)})"
    return _open(bus_id)


def unavailable_line() -> str:
    """'' where NVML starts; else the one line a command prints (once) to say why the card-state
    columns of its rows will be empty. Asks NVML alone (no CUDA context is made for it)."""
    nv, reason = _module()
    if nv is not None:
        return ""
    return f"no clock, power or throttle readings: {reason}; the columns {', '.join(COLUMNS)} stay empty"


def clock_limits() -> dict:
    """gpulab.gpu.nvml.Device.clock_limits of this process's device; {} without NVML."""
    device, _ = open_device()
    return device.clock_limits() if device is not None else {}


def card_columns(samples: Iterable[Sample], available: bool = True) -> dict:
    """A timed row's columns from its samples: the median SM clock (MHz) and power (W), the highest
    temperature (C), and `throttle`, every slowdown reason seen ('' if none). All None where NVML
    was not there (`available` False): the columns exist, empty."""
    samples = list(samples)
    if not available:
        return dict.fromkeys(COLUMNS)
    clocks = [s.sm_clock_mhz for s in samples if s.sm_clock_mhz is not None]
    power = [s.power_w for s in samples if s.power_w is not None]
    temps = [s.temp_c for s in samples if s.temp_c is not None]
    seen: set[str] = set()
    for s in samples:
        seen.update(decode(s.reasons))
    order = [name for _, name in REASONS]
    return {
        "sm_clock_mhz": int(round(statistics.median(clocks))) if clocks else None,
        "power_w": round(statistics.median(power), 1) if power else None,
        "temp_c": max(temps) if temps else None,
        "throttle": " ".join(sorted(seen, key=lambda n: order.index(n) if n in order else len(order))),
    }


class Watch:
    """Samples the card while a row is timed (see the module's docstring): a context manager;
    `columns()` afterwards gives the row's card_columns."""

    def __init__(self, interval_s: float = SAMPLE_INTERVAL_S):
        self.device, self.reason = open_device()
        self.interval_s = interval_s
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> "Watch":
        if self.device is not None:
            self.samples.append(self.device.sample())
            self._thread = threading.Thread(target=self._run, name="gpulab-nvml-watch", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.samples.append(self.device.sample())

    def __exit__(self, *exc) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self.samples.append(self.device.sample())

    def columns(self) -> dict:
        return card_columns(self.samples, self.device is not None)


def cool_down(least_s: float = 2.0, most_s: float = 10.0, poll_s: float = 0.25) -> float:
    """Idle until the card shows no heat or power slowdown, at least `least_s` and at most `most_s`
    seconds (bounded: a card that stays capped does not hold the command). Returns the seconds."""
    start = time.monotonic()
    time.sleep(least_s)
    device, _ = open_device()
    while device is not None and time.monotonic() - start < most_s:
        if not thermal_or_power(" ".join(decode(device.sample().reasons))):
            break
        time.sleep(poll_s)
    return time.monotonic() - start


@contextlib.contextmanager
def locked_clocks(mhz: int | None, say: Callable[[str], None]):
    """Lock the SM clock of this process's device at `mhz` (nvmlDeviceSetGpuLockedClocks) for the
    body, and reset it after, also when the body is interrupted (Ctrl-C, SIGTERM: the command line
    turns both into KeyboardInterrupt) or fails. Where NVML is missing or refuses (it needs root),
    `say` gets one line and the body runs at the card's own clocks. Yields the locked MHz or None."""
    if mhz is None:
        yield None
        return
    if mhz <= 0:
        raise GpulabError(f"--lock-clocks {mhz}: give the SM clock in MHz, e.g. --lock-clocks 1755")
    device, reason = open_device()
    if device is None:
        say(f"--lock-clocks {mhz}: {reason}; timing goes on at the card's own clocks")
        yield None
        return
    try:
        device.module.nvmlDeviceSetGpuLockedClocks(device.handle, mhz, mhz)
    except Exception as exc:
        say(f"--lock-clocks {mhz}: NVML refused ({_words(exc)}; locking clocks needs root); timing goes on at the "
            "card's own clocks")
        yield None
        return
    try:
        yield mhz
    finally:
        try:
            device.module.nvmlDeviceResetGpuLockedClocks(device.handle)
        except Exception as exc:
            say(f"could not reset the locked clocks ({_words(exc)}): run `nvidia-smi --reset-gpu-clocks` as root")
