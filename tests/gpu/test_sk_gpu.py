"""sgemm's sk (sliced-K small tiles) and gpulab's best row on a real GPU: every config the best row
may fall back to, and others, correct on ragged, skinny and vector-like shapes (random and exact,
NaN-poisoned output); the in-block reduction gives the same bits on every run; the best row is
checked and timed like every other row."""

from __future__ import annotations

import numpy as np
import pytest

from gpulab.jobs import bench as bench_job
from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.splitk import SK_DEFAULTS
from gpulab.run.lab import RunSpec

SK = SGEMM.variant("sk")
CONFIGS = [SK.default_params(), *SK_DEFAULTS.values(),
           {"BM": 64, "BN": 64, "BK": 16, "TM": 4, "TN": 4, "KS": 1, "MINB": 1},  # no reduction: the direct store
           {"BM": 8, "BN": 128, "BK": 32, "TM": 2, "TN": 4, "KS": 4, "MINB": 1},  # 512 threads: 128 registers each
           {"BM": 2, "BN": 16, "BK": 128, "TM": 1, "TN": 1, "KS": 32, "MINB": 1}]  # 32 groups: 1024 threads
SHAPES = [(1, 1, 1), (17, 33, 65), (1000, 1531, 777), (1, 1531, 777), (1531, 3, 1029), (4097, 63, 4099),
          (63, 4097, 4099), (1, 8193, 4097), (2, 5, 9000)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("params", CONFIGS, ids=lambda p: SK.params_label(p).replace(" ", "-"))
def test_sk_correct(lab, params, shape, exact):
    spec = RunSpec(SGEMM, SK, params, SGEMM.shape(*shape))
    assert SK.constraints(params, spec.shape) is None
    result = lab.verify(spec, exact=exact)
    assert result.ok, f"{spec.label}: {result.describe()}"


@pytest.mark.parametrize("params", CONFIGS[:3], ids=lambda p: SK.params_label(p).replace(" ", "-"))
def test_sk_gives_the_same_bits_every_run(lab, params):
    import cupy

    spec = RunSpec(SGEMM, SK, params, SGEMM.shape(300, 64, 8191))
    inputs = lab.device_inputs(spec, exact=False, seed=5)
    outs = []
    for _ in range(3):
        out = SGEMM.output(spec.shape, cupy)
        lab.launcher(spec, inputs, out)()
        outs.append(cupy.asnumpy(out))
    assert not np.isnan(outs[0]).any()
    assert all(np.array_equal(outs[0].view(np.uint32), o.view(np.uint32)) for o in outs[1:])


@pytest.mark.parametrize("shape", [(1, 8192, 8192), (4096, 64, 4096), (512, 512, 512), (2048, 31, 4096)], ids=str)
def test_the_best_row_is_checked_and_timed(lab, tmp_path, shape):
    specs = bench_job.bench_plan(SGEMM, [], {}, [SGEMM.shape(*shape)], tmp_path, with_best=True)
    records = [lab.execute(s) for s in specs]
    best = next(r for r in records if r["variant"] == "best")
    assert best["correct"] is True and best["time_ms"] > 0 and best["gflops"] > 0, best
    # Which variant the model picks at a shape is a measurement (docs/results), not a test: any of
    # sgemm's own kernels, never the vendor library.
    assert best["picked"].split()[0] in {v.name for v in SGEMM.variants}
