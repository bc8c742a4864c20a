"""SGEMM on a real GPU: every variant and config correct on ragged and large shapes, random and
exact; the cuBLAS row present and correct; planted wrong kernels rejected by the checker."""

from pathlib import Path

import pytest

from gpulab.experiments import get_experiment
from gpulab.experiments.base import Launch, Variant
from gpulab.run.lab import RunSpec, derive, plan

from configs import declared_and_tuned

SGEMM = get_experiment("sgemm")
PLANTED = Path(__file__).parent / "planted"


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SGEMM.test_shapes, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("variant, params", list(declared_and_tuned(SGEMM)))
def test_variant_correct(lab, variant, params, shape, exact):
    spec = RunSpec(SGEMM, variant, params, SGEMM.shape(*shape))
    reason = variant.constraints(params, spec.shape)
    if reason:
        pytest.skip(reason)
    result = lab.verify(spec, exact=exact)
    assert result.ok, result.describe()


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(17, 33, 65), (1000, 1531, 777), (4096, 4096, 4096)], ids=str)
def test_cublas_row_correct(lab, shape):
    spec = RunSpec(SGEMM, None, {}, SGEMM.shape(*shape), library="cublas")
    result = lab.verify(spec)
    assert result.ok, result.describe()


def _planted(file: str, side: int) -> Variant:
    """A planted kernel as a variant: one thread per element of C, side x side blocks."""
    return Variant(
        name=file, file=str(PLANTED / file), summary="planted wrong kernel",
        launch=lambda p, s: Launch((-(-s["N"] // side), -(-s["M"] // side), 1), (side, side, 1)),
    )


@pytest.mark.gpu
@pytest.mark.parametrize("file, side, what", [
    ("writes_nothing.cu", 16, "never written"),
    ("off_by_one.cu", 16, "wrong elements"),
    ("missing_barrier.cu", 32, "wrong elements"),
])
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
def test_planted_wrong_kernels_are_rejected(lab, file, side, what, exact):
    spec = RunSpec(SGEMM, _planted(file, side), {}, SGEMM.shape(1000, 1531, 777))
    result = lab.verify(spec, exact=exact)
    assert not result.ok
    assert what in result.describe()
    assert result.first_wrong is not None


@pytest.mark.gpu
def test_bench_records_have_rates_and_cublas_ratio(lab):
    specs = plan(SGEMM, ["v1"], {"TILE": (16,)}, [SGEMM.square(256)])
    records = derive([lab.execute(s) for s in specs], SGEMM.baseline)
    by_variant = {r["variant"]: r for r in records}
    assert set(by_variant) == {"v1", "cublas"}
    v1 = by_variant["v1"]
    assert v1["correct"] is True and v1["time_ms"] > 0 and v1["reps"] >= 5
    assert v1["gflops"] == pytest.approx(2 * 256**3 / (v1["time_ms"] / 1e3) / 1e9)
    assert 0 < v1["pct_of_cublas"] < 1000
    assert by_variant["cublas"]["pct_of_cublas"] == pytest.approx(100.0)
    assert v1["gpu"] and v1["driver"] and v1["date"]


@pytest.mark.gpu
def test_shape_too_big_for_the_card_is_refused_before_allocating(tmp_path):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "bench", "sgemm", "--variant", "v0",
                        "--shape", "1048576x1048576x64"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=300)
    assert r.returncode == 2 and "choose a smaller shape" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "results").exists()
