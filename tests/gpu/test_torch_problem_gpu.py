"""The softmax example (examples/softmax/softmax.py), a problem written in PyTorch, on the GPU:
every kernel correct at its test shapes against torch, torch's own row beside them in a bench,
and the inputs reaching the kernels without a copy."""

from pathlib import Path

import numpy as np
import pytest

import gpulab

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")
PROBLEM = Path(__file__).resolve().parents[2] / "examples" / "softmax" / "softmax.py"


@pytest.fixture(scope="module")
def softmax():
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device here")
    return gpulab.load_problem(PROBLEM)


def test_every_kernel_is_correct_at_every_test_shape(softmax):
    rows = gpulab.verify("softmax")
    checked = [r for r in rows if not r.get("skip_reason")]
    assert checked and all(r["correct"] for r in checked), [r for r in checked if not r["correct"]]
    assert {r["variant"] for r in checked} == {"naive", "online", "cached"}


def test_a_bench_puts_torchs_row_beside_the_kernels(softmax, tmp_path, results_root):
    rows = gpulab.bench("softmax", shapes=["4096x1024"], options=gpulab.BenchOptions(out=tmp_path / "s.csv"))
    by_name = {r["variant"]: r for r in rows}
    assert set(by_name) >= {"naive", "online", "cached", "torch"}
    assert all(r["correct"] and r["time_ms"] > 0 for r in by_name.values()), rows
    assert by_name["cached"]["gbps"] > 0 and by_name["torch"]["gbps"] > 0


def test_inputs_reach_the_kernels_without_a_copy(softmax):
    shape = softmax.shape(64, 128)
    inputs = softmax.make_inputs(shape, np.random.default_rng(0), False)
    x = inputs["x"]
    assert torch.from_dlpack(x).data_ptr() == x.data.ptr  # one buffer, seen by torch and by CuPy
