"""Checks the GPU tests of sgemm's extra kernels share (test_skinny_gpu.py: gv, gt, sx;
test_split_schedules_gpu.py: v12 and v13): a config's test id, its correctness at a shape, and, for
the kernels that hand partial sums between blocks through a workspace and counters or flags, the
same bits on every launch and the counters back at zero after each (so a launcher may run any number
of times)."""

from __future__ import annotations

import numpy as np

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.gpu.launch import load
from gpulab.run.lab import RunSpec, compile_spec


def config_id(item) -> str:
    variant, params = item
    return f"{variant.name}-{variant.params_label(params).replace(' ', '-')}"


def assert_correct(lab, config, shape, exact: bool) -> None:
    variant, params = config
    spec = RunSpec(SGEMM, variant, params, SGEMM.shape(*shape))
    assert variant.constraints(params, spec.shape) is None
    result = lab.verify(spec, exact=exact)
    assert result.ok, f"{spec.label}: {result.describe()}"


def assert_same_bits_and_counters_reset(lab, config, shape, uses_workspace: bool = True) -> None:
    """Three launches on one workspace give the same bits, close to the reference; then (where the
    config uses its workspace) one launch on a fresh workspace leaves every counter or flag at 0."""
    import cupy

    variant, params = config
    spec = RunSpec(SGEMM, variant, params, SGEMM.shape(*shape))
    inputs = lab.device_inputs(spec, exact=False, seed=5)
    out = SGEMM.output(spec.shape, cupy)
    outs = []
    once = lab.launcher(spec, inputs, out)  # one workspace, launched three times
    for _ in range(3):
        out.fill(cupy.nan)
        once()
        outs.append(cupy.asnumpy(out))
    assert not np.isnan(outs[0]).any()
    assert all(np.array_equal(outs[0].view(np.uint32), o.view(np.uint32)) for o in outs[1:])
    ref = SGEMM.reference(inputs, spec.shape, np).astype(np.float32)
    assert np.allclose(outs[2], ref, rtol=1e-3, atol=1e-3 * np.sqrt(spec.shape["K"]))
    if uses_workspace:
        extra = variant.extra_args(inputs, out, spec.shape, params)  # fresh: (workspace, counters, ...)
        launch = variant.launch(params, spec.shape)
        load(compile_spec(spec, lab.arch))(
            launch.grid, launch.block, (*SGEMM.kernel_args(inputs, out, spec.shape, params), *extra),
            launch.smem_dynamic_bytes)
        cupy.cuda.Device().synchronize()
        assert int(extra[1].sum()) == 0
