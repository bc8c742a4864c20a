"""gpulab.gpu.occupancy against the driver's own occupancy calculator, for every variant's default
config on this card: the number `gpulab run` prints without a GPU must be the one the card gives.
gpulab.run.ncu_child.occupancy asks the driver and computes its own beside it."""

import pytest

from gpulab.experiments import all_experiments
from gpulab.run.lab import Lab, RunSpec, compile_spec
from gpulab.run.ncu_child import occupancy

pytestmark = pytest.mark.gpu


def _cases():
    for exp in all_experiments():
        shape = exp.shape(*exp.default_shapes[0])
        for v in exp.variants:
            yield pytest.param(exp, v, shape, id=f"{exp.name}-{v.name}")


@pytest.mark.parametrize("exp, variant, shape", list(_cases()))
def test_blocks_per_sm_match_the_driver(exp, variant, shape):
    lab = Lab()
    device = lab.device
    if reason := variant.arch_reason(device.arch):
        pytest.skip(reason)
    params = variant.default_params()
    compiled = compile_spec(RunSpec(exp, variant, params, shape), device.arch)
    got = occupancy(lab, compiled, variant.launch(params, shape))
    assert got["computed_blocks_per_sm"] == got["blocks_per_sm"], (got, compiled.resources)
