"""The access models at the largest shapes gpulab accepts stay within a bounded memory and time:
`gpulab predict sgemm v9 --size 1048576` was killed at 24 GB (its block classes had one entry per
block, 134 million of them). Each experiment runs in a child process under an address-space limit."""

import resource
import subprocess
import sys

import pytest

LIMIT_BYTES = 3 << 30  # address space, not resident memory: numpy and its threads reserve some

# The largest shape each experiment accepts (its max_dim; coalesce and grayscale are capped by their
# 32-bit element count and 16-bit grid rows).
LARGEST = {"sgemm": (1048576, 1048576, 1048576), "coalesce": (32768, 65535), "stencil": (1073741824,),
           "grayscale": (65535, 65535)}

SCRIPT = """
import sys, time
from gpulab.experiments import get_experiment
from gpulab.model.predict import check_launch, predict

exp = get_experiment(sys.argv[1])
shape = exp.shape(*map(int, sys.argv[2:]))
for v in exp.variants:
    params = v.default_params()
    if v.access is None or v.constraints(params, shape):
        continue
    start = time.perf_counter()
    model = v.access(params, shape)
    check_launch(model, v.launch(params, shape))
    p = predict(model)
    print(v.name, round(time.perf_counter() - start, 2), p["gmem_load_requests"], flush=True)
"""


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


@pytest.mark.parametrize("experiment", sorted(LARGEST))
def test_every_model_at_the_largest_shape_fits_in_bounded_memory(experiment):
    r = subprocess.run([sys.executable, "-c", SCRIPT, experiment, *map(str, LARGEST[experiment])],
                       capture_output=True, text=True, timeout=240, preexec_fn=_limit)
    assert r.returncode == 0, r.stderr[-2000:]
    from gpulab.experiments import get_experiment

    shape = get_experiment(experiment).shape(*LARGEST[experiment])
    modelled = [v.name for v in get_experiment(experiment).variants
                if v.access is not None and not v.constraints(v.default_params(), shape)]
    assert [line.split()[0] for line in r.stdout.splitlines()] == modelled
