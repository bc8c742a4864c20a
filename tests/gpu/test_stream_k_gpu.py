"""sgemm v12 (stream-K on a persistent grid) on a real GPU: correct (random and exact, NaN-poisoned
output) on ragged, tiny and square shapes at its default and at configs that reach each schedule:
SK_ROUNDS=0 (thin slices of the remainder tiles), 99 (all stream-K), MINB=1 (another grid);
shapes whose tiles are split over several blocks (1024^3: 128 tiles over 264 blocks; 128 x 128 x 4096:
2 tiles over 264 blocks, each a few k tiles), K shorter than one block's share (1000 x 3000 x 777),
K % BK != 0, N % 4 != 0, matrices smaller than one tile, fewer iterations than SM slots. The same
bits on every launch; the flags left at zero, so a launcher runs any number of times."""

from __future__ import annotations

import numpy as np
import pytest

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.gpu.launch import load
from gpulab.lab import RunSpec, compile_spec

V12 = SGEMM.variant("v12")
CONFIGS = [(V12, V12.default_params() | c) for c in
           ({}, {"SK_ROUNDS": 0}, {"SK_ROUNDS": 99}, {"MINB": 1},
            {"BN": 256, "WM": 64, "BK": 8, "SK_ROUNDS": 99})]
SHAPES = [(1, 1, 1), (17, 33, 65), (64, 128, 16), (65, 129, 17), (128, 128, 4096), (1000, 1531, 777),
          (1000, 3000, 777), (1024, 1024, 1024), (2048, 2048, 520), (4097, 4097, 4097), (1531, 3, 1029)]


def _id(item):
    variant, params = item
    return f"{variant.name}-{variant.params_label(params).replace(' ', '-')}"


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("config", CONFIGS, ids=_id)
def test_correct(lab, config, shape, exact):
    variant, params = config
    spec = RunSpec(SGEMM, variant, params, SGEMM.shape(*shape))
    assert variant.constraints(params, spec.shape) is None
    result = lab.verify(spec, exact=exact)
    assert result.ok, f"{spec.label}: {result.describe()}"


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(128, 128, 4096), (1000, 3000, 777), (1024, 1024, 1024)], ids=str)
@pytest.mark.parametrize("config", CONFIGS[:3], ids=_id)
def test_same_bits_every_launch_and_flags_left_zero(lab, config, shape):
    import cupy

    variant, params = config
    spec = RunSpec(SGEMM, variant, params, SGEMM.shape(*shape))
    inputs = lab.device_inputs(spec, exact=False, seed=5)
    out = SGEMM.output(spec.shape, cupy)
    outs = []
    once = lab.launcher(spec, inputs, out)  # one workspace, launched three times: flags must reset
    for _ in range(3):
        out.fill(cupy.nan)
        once()
        outs.append(cupy.asnumpy(out))
    assert not np.isnan(outs[0]).any()
    assert all(np.array_equal(outs[0].view(np.uint32), o.view(np.uint32)) for o in outs[1:])
    ref = SGEMM.reference(inputs, spec.shape, np).astype(np.float32)
    assert np.allclose(outs[2], ref, rtol=1e-3, atol=1e-3 * np.sqrt(spec.shape["K"]))
    work, flags = variant.extra_args(inputs, out, spec.shape, params)  # fresh: one launch, flags back at 0
    launch = variant.launch(params, spec.shape)
    load(compile_spec(spec, lab.arch))(
        launch.grid, launch.block, (*SGEMM.kernel_args(inputs, out, spec.shape, params), work, flags),
        launch.smem_dynamic_bytes)
    cupy.cuda.Device().synchronize()
    assert int(flags.sum()) == 0
