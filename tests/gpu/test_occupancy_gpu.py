"""gpulab.gpu.occupancy against the driver's own occupancy calculator, for every variant's default
config on this card: the number `gpulab run` prints without a GPU must be the one the card gives."""

import pytest

from gpulab.experiments import all_experiments
from gpulab.lab import RunSpec, compile_spec

pytestmark = pytest.mark.gpu


def _cases():
    for exp in all_experiments():
        shape = exp.shape(*exp.default_shapes[0])
        for v in exp.variants:
            yield pytest.param(exp, v, shape, id=f"{exp.name}-{v.name}")


@pytest.mark.parametrize("exp, variant, shape", list(_cases()))
def test_blocks_per_sm_match_the_driver(exp, variant, shape):
    import cupy
    from cupy.cuda import driver

    from gpulab.gpu.device import require_gpu
    from gpulab.gpu.occupancy import card_limits, occupancy

    device = require_gpu()
    params = variant.default_params()
    compiled = compile_spec(RunSpec(exp, variant, params, shape), device.arch)
    launch = variant.launch(params, shape)
    kernel = cupy.RawModule(path=str(compiled.cubin_path)).get_function(compiled.entry)
    if launch.smem_dynamic_bytes > 48 * 1024:
        kernel.max_dynamic_shared_size_bytes = launch.smem_dynamic_bytes
    theirs = driver.occupancyMaxActiveBlocksPerMultiprocessor(
        kernel.kernel.ptr, launch.threads_per_block, launch.smem_dynamic_bytes)
    ours = occupancy(launch.threads_per_block, compiled.resources.registers,
                     compiled.resources.smem_static_bytes + launch.smem_dynamic_bytes,
                     card_limits(device, cupy.cuda.Device().attributes))
    assert ours.blocks_per_sm == theirs, (ours.limits, compiled.resources)
