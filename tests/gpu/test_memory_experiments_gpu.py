"""coalesce, stencil and grayscale on a real GPU, and the ceilings.

Every variant is correct at its test shapes (odd ones included), in random and (stencil) exact
mode; the `nosync` demonstration is timed, its wrong count recorded, its row marked as an expected
failure and never passed; planted wrong kernels are caught, the uint8 one only by the two-poison
check; the ceilings are measured, proven FP32/TF32 by their error, and leave CuPy in FP32.
"""

from pathlib import Path

import numpy as np
import pytest

from gpulab.jobs import ceilings as measuring
from gpulab.records import ceilings as table
from gpulab.experiments import get_experiment
from gpulab.experiments.base import Launch, Variant
from gpulab.run.lab import RunSpec, derive, plan

COALESCE = get_experiment("coalesce")
STENCIL = get_experiment("stencil")
GRAYSCALE = get_experiment("grayscale")
PLANTED = Path(__file__).parent / "planted"

pytestmark = pytest.mark.gpu


def _cases():
    for exp in (COALESCE, STENCIL, GRAYSCALE):
        modes = (False, True) if exp is STENCIL else (False,)
        for v in exp.variants:
            if v.expected_wrong:
                continue
            for params in v.param_grid(dict(v.sweep)):
                for dims in exp.test_shapes:
                    for exact in modes:
                        label = "-".join([exp.name, v.name, v.params_label(params).replace(" ", "-"),
                                          "x".join(map(str, dims)), "exact" if exact else "random"])
                        yield pytest.param(exp, v, params, dims, exact, id=label.replace("--", "-"))


@pytest.mark.parametrize("exp, variant, params, dims, exact", list(_cases()))
def test_variant_correct(lab, exp, variant, params, dims, exact):
    spec = RunSpec(exp, variant, params, exp.shape(*dims))
    reason = variant.constraints(params, spec.shape)
    assert reason is None, reason  # every variant accepts every test shape, odd widths included
    result = lab.verify(spec, exact=exact)
    assert result.ok, result.describe()
    assert result.wrong_count == 0


@pytest.mark.parametrize("radius", [1, 2, 31, 32])
@pytest.mark.parametrize("name", ["global", "shared", "regs", "shfl"])
@pytest.mark.parametrize("n", [1, 7, 65, 1023, 1025, 100_003])
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
def test_stencil_every_radius_edge(lab, name, radius, n, exact):
    variant = STENCIL.variant(name)
    spec = RunSpec(STENCIL, variant, variant.default_params() | {"R": radius}, STENCIL.shape(n))
    result = lab.verify(spec, exact=exact)
    assert result.ok, result.describe()


@pytest.mark.parametrize("radius", [1, 3, 4, 5, 8, 17, 32])
@pytest.mark.parametrize("per", [8, 16])
@pytest.mark.parametrize("hint", [0, 1])
@pytest.mark.parametrize("n", [2047, 2048, 4096 + 3, 100_003, (1 << 20) + 5])
def test_stencil_shfl_every_config(lab, radius, per, hint, n):
    # Interior blocks (no bounds checks) next to checked first and last blocks, at every PER and HINT.
    spec = RunSpec(STENCIL, STENCIL.variant("shfl"), {"R": radius, "PER": per, "HINT": hint}, STENCIL.shape(n))
    result = lab.verify(spec, exact=False)
    assert result.ok, result.describe()


@pytest.mark.parametrize("v", [1, 2, 4])
@pytest.mark.parametrize("hint", [0, 1])
@pytest.mark.parametrize("dims", [(1, 1), (3, 1), (7, 257), (1001, 333), (1024, 2), (1025, 4), (3839, 2161)])
def test_grayscale_wide_every_config(lab, v, hint, dims):
    spec = RunSpec(GRAYSCALE, GRAYSCALE.variant("wide"), {"V": v, "HINT": hint}, GRAYSCALE.shape(*dims))
    result = lab.verify(spec)
    assert result.ok, result.describe()


@pytest.mark.parametrize("radius", [3, 8])
@pytest.mark.parametrize("n", [1 << 24, 1 << 26])
def test_nosync_is_reported_never_passed(lab, radius, n, record_property):
    nosync = STENCIL.variant("nosync")
    assert nosync.expected_wrong
    record = lab.execute(RunSpec(STENCIL, nosync, {"R": radius}, STENCIL.shape(n)))
    record_property(f"nosync_R{radius}_N{n}_wrong_count", record.get("wrong_count"))
    print(f"nosync R={radius} N={n}: {record.get('wrong_count')} wrong of {n}")
    assert record["expected_wrong"] is True
    assert record["correct"] is False  # even on a run where the race happened to hide
    assert isinstance(record["wrong_count"], int) and 0 <= record["wrong_count"] <= n
    assert not record.get("skip_reason")  # timed and recorded, not skipped
    assert record["time_ms"] > 0 and record["gbps"] > 0


def test_nosync_rows_never_become_the_baseline_or_the_best(lab):
    from gpulab.report.tables import best_per_shape

    specs = plan(STENCIL, None, {"R": (3,)}, [STENCIL.shape(1 << 22)])
    records = derive([lab.execute(s) for s in specs], STENCIL.baseline)
    by = {r["variant"]: r for r in records}
    assert set(by) == {"global", "shared", "regs", "shfl", "nosync"}
    assert by["global"]["speedup_vs_baseline"] == pytest.approx(1.0)
    assert by["nosync"]["correct"] is False and by["nosync"]["expected_wrong"] is True
    assert all(b["best"].split()[0] != "nosync" for b in best_per_shape(records))


def _planted(exp, file: str, launch) -> Variant:
    return Variant(name=file, file=str(PLANTED / file), summary="planted wrong kernel", launch=launch)


def test_unwritten_gray_pixels_are_caught_by_the_two_poisons(lab):
    launch = GRAYSCALE.variant("row").launch
    spec = RunSpec(GRAYSCALE, _planted(GRAYSCALE, "gray_skips_last_column.cu", launch), {},
                   GRAYSCALE.shape(1001, 333))
    result = lab.verify(spec)
    assert not result.ok
    assert result.wrong_count == 333 and result.first_wrong == (0, 1000)
    assert "never written" in result.describe()


def test_shifted_stencil_window_is_caught(lab):
    launch = STENCIL.variant("global").launch
    spec = RunSpec(STENCIL, _planted(STENCIL, "stencil_shifted.cu", launch), {"R": 3}, STENCIL.shape(100_003))
    result = lab.verify(spec, exact=False)
    assert not result.ok and result.wrong_count > 50_000


def test_copy_missing_its_last_element_is_caught(lab):
    def launch(p, s):
        return Launch(grid=(-(-s["M"] * s["N"] // 256), 1, 1), block=(256, 1, 1))

    spec = RunSpec(COALESCE, _planted(COALESCE, "copy_skips_tail.cu", launch), {}, COALESCE.shape(333, 517))
    result = lab.verify(spec)
    assert not result.ok and result.wrong_count == 1 and result.first_wrong == (332, 516)
    assert "never written" in result.describe()


# -- records and ceilings ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ceilings(lab, tmp_path_factory):
    return measuring.ensure(lab.device, tmp_path_factory.mktemp("ceilings"), refresh=True)


def test_ceilings_measured_and_plausible(lab, ceilings):
    """What `gpulab ceilings` measures and records, stored once and reused, and the FP32 baseline
    left out of TF32 mode. The rates themselves (and how they compare: L2 above DRAM, TF32 above
    FP32, cuBLAS FP32 under the FMA rate) are measurements, recorded in results/<gpu>/ceilings.csv,
    not tests."""
    from cupy._core import _routines_linalg as linalg

    assert ceilings.measured and ceilings.path.exists()
    bf16 = set(table.tensor_names(lab.device))
    if table.tensor_instruction(lab.device) == table.WGMMA:  # the mma.sync rate too, under its own name
        bf16.add(table.TENSOR_BF16_MMA_SYNC)
    assert {r["ceiling"] for r in ceilings.rows} == set(table.names()) | {table.L2_NAME} | bf16
    again = measuring.ensure(lab.device, ceilings.path.parent)
    assert not again.measured and again.copy_gbps == pytest.approx(ceilings.copy_gbps, rel=1e-6)
    for r in ceilings.rows:
        print(f"{r['ceiling']:18s} {r.get('gbps') or r.get('gflops'):12,.0f} {'GB/s' if r.get('gbps') else 'GFLOP/s'}"
              f"  sm {r.get('sm_clock_mhz')} MHz  err {r.get('max_rel_err', '')}")
        assert r["gpu"] == lab.device.name and r["driver"] and r["date"] and r["time_ms"] > 0
    assert ceilings.copy_gbps > 0 and ceilings.fma_gflops > 0 and ceilings.l2_gbps > 0
    # the L2 read ceiling reads a buffer that fits in the L2
    assert ceilings.row(table.L2_NAME)["size_bytes"] <= lab.device.l2_bytes * measuring.L2_FRACTION
    for n in table.GEMM_SIZES:
        fp32, tf32 = ceilings.row(f"cublas_fp32_{n}"), ceilings.row(f"cublas_tf32_{n}")
        assert fp32["max_rel_err"] <= 2e-5 and fp32["tf32_visible"] is False
        assert tf32["tf32_visible"] is True and tf32["gflops"] > 0 and fp32["gflops"] > 0
    # The FP32 baseline elsewhere is not left in TF32 mode.
    assert linalg.get_compute_type(np.float32) != linalg.COMPUTE_TYPE_TF32
    sgemm = get_experiment("sgemm")
    assert lab.verify(RunSpec(sgemm, None, {}, sgemm.shape(1000, 1531, 777), library="cublas")).ok


@pytest.mark.parametrize("exp, dims", [(GRAYSCALE, (3840, 2160)), (COALESCE, (8192, 8192)), (STENCIL, (1 << 26,))],
                         ids=["grayscale", "coalesce", "stencil"])
def test_bench_records_carry_napkin_math_l2_label_and_pct_of_ceiling(lab, ceilings, exp, dims):
    variants = {"grayscale": ["column", "vec4"], "coalesce": ["cols", "rows"], "stencil": ["global", "shared", "regs"]}
    shape = exp.shape(*dims)
    specs = plan(exp, variants[exp.name], {}, [shape])
    records = table.attach(derive([lab.execute(s) for s in specs], exp.baseline), exp, ceilings)
    read, written = (4 * shape.values[0] * shape.values[1], shape.values[0] * shape.values[1]) \
        if exp is GRAYSCALE else (exp.bytes_moved(shape) // 2, exp.bytes_moved(shape) // 2)
    for r in records:
        print(f"{r['variant']:8s} {r['params'] or '':8s} {r['time_ms']:.4f} ms {r['gbps']:8.1f} GB/s "
              f"{r['pct_of_ceiling']:5.1f}% of {r['ceiling']}  x{r['speedup_vs_baseline']:.2f}")
        assert r["correct"] is True and not r.get("skip_reason")
        assert r["napkin_read_mb"] == pytest.approx(read / 1e6) and r["napkin_written_mb"] == pytest.approx(written / 1e6)
        assert r["fits_in_l2"] is (read + written <= lab.device.l2_bytes)
        assert r["ceiling"].startswith("copy") and 0 < r["pct_of_ceiling"] < 150
        assert r["gbps"] == pytest.approx(exp.bytes_moved(shape) / (r["time_ms"] / 1e3) / 1e9)
    base = next(r for r in records if r["variant"] == exp.baseline)
    assert base["speedup_vs_baseline"] == pytest.approx(1.0)
