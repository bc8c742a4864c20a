"""The worker protocol (gpulab.run.worker) with a stand-in lab, no GPU: a run that kills its process, a
run that never ends, a run whose kernel faults, results in order, the worker reused while healthy
and replaced after each failure. The stand-in is built in the worker by name, as the real Lab is."""

import os
import time

import pytest

from gpulab.errors import DeviceFault, GpulabError, NoGpuError
from gpulab.experiments import get_experiment
from gpulab.experiments.base import Launch, Variant
from gpulab.run.worker import IsolatedLab, LabWorker, WorkerCrash, WorkerFault, WorkerTimeout, unfinished_line

# CuPy's own text for error 700 (str(cupy.cuda.runtime.CUDARuntimeError(700))).
ILLEGAL_ADDRESS = "cudaErrorIllegalAddress: an illegal memory access was encountered"


class Spec:
    """A stand-in RunSpec: what the lab does with it is in `action`."""

    def __init__(self, name: str, action: str = "ok"):
        self.name, self.action = name, action

    @property
    def label(self) -> str:
        return f"standin {self.name}"

    def base_record(self) -> dict:
        return {"experiment": "standin", "variant": self.name}


class StandInLab:
    """The Lab's surface, with runs that misbehave as asked."""

    def __init__(self, options):
        self.device, self.arch, self.env = "stand-in device", "sm_00", {"gpu": "stand-in", "pid": os.getpid()}
        self.poisoned = False

    def healthy(self) -> bool:
        return not self.poisoned

    def preflight(self, specs) -> None:
        if any(s.action == "too big" for s in specs):
            raise GpulabError("standin too big needs 9 GiB; choose a smaller shape")

    def describe(self, spec) -> tuple:
        return spec.label, spec.variant.file, type(spec.experiment).__name__

    def execute(self, spec) -> dict:
        if spec.action == "die":
            os._exit(7)  # the process vanishes mid-run, as a driver crash would end it
        if spec.action == "hang":
            while True:
                time.sleep(1)
        if spec.action == "fault":
            raise DeviceFault(f"{spec.label} faulted on the device: {ILLEGAL_ADDRESS}.", ILLEGAL_ADDRESS)
        if spec.action == "poison":  # an error other than DeviceFault that left the context broken
            self.poisoned = True
            raise RuntimeError("cudaErrorLaunchFailure: unspecified launch failure")
        if spec.action == "bug":
            raise KeyError("no such column")
        if spec.action == "refuse":
            raise GpulabError("launch failed (grid (0, 1, 1))")
        return spec.base_record() | {"time_ms": 1.0, "pid": os.getpid()} | self.env


def make_standin(options):
    return StandInLab(options)


@pytest.fixture
def lab():
    with IsolatedLab(None, factory=make_standin, timeout_s=3.0) as lab:
        yield lab


def test_rows_in_order_worker_reused_while_healthy(lab):
    rows = [lab.execute(Spec(f"v{i}")) for i in range(4)]
    assert [r["variant"] for r in rows] == ["v0", "v1", "v2", "v3"]
    assert len({r["pid"] for r in rows}) == 1 and lab.worker.starts == 1
    assert lab.env["gpu"] == "stand-in" and lab.arch == "sm_00"
    assert unfinished_line(lab) is None


def test_a_worker_that_dies_mid_run_costs_only_that_row(lab):
    rows = [lab.execute(Spec("a")), lab.execute(Spec("dies", "die")), lab.execute(Spec("b"))]
    assert [r["variant"] for r in rows] == ["a", "dies", "b"]
    assert rows[1]["skip_reason"].startswith("faulted: the worker process died")
    assert "exit code 7" in rows[1]["skip_reason"]
    assert rows[1]["gpu"] == "stand-in" and "time_ms" not in rows[1]
    assert rows[0]["pid"] != rows[2]["pid"] and lab.worker.starts == 2  # replaced
    assert [u.label for u in lab.unfinished] == ["standin dies"]


def test_a_run_that_never_ends_times_out_and_the_worker_is_replaced(lab):
    start = time.monotonic()
    rows = [lab.execute(Spec("hangs", "hang")), lab.execute(Spec("after"))]
    assert time.monotonic() - start < 60
    assert rows[0]["skip_reason"].startswith("timed out after 3 s")
    assert rows[1]["time_ms"] == 1.0 and lab.worker.starts == 2
    line = unfinished_line(lab)
    assert line.startswith("1 run(s) did not finish") and "standin hangs: timed out" in line


def test_a_device_fault_is_recorded_with_the_cuda_error_alone(lab):
    first = lab.execute(Spec("before"))
    rows = [lab.execute(Spec("faults", "fault")), lab.execute(Spec("after"))]
    assert rows[0]["skip_reason"] == f"faulted: {ILLEGAL_ADDRESS}"
    assert rows[1]["pid"] != first["pid"]  # the poisoned worker was not reused


def test_any_error_that_leaves_the_context_broken_is_a_fault(lab):
    row = lab.execute(Spec("poisons", "poison"))
    assert row["skip_reason"] == "faulted: RuntimeError: cudaErrorLaunchFailure: unspecified launch failure"
    assert lab.execute(Spec("after"))["time_ms"] == 1.0


def test_the_labs_own_errors_come_back_raised_and_the_worker_stays(lab):
    pid = lab.execute(Spec("a"))["pid"]
    with pytest.raises(GpulabError, match="launch failed"):
        lab.execute(Spec("refused", "refuse"))
    with pytest.raises(GpulabError, match="choose a smaller shape"):
        lab.preflight([Spec("x"), Spec("big", "too big")])
    assert lab.execute(Spec("b"))["pid"] == pid and lab.unfinished == []


def test_a_bug_in_the_worker_comes_back_with_its_traceback(lab):
    with pytest.raises(WorkerCrash, match="KeyError: 'no such column'") as info:
        lab.execute(Spec("buggy", "bug"))
    assert "Traceback" in str(info.value) and "execute" in str(info.value)


def test_a_lab_that_cannot_start_raises_its_own_error():
    with pytest.raises(NoGpuError, match="no NVIDIA GPU"):
        IsolatedLab(None, factory=_no_gpu, timeout_s=3.0)


def _no_gpu(options):
    raise NoGpuError("no NVIDIA GPU: stand-in")


def test_worker_call_raises_and_restarts():
    with LabWorker(None, factory=make_standin) as worker:
        with pytest.raises(WorkerTimeout):
            worker.call("execute", Spec("hangs", "hang"), timeout_s=1.0)
        assert not worker.alive
        with pytest.raises(WorkerFault, match="exit code 7"):
            worker.call("execute", Spec("dies", "die"))
        assert worker.call("execute", Spec("ok"))["time_ms"] == 1.0 and worker.starts == 3


def test_device_pins_the_worker_through_cuda_visible_devices():
    with LabWorker(None, factory=_visible_devices, device=3) as worker:
        assert worker.start()["env"] == {"CUDA_VISIBLE_DEVICES": "3"}


class _Visible(StandInLab):
    def __init__(self, options):
        super().__init__(options)
        self.env = {"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES")}


def _visible_devices(options):
    return _Visible(options)


def test_run_timeout_from_the_environment(monkeypatch):
    from gpulab.run.worker import RUN_TIMEOUT_S, run_timeout_s

    monkeypatch.delenv("GPULAB_RUN_TIMEOUT", raising=False)
    assert run_timeout_s() == RUN_TIMEOUT_S
    monkeypatch.setenv("GPULAB_RUN_TIMEOUT", "45")
    assert run_timeout_s() == 45.0
    monkeypatch.setenv("GPULAB_RUN_TIMEOUT", "soon")
    with pytest.raises(GpulabError, match="GPULAB_RUN_TIMEOUT"):
        run_timeout_s()


def test_runspecs_cross_into_the_worker_by_reference():
    import pickle

    from gpulab.run.lab import plan

    exp = get_experiment("sgemm")
    specs = plan(exp, ["v1", "v9"], {}, [exp.shape(129, 67, 33)])
    back = pickle.loads(pickle.dumps(specs))
    assert [s.label for s in back] == [s.label for s in specs]
    assert all(b.experiment is exp for b in back)
    assert back[0].variant is exp.variant("v1") and back[-1].library == "cublas"


def test_the_table_marks_an_unfinished_run_as_a_failure_not_a_skip():
    from rich.console import Console

    from gpulab.report.tables import bench_table

    rows = [{"experiment": "sgemm", "variant": "v1", "params": "", "shape": "64x64x64",
             "skip_reason": f"faulted: {ILLEGAL_ADDRESS}"},
            {"experiment": "sgemm", "variant": "nosync", "params": "", "shape": "64x64x64", "expected_wrong": True,
             "skip_reason": "timed out after 3 s (execute did not finish; the worker was replaced)"}]
    console = Console(record=True, width=300)
    console.print(bench_table(rows, "t"))
    text = console.export_text()
    assert f"faulted: {ILLEGAL_ADDRESS}" in text and "timed out after 3 s" in text
    assert "skipped" not in text and "expected wrong" not in text


def test_the_cli_ends_a_sweep_with_unfinished_runs_with_one_line_and_exit_1(capsys):
    from gpulab.cli import exit_if_unfinished
    from gpulab.run.worker import Unfinished

    class Done:
        unfinished = [Unfinished("sgemm v1 64x64x64", f"faulted: {ILLEGAL_ADDRESS}")]

    with pytest.raises(SystemExit) as info:
        exit_if_unfinished(Done())
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("1 run(s) did not finish") and ILLEGAL_ADDRESS in err
    exit_if_unfinished(object())  # an in-process Lab has no list: nothing to say


def _planted_launch(p, s):
    return Launch((1, 1, 1), (16, 16, 1))


class _PlantedSgemm(type(get_experiment("sgemm"))):
    """A stand-in experiment defined in a test module, as the GPU tests plant kernels."""

    variants = (Variant(name="planted", file="/planted/hangs.cu", summary="planted", launch=_planted_launch),)


def test_a_spec_of_an_experiment_defined_in_a_test_crosses_into_the_worker():
    from gpulab.run.lab import RunSpec

    exp = _PlantedSgemm()
    spec = RunSpec(exp, exp.variant("planted"), {}, exp.shape(17, 33, 65))
    with LabWorker(None, factory=make_standin) as worker:
        assert worker.call("describe", spec) == ("sgemm planted 17x33x65", "/planted/hangs.cu", "_PlantedSgemm")


def test_a_run_that_cannot_travel_to_the_worker_says_so(lab):
    from gpulab.run.lab import RunSpec

    exp = get_experiment("sgemm")
    stray = Variant(name="stray", file="/x.cu", summary="not among sgemm's variants", launch=lambda p, s: None)
    with pytest.raises(GpulabError, match="cannot be sent to the lab's worker process.*GPULAB_IN_PROCESS=1"):
        lab.execute(RunSpec(exp, stray, {}, exp.shape(1, 1, 1)))
    assert lab.execute(Spec("after"))["time_ms"] == 1.0


# -- a caller's script without a __main__ guard ------------------------------------------------------
# The README's API example once lacked `if __name__ == "__main__":`; Python's spawn method runs the
# parent's main script again in every child it starts, so bench's worker (and the precompile pool)
# ran the caller's whole script once more (issue 42). The children now start without it.
SCRIPT = '''
import sys
with open("count.txt", "a") as f:
    f.write("x")
from standin import StandIn
from gpulab.run.worker import LabWorker
with LabWorker(None, StandIn) as w:
    print(w.call("hello"))
if len(sys.argv) > 1:  # the precompile pool too: two processes, the specs of one experiment
    import gpulab
    from gpulab.run import precompile
    from gpulab.run.lab import RunSpec
    precompile.processes = lambda: 2
    exp = gpulab.experiment("coalesce")
    specs = [RunSpec(exp, v, v.default_params(), exp.shape(64, 64)) for v in exp.variants]
    with precompile.precompiled(specs, "sm_90"):
        pass
'''
STAND_IN = '''
class StandIn:
    def __init__(self, options):
        self.device, self.arch, self.env = "none", "sm_00", {}

    def hello(self):
        return "hello from the worker"
'''


@pytest.mark.parametrize("how", [["script.py"], ["script.py", "pool"], ["-m", "script"]])
def test_the_worker_does_not_run_the_callers_script_again(tmp_path, how):
    import subprocess
    import sys

    (tmp_path / "script.py").write_text(SCRIPT)
    (tmp_path / "standin.py").write_text(STAND_IN)
    r = subprocess.run([sys.executable, *how], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                       env={**os.environ, "GPULAB_NO_GPU": "1"})
    assert r.returncode == 0 and "hello from the worker" in r.stdout, r.stdout + r.stderr
    assert (tmp_path / "count.txt").read_text() == "x"  # the script's top level ran once: here
