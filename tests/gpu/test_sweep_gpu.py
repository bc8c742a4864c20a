"""A sweep on a local Dask cluster over this machine's GPUs (gpulab.run.sweep): compiles on CPU workers,
timings on one pinned worker per GPU, every row correct and saying where it was timed, the best
config found the same way as a serial tune finds it (scored from the rows)."""

import socket

import pytest

pytest.importorskip("distributed")

from gpulab.jobs import tune  # noqa: E402
from gpulab.run import sweep  # noqa: E402
from gpulab.experiments import get_experiment  # noqa: E402
from gpulab.gpu.device import visible_gpus  # noqa: E402
from gpulab.gpu.timing import TimingPolicy  # noqa: E402
from gpulab.run.lab import LabOptions  # noqa: E402

pytestmark = pytest.mark.gpu
SGEMM = get_experiment("sgemm")
FAST = LabOptions(timing=TimingPolicy(warmup_ms=2.0, target_ms=5.0, min_reps=3, max_reps=10))


def test_a_tune_on_a_local_cluster_times_every_config_on_the_gpus(tmp_path):
    gpus = visible_gpus()
    v1 = SGEMM.variant("v1")
    shapes = [SGEMM.shape(256, 256, 256), SGEMM.shape(129, 67, 33)]
    with sweep.Cluster.local(2, gpus, FAST) as cluster:
        plans = tune.plan_tunes_on(cluster, SGEMM, v1, {"TILE": (8, 16, 32)}, shapes, 10, tmp_path)
        assert len(plans) == 1 and len(plans[0].lab.cards) == len(gpus)
        plan = plans[0]
        plan.resume()
        result = tune.run_tune_on(cluster, plan)
    rows = tune.resume_rows(plan.path)
    assert len(rows) == 6 and all(r["correct"] and r["time_ms"] > 0 for r in rows)
    # visible_gpus() names GPUs as CUDA_VISIBLE_DEVICES does (strings); the CSV reads "0" back as 0
    assert all(r["host"] == socket.gethostname() and str(r["gpu_index"]) in gpus for r in rows)
    assert result.best in plan.configs and not plan.lab.unfinished
