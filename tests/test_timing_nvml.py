"""The card's state through NVML (gpulab.gpu.nvml), with a stand-in for the NVML module: the slowdown
reasons decoded by name, the columns a timed row gets, the sampling thread, locked clocks set and
reset (and refused), and the path where NVML is missing: one line, once, and empty columns."""

import threading
import types

import pytest

from gpulab.errors import GpulabError
from gpulab.gpu import nvml, seam

REAL_GPU_MODULE = seam.gpu_module


class NVMLError(Exception):
    pass


def stand_in(reasons: int = 0x0, name: str = "nvmlDeviceGetCurrentClocksEventReasons", lock_ok: bool = True,
             clocks=(1980,)):
    """A module shaped like pynvml's, enough for gpulab.gpu.nvml; `calls` records what was asked."""
    calls = []
    clock_iter = iter(list(clocks) * 10_000)

    def set_locked(handle, low, high):
        calls.append(("lock", low, high))
        if not lock_ok:
            raise NVMLError("Insufficient Permissions")

    module = types.SimpleNamespace(
        NVML_CLOCK_SM=1, NVML_CLOCK_MEM=2, NVML_TEMPERATURE_GPU=0,
        nvmlInit=lambda: calls.append(("init",)),
        nvmlDeviceGetHandleByPciBusId=lambda bus: calls.append(("handle", bus)) or "h",
        nvmlDeviceGetClockInfo=lambda h, which: next(clock_iter) if which == 1 else 3201,
        nvmlDeviceGetMaxClockInfo=lambda h, which: 1980,
        nvmlDeviceGetPowerUsage=lambda h: 612_500,  # milliwatts
        nvmlDeviceGetTemperature=lambda h, which: 47,
        nvmlDeviceSetGpuLockedClocks=set_locked,
        nvmlDeviceResetGpuLockedClocks=lambda h: calls.append(("reset",)),
    )
    setattr(module, name, lambda h: reasons)
    module.calls = calls
    return module


@pytest.fixture
def use(monkeypatch):
    """use(module or an exception to raise on import): NVML through the seam is that, for one test."""
    def install(module_or_error):
        def gpu_module(name):
            if name == "pynvml":
                if isinstance(module_or_error, BaseException):
                    raise module_or_error
                return module_or_error
            return REAL_GPU_MODULE(name)
        monkeypatch.setattr(seam, "gpu_module", gpu_module)
        monkeypatch.setattr(nvml, "_current_bus_id", lambda: "00000000:19:00.0")
        nvml._module.cache_clear()
        nvml._open.cache_clear()
        return module_or_error
    yield install
    nvml._module.cache_clear()
    nvml._open.cache_clear()


@pytest.mark.parametrize("mask, names", [
    (0x0, ()),
    (0x1, ()),  # idle: not a slowdown
    (0x2, ()),  # the applications clocks someone set: not a slowdown
    (0x4, ("sw_power_cap",)),
    (0x1 | 0x4 | 0x40, ("sw_power_cap", "hw_thermal_slowdown")),
    (0x8 | 0x10 | 0x20 | 0x80, ("hw_slowdown", "sync_boost", "sw_thermal_slowdown", "hw_power_brake")),
    (0x100 | 0x200, ("display_clock_setting", "board_limit")),
    (0x4 | 0x1000, ("sw_power_cap", "reason_0x1000")),  # a bit nvml.h gained later is kept, not dropped
])
def test_the_reasons_are_decoded_by_name(mask, names):
    assert nvml.decode(mask) == names


def test_only_heat_and_power_flag_a_row():
    assert nvml.thermal_or_power("sw_power_cap sync_boost") == ["sw_power_cap"]
    assert nvml.thermal_or_power("hw_slowdown hw_power_brake sw_thermal_slowdown hw_thermal_slowdown") == [
        "hw_slowdown", "hw_power_brake", "sw_thermal_slowdown", "hw_thermal_slowdown"]
    assert nvml.thermal_or_power("sync_boost display_clock_setting") == []
    assert nvml.thermal_or_power("") == [] and nvml.thermal_or_power(None) == []


def test_the_device_is_the_one_cupy_uses_by_its_bus_id(use):
    module = use(stand_in())
    device, reason = nvml.open_device()
    assert device is not None and reason == ""
    assert ("handle", "00000000:19:00.0") in module.calls
    nvml.open_device()
    assert module.calls.count(("init",)) == 1  # initialised once per process


@pytest.mark.parametrize("name", ["nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"])
def test_a_sample_reads_the_newer_or_the_older_reasons_call(use, name):
    use(stand_in(reasons=0x4 | 0x1, name=name))
    device, _ = nvml.open_device()
    sample = device.sample()
    assert sample == nvml.Sample(1980, 612.5, 47, 0x5)


def test_the_columns_of_a_timed_row():
    samples = [nvml.Sample(1980, 600.0, 45, 0x1), nvml.Sample(1755, 700.0, 52, 0x4), nvml.Sample(1800, 690.0, 50, 0x4 | 0x10),
               nvml.Sample(None, None, None, None)]  # a reading NVML would not give counts for nothing
    assert nvml.card_columns(samples) == {"sm_clock_mhz": 1800, "power_w": 690.0, "temp_c": 52,
                                          "throttle": "sw_power_cap sync_boost"}
    assert nvml.card_columns([nvml.Sample(1980, 500.0, 40, 0x1)])["throttle"] == ""  # none seen: ''


def test_watch_samples_while_the_body_runs(use):
    use(stand_in(reasons=0x4, clocks=(1755, 1980, 1980)))
    with nvml.Watch(interval_s=0.001) as watch:
        threading.Event().wait(0.05)
    assert len(watch.samples) >= 3  # one at the start, the thread's, one at the end
    cols = watch.columns()
    assert cols["sm_clock_mhz"] in (1755, 1980) and cols["throttle"] == "sw_power_cap" and cols["power_w"] == 612.5
    assert watch._thread is not None and not watch._thread.is_alive()


@pytest.mark.parametrize("error, words", [
    (ImportError("No module named 'pynvml'"), "pip install nvidia-ml-py"),
    (None, "NVML could not start"),
])
def test_without_nvml_one_line_says_so_and_the_columns_stay_empty(use, error, words):
    if error is None:  # installed, but the library is not there (a container without the driver's NVML)
        module = stand_in()
        module.nvmlInit = lambda: (_ for _ in ()).throw(NVMLError("NVML Shared Library Not Found"))
        use(module)
    else:
        use(error)
    line = nvml.unavailable_line()
    assert words in line and "\n" not in line and "stay empty" in line
    with nvml.Watch(interval_s=0.001) as watch:
        pass
    assert watch.samples == [] and watch.columns() == dict.fromkeys(nvml.COLUMNS)
    assert nvml.clock_limits() == {}


def test_the_cli_says_it_once_per_command(use, monkeypatch, capsys):
    """`gpulab ab` where NVML is missing: the one line on stderr, then the table with empty card columns."""
    from gpulab import api, cli
    from gpulab.gpu.stats import verdict
    from gpulab.jobs.ab import AbResult, specs
    from gpulab.records import Records

    use(ImportError("No module named 'pynvml'"))
    monkeypatch.setattr(cli, "probe", lambda: (object(), ""))  # as on a machine with a GPU
    exp = api.experiment("sgemm")
    a, b = specs(exp, "v1:TILE=16", "cublas", {}, exp.square(512))

    def fake_ab(*args, **kwargs):
        nvml.Watch().__enter__().__exit__()  # what the timing does: no line from here
        result = AbResult(a, b, [1.0] * 12, [0.9] * 12, verdict([0.9] * 12, 0.005), False,
                          nvml.card_columns([], available=False))
        records = Records(result.rows({"gpu": "stand-in"}))
        records.result = result
        return records

    monkeypatch.setattr(api, "ab", fake_ab)
    monkeypatch.setattr("sys.argv", ["gpulab", "ab", "sgemm", "v1:TILE=16", "cublas", "--size", "512"])
    cli.main()
    out, err = capsys.readouterr()
    assert err.count("no clock, power or throttle readings") == 1 and len(err.strip().splitlines()) == 1, err
    assert "verdict: cublas is faster than v1 TILE=16 by 10.00%" in out
    rows = fake_ab()
    assert all(r[c] is None for r in rows for c in nvml.COLUMNS)


def test_locked_clocks_are_reset_after_the_body_also_when_it_fails(use):
    module = use(stand_in())
    said = []
    with pytest.raises(KeyboardInterrupt):
        with nvml.locked_clocks(1755, said.append) as mhz:
            assert mhz == 1755
            raise KeyboardInterrupt  # Ctrl-C, or SIGTERM as the command line turns it
    assert module.calls[-2:] == [("lock", 1755, 1755), ("reset",)] and said == []


def test_locked_clocks_refused_say_one_line_and_timing_goes_on(use):
    module = use(stand_in(lock_ok=False))
    said = []
    with nvml.locked_clocks(1755, said.append) as mhz:
        assert mhz is None
    assert len(said) == 1 and "needs root" in said[0] and "timing goes on" in said[0]
    assert ("reset",) not in module.calls  # nothing was locked, nothing to reset


def test_locked_clocks_without_nvml_and_without_a_value(use):
    use(ImportError("none"))
    said = []
    with nvml.locked_clocks(1755, said.append) as mhz:
        assert mhz is None
    assert len(said) == 1 and "timing goes on" in said[0]
    with nvml.locked_clocks(None, said.append) as mhz:
        assert mhz is None and len(said) == 1
    with pytest.raises(GpulabError, match="MHz"):
        with nvml.locked_clocks(0, said.append):
            pass


def test_clock_limits_for_the_ceilings(use):
    use(stand_in())
    assert nvml.clock_limits() == {"mem_clock_mhz": 3201, "sm_clock_max_mhz": 1980}


def test_cool_down_is_bounded(use, monkeypatch):
    use(stand_in(reasons=0x40))  # a card that stays hot
    slept = []
    clock = [0.0]
    monkeypatch.setattr(nvml.time, "sleep", lambda s: (slept.append(s), clock.__setitem__(0, clock[0] + s)))
    monkeypatch.setattr(nvml.time, "monotonic", lambda: clock[0])
    assert nvml.cool_down(least_s=2.0, most_s=5.0) == pytest.approx(5.0)
    use(stand_in(reasons=0x1))  # idle, no slowdown: the least wait, no more
    clock[0] = 0.0
    assert nvml.cool_down(least_s=2.0, most_s=5.0) == pytest.approx(2.0)


# `gpulab bench --lock-clocks 1755` with a stand-in NVML device that logs what is asked of it, and a
# bench that waits: a signal arrives while it runs.
LOCKED_BENCH = """
import pathlib
import sys
import time

from gpulab import api, cli
from gpulab.gpu import nvml

log = pathlib.Path(sys.argv[1])


def note(text):
    with log.open("a") as f:
        f.write(text + "\\n")


class Module:
    nvmlDeviceSetGpuLockedClocks = staticmethod(lambda handle, low, high: note(f"lock {low} {high}"))
    nvmlDeviceResetGpuLockedClocks = staticmethod(lambda handle: note("reset"))


nvml.open_device = lambda: (nvml.Device(Module, "h"), "")
nvml.unavailable_line = lambda: ""
cli.probe = lambda: (object(), "")


def bench(*args, **kwargs):
    note("started")
    time.sleep(60)


api.bench = bench
sys.argv = ["gpulab", "bench", "sgemm", "--size", "64", "--lock-clocks", "1755"]
cli.main()
"""


@pytest.mark.parametrize("sig, code", [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_locked_clocks_are_reset_when_a_signal_stops_the_command(tmp_path, sig, code):
    import os
    import signal
    import subprocess
    import sys
    import time

    from gpulab.cli import INTERRUPTED

    log = tmp_path / "nvml.log"
    log.write_text("")
    proc = subprocess.Popen([sys.executable, "-c", LOCKED_BENCH, str(log)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, env={**os.environ},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while "started" not in log.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "started" in log.read_text(), proc.communicate(timeout=10)
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert err.strip() == INTERRUPTED
    assert log.read_text().splitlines() == ["lock 1755 1755", "started", "reset"]
