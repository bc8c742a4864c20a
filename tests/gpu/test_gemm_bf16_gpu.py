"""gemm_bf16 on a real GPU: every rung correct on ragged and large shapes, random and exact; the
cuBLAS BF16 row correct; planted wrong kernels rejected by the checker; bench rows with % of cuBLAS."""

from pathlib import Path

import pytest

from gpulab.jobs import ceilings as measuring
from gpulab.records import ceilings as table
from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16.bf16 import tolerance
from gpulab.experiments.gemm_bf16.tma_rungs import t4_main_dims
from gpulab.experiments.base import Launch, Variant
from gpulab.run.lab import RunSpec, derive, plan

from configs import declared_and_tuned

EXP = get_experiment("gemm_bf16")
PLANTED = Path(__file__).parent / "planted"


@pytest.mark.gpu
@pytest.mark.parametrize("shape", EXP.test_shapes, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("variant, params", list(declared_and_tuned(EXP)))
def test_variant_correct(lab, variant, params, shape, exact):
    spec = RunSpec(EXP, variant, params, EXP.shape(*shape))
    reason = variant.arch_reason(lab.arch) or variant.constraints(params, spec.shape)
    if reason:
        pytest.skip(reason)
    result = lab.verify(spec, exact=exact)
    assert result.ok, result.describe()


# t4 with EDGE=2 where one or two rows and columns lie past whole tiles (K staged or not): the producer
# warpgroup's idle warps compute those on CUDA cores, beside every consumer schedule.
EDGE_SHAPES = [(258, 514, 72), (129, 257, 65), (4098, 2049, 1000), (2050, 1921, 776)]
EDGE_CONFIGS = [{}, {"CLUSTER": 1}, {"BN": 192}, {"SCHEDULE": 1}, {"BN": 128, "PINGPONG": 1}, {"STORE": 0},
                {"BN": 200, "CLUSTER": 4}]


@pytest.mark.gpu
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("changes", EDGE_CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_t4_edge_correct(lab, changes, exact):
    t4 = EXP.variant("t4")
    if reason := t4.arch_reason(lab.arch):
        pytest.skip(reason)
    params = t4.default_params() | {"EDGE": 2} | changes
    checked = 0
    for dims in EDGE_SHAPES:
        shape = EXP.shape(*dims)
        if t4_main_dims(params, shape) == dims[:2]:
            continue  # no edge for these tiles: the rows and columns past them are none or more than 2
        result = lab.verify(RunSpec(EXP, t4, params, shape), exact=exact)
        assert result.ok, f"{shape.label}: {result.describe()}"
        checked += 1
    assert checked, "no shape leaves an edge for this config"


# t4 in clusters of four (a persistent grid of the 30 the H200 holds) and with BN = 200 (cuBLAS's tile at
# 1000x3000x776; its last 8 columns stored from registers), beside each consumer schedule.
T4_CLUSTER4_CONFIGS = [{"BN": 200, "CLUSTER": 4}, {"BN": 200, "CLUSTER": 4, "STORE": 0},
                       {"BN": 200, "CLUSTER": 2, "SCHEDULE": 1}, {"BN": 256, "CLUSTER": 4, "SCHEDULE": 1},
                       {"BN": 128, "CLUSTER": 4, "PINGPONG": 1, "STAGES": 6}]


@pytest.mark.gpu
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("changes", T4_CLUSTER4_CONFIGS, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_t4_clusters_of_four_and_bn_200_correct(lab, changes, exact):
    t4 = EXP.variant("t4")
    if reason := t4.arch_reason(lab.arch):
        pytest.skip(reason)
    params = t4.default_params() | changes
    for dims in EXP.test_shapes + ((1000, 3000, 776), (1000, 3000, 777), (300, 388, 200), (131, 67, 37)):
        result = lab.verify(RunSpec(EXP, t4, params, EXP.shape(*dims)), exact=exact)
        assert result.ok, f"{dims}: {result.describe()}"


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(17, 33, 65), (1000, 1531, 777), (4096, 4096, 4096), (4097, 4097, 4097)], ids=str)
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
def test_cublas_row_correct(lab, shape, exact):
    spec = RunSpec(EXP, None, {}, EXP.shape(*shape), library="cublas")
    result = lab.verify(spec, exact=exact)
    assert result.ok, result.describe()


def _planted(wrong: int) -> Variant:
    return Variant(
        name=f"wrong{wrong}", file=str(PLANTED / "bf16_wrong.cu"), summary="planted wrong kernel",
        launch=lambda p, s: Launch((-(-s["N"] // 16), -(-s["M"] // 16), 1), (16, 16, 1)),
    )


@pytest.mark.gpu
@pytest.mark.parametrize("wrong, exact", [(1, False), (1, True), (2, False), (3, False), (3, True)])
def test_planted_wrong_kernels_are_rejected(lab, wrong, exact):
    spec = RunSpec(EXP, _planted(wrong), {"WRONG": wrong}, EXP.shape(200, 152, 777))
    result = lab.verify(spec, exact=exact)
    assert not result.ok, f"WRONG={wrong} passed: {result.describe()}"
    assert result.first_wrong is not None


@pytest.mark.gpu
def test_a_correct_scalar_kernel_passes(lab):
    """The planted file with no fault planted (WRONG=0): the checker is not simply failing everything."""
    spec = RunSpec(EXP, _planted(0), {"WRONG": 0}, EXP.shape(200, 152, 777))
    assert lab.verify(spec, exact=False).ok
    assert lab.verify(spec, exact=True).ok


@pytest.mark.gpu
def test_bench_records_have_rates_and_cublas_ratio(lab):
    specs = plan(EXP, ["t0"], {}, [EXP.square(1024)])
    records = derive([lab.execute(s) for s in specs], EXP.baseline)
    by_variant = {r["variant"]: r for r in records}
    assert set(by_variant) == {"t0", "cublas"}
    t0 = by_variant["t0"]
    assert t0["correct"] is True and t0["time_ms"] > 0
    assert t0["gflops"] == pytest.approx(2 * 1024**3 / (t0["time_ms"] / 1e3) / 1e9)
    assert 0 < t0["pct_of_cublas"] < 1000
    assert by_variant["cublas"]["pct_of_cublas"] == pytest.approx(100.0)


@pytest.mark.gpu
def test_bf16_ceilings_measured_and_plausible(lab):
    """What the tensor ceilings record and how. Their rates are measurements, not tests: `gpulab
    ceilings` records them (results/<gpu>/ceilings.csv); here only what no rate on any card can
    do (beat the datasheet by more than clock noise, which would mean miscounted FLOPs)."""
    if not table.has_bf16_tensor_cores(lab.device):
        pytest.skip(f"{lab.device.name} has no BF16 mma.sync (sm_80+)")
    rows = {r["ceiling"]: r for r in measuring.measure_tensor(lab.device)}
    # on a wgmma card the mma.sync rate is measured as well, under its own name, and the TF32 rate
    hopper = table.tensor_instruction(lab.device) == table.WGMMA
    assert set(rows) == set(table.tensor_names(lab.device)) | ({table.TENSOR_BF16_MMA_SYNC} if hopper else set())
    if hopper:
        assert rows[table.TENSOR_TF32]["instruction"] == table.WGMMA_TF32 and rows[table.TENSOR_TF32]["gflops"] > 0
    for r in rows.values():
        print(f"{r['ceiling']:18s} {r['gflops']:12,.0f} GFLOP/s  {r['what']}")
    tensor = rows["tensor_bf16"]
    datasheet = table.datasheet_bf16_gflops(lab.device.name)
    if datasheet:  # no kernel beats the datasheet by more than clock noise
        assert tensor["datasheet_gflops"] == datasheet and 0 < tensor["gflops"] < 1.05 * datasheet
    for n in table.GEMM_SIZES:
        r = rows[f"cublas_bf16_{n}"]
        assert r["max_rel_err"] <= tolerance(n) and r["gflops"] > 0
        if datasheet:
            assert r["gflops"] < 1.05 * datasheet
