"""Sweeps on a Dask cluster (gpulab.run.sweep), on the CPU: a small local cluster (processes, as on a real
host) with two compile workers and two "GPU" workers whose lab is a stand-in timer, built there by
name as the real Lab is. Kernels really compile (NVRTC) on the compile workers and their cubins
travel to the GPU workers' own cache. A GPU worker killed mid-run costs only that run: retried on
another worker, or, when it kills every worker it meets, recorded as lost; every other row is kept."""

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from gpulab.jobs import tune  # noqa: E402
from gpulab.run import sweep  # noqa: E402
from gpulab.experiments import get_experiment  # noqa: E402
from gpulab.gpu.device import DeviceInfo  # noqa: E402
from gpulab.run.lab import RunSpec  # noqa: E402

SGEMM = get_experiment("sgemm")
V1 = SGEMM.variant("v1")
STANDIN = DeviceInfo("NVIDIA Stand-In", (9, 0), 132, 50 << 20, 227 << 10, 228 << 10, 65536, 2048, 140 << 30,
                     1980000, 3200000, "13.0", "13.0")
DIE_ONCE = "TILE=8 48x48x48"  # kills its worker the first time it runs
DIE_ALWAYS = "TILE=16 40x40x40"  # kills every worker it runs on


class StandInLab:
    """The Lab's surface on a "GPU" worker: a timer whose time falls with the tile, and two runs that
    kill the worker process mid-run, as a crashing driver would."""

    def __init__(self, options):
        self.device, self.arch = STANDIN, "sm_90"
        self.env = {"gpu": STANDIN.name, "host": "standin-host", "gpu_index": os.environ["CUDA_VISIBLE_DEVICES"],
                    "pid": os.getpid()}

    def preflight(self, specs) -> None:
        pass

    def execute(self, spec) -> dict:
        if spec.variant is None:  # the cuBLAS row
            return spec.base_record() | {"correct": True, "time_ms": 1.0, "gflops": 1.0} | self.env
        label = f"{V1.params_label(spec.params)} {spec.shape.label}"
        marker = Path(os.environ["STANDIN_MARKERS"]) / label.replace(" ", "_")
        if label == DIE_ALWAYS or (label == DIE_ONCE and not marker.exists()):
            marker.touch()
            os._exit(9)
        tile = spec.params["TILE"]
        return spec.base_record() | {"correct": True, "time_ms": 1.0 / tile, "gflops": 100.0 * tile} | self.env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    (root / "markers").mkdir()
    gpu_env = {"GPULAB_IN_PROCESS": "1", "GPULAB_CACHE": str(root / "gpu-cache"),
               "STANDIN_MARKERS": str(root / "markers")}
    with sweep.Cluster.local(2, ["0", "1"], None, StandInLab, allowed_failures=1, gpu_env=gpu_env) as c:
        c.root = root
        yield c


def specs(shapes, tiles=(8, 16, 32)):
    return [RunSpec(SGEMM, V1, {"TILE": t}, SGEMM.shape(*s)) for t in tiles for s in shapes]


def test_a_compile_only_sweep_runs_on_the_compile_workers(cluster):
    rows = cluster.compile_records(specs([(64, 64, 64)]), "sm_90")
    assert [r["params"] for r in rows] == ["TILE=8", "TILE=16", "TILE=32"]
    assert all(r["reg_per_thread"] > 0 and r["arch"] == "sm_90" and r["host"] for r in rows)


def test_each_run_is_timed_once_on_a_gpu_worker_and_its_cubin_travels_there(cluster):
    group, = cluster.groups()  # two workers of one card model
    assert group.device == STANDIN and sorted(c.env["gpu_index"] for c in group.cards) == ["0", "1"]
    todo = specs([(64, 64, 64), (17, 33, 65)])
    done = list(cluster.time(todo, group))
    assert sorted(s.label for s, _ in done) == sorted(s.label for s in todo)  # each once
    assert all(r["time_ms"] == 1.0 / int(r["params"][5:]) and r["gpu_index"] in ("0", "1") for _, r in done)
    # The stand-in never compiles: the cubins in the GPU workers' cache came from the compile workers.
    assert len(list((cluster.root / "gpu-cache" / "cubin").glob("*.cubin"))) == 3


def test_a_worker_killed_mid_run_costs_only_that_run_and_the_tune_resumes(cluster, tmp_path):
    group, = cluster.groups()
    shapes = [SGEMM.shape(48, 48, 48), SGEMM.shape(40, 40, 40)]
    configs = [{"TILE": t} for t in (8, 16, 32)]

    def plan():
        p = tune.TunePlan(SGEMM, V1, shapes, group, tmp_path, {"TILE": 32}, 3, configs, [])
        p.resume()
        return p

    result = tune.run_tune_on(cluster, plan())
    rows = tune.resume_rows(plan().path)
    assert len(rows) == 6  # every run has its row
    assert {r["source_sha"] for r in rows} == {plan().source_sha}  # which kernel each timed
    by_label = {f"{r['params']} {r['shape']}": r for r in rows}
    assert by_label[DIE_ONCE]["time_ms"] == 1.0 / 8  # retried on a worker that lived, and timed
    assert by_label[DIE_ALWAYS]["skip_reason"].startswith(sweep.LOST) and not by_label[DIE_ALWAYS].get("time_ms")
    assert [u.label for u in group.unfinished] == [RunSpec(SGEMM, V1, {"TILE": 16}, shapes[1]).label]
    assert result.best == {"TILE": 32}
    again = plan()
    assert len(tune.done_keys(again.rows)) == 6
    assert tune.run_tune_on(cluster, again).best == {"TILE": 32}  # resumed: nothing left to time


def test_without_dask_the_option_says_how_to_install_it(tmp_path):
    # A Python whose `distributed` import fails, as where the extra is not installed.
    (tmp_path / "distributed.py").write_text("raise ImportError('no distributed here')\n")
    env = os.environ | {"PYTHONPATH": str(tmp_path), "GPULAB_NO_GPU": "1"}
    done = subprocess.run([sys.executable, "-m", "gpulab.cli", "tune", "sgemm", "v1", "--workers", "2"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"error: workers and scheduler need Dask: {sweep.INSTALL_HINT}"]


def test_a_bench_on_the_cluster_keeps_the_order_asked_and_saves_as_it_goes(cluster):
    group, = cluster.groups()
    todo = specs([(64, 64, 64)], tiles=(32, 8, 16))
    saved = []
    rows = cluster.execute(group, todo, save=lambda done: saved.append(len(done)))
    assert [r["params"] for r in rows] == ["TILE=32", "TILE=8", "TILE=16"]
    assert saved == [1, 2, 3]  # after every run


def test_the_api_tunes_and_benches_on_a_cluster(cluster, monkeypatch, tmp_path):
    from gpulab import api

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sweep, "open_cluster", lambda workers, scheduler, options: contextlib.nullcontext(cluster))
    tuned = api.tune("sgemm", "v1", {"TILE": (8, 32)}, shapes=["64x64x64", "32x32x32"], workers=2)
    assert tuned.per_card == [tuned] and tuned.result.best == {"TILE": 32} and len(tuned) == 4
    assert tuned.path.resolve() == tmp_path / "results" / "stand-in" / "tune-sgemm-v1.csv"
    benched = api.bench("sgemm", ["v1"], ["64x64x64"], {"TILE": (8, 32)}, options=api.BenchOptions(workers=2))
    assert [(r["variant"], r["params"]) for r in benched] == [("v1", "TILE=8"), ("v1", "TILE=32"), ("cublas", "")]
    assert benched.path.resolve() == tmp_path / "results" / "stand-in" / "sgemm.csv" and benched.path.exists()


def test_the_tune_command_says_which_picks_it_kept_from_an_earlier_tune(cluster, monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from gpulab import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sweep, "open_cluster", lambda workers, scheduler, options: contextlib.nullcontext(cluster))
    folder = tmp_path / "results" / "stand-in"
    earlier = SGEMM.shape(32, 32, 32)
    tune.write_best(folder, SGEMM, V1, {"TILE": 8}, 1.0, [earlier], {},
                    {earlier.label: {"params": {"TILE": 8}, "rate": 800.0}})
    done = CliRunner().invoke(cli.app, ["tune", "sgemm", "v1", "-p", "TILE=8,32", "--shape", "64x64x64",
                                        "--workers", "2"])
    assert done.exit_code == 0, done.output
    assert "fastest at 64x64x64: TILE=32" in done.output
    assert "kept from an earlier tune: the picks at 32x32x32" in done.output
    saved = tune.load_tuned(folder)["sgemm"]["v1"]["by_shape"]
    assert saved[earlier.label]["params"] == {"TILE": 8} and saved["64x64x64"]["params"] == {"TILE": 32}


@pytest.mark.parametrize("args, message", [
    (["--workers", "0"], "error: workers must be at least 1"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "not both"),
    (["--workers", "2"], "has none; for GPU workers elsewhere, give scheduler"),
])
def test_cluster_options_that_cannot_work_get_one_line(args, message, tmp_path):
    env = os.environ | {"GPULAB_NO_GPU": "1", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-m", "gpulab.cli", "tune", "sgemm", "v1", *args],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and message in done.stderr
