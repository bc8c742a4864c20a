"""gemm_bf16 on a real GPU: every rung correct on ragged and large shapes, random and exact; the
cuBLAS BF16 row correct; planted wrong kernels rejected by the checker; bench rows with % of cuBLAS."""

from pathlib import Path

import numpy as np
import pytest

from gpulab.jobs import ceilings as measuring
from gpulab.records import ceilings as table
from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16.bf16 import tolerance
from gpulab.experiments.gemm_bf16.tma_rungs import t4_main_dims
from gpulab.experiments.base import Launch, Variant
from gpulab.gpu.launch import load
from gpulab.gpu.seam import cupy
from gpulab.run.lab import RunSpec, compile_spec, derive, plan

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


# -- d0 (decode, M <= 16) and kc (split-K across a cluster) at the ragged shapes of few output tiles -------
# M 1, 7, 16 (one n8 tile of A or two; rows past M); N 31 and 4097 (a ragged last block column or tile);
# K 8 (one step, one k-tile: most warps and slices empty), 1000 (16-byte rows, a ragged last step) and
# 4099 (rows off 16 bytes: d0's per-element loads, kc's staged copies).
SMALL_RAGGED = [(m, n, k) for m in (1, 7, 16) for n in (31, 4097) for k in (8, 1000, 4099)]
# kc's shapes of few tiles beside those: M = 128 tokens, a ragged product with K past 8000, M and N odd.
KC_FEW_TILES = [(128, 640, 4096), (257, 129, 8191), (1000, 1531, 777)]
# d0 past one block row of 16: 17 (a second row of one), 40 (a ragged third with one n8 tile), 32.
D0_MORE_ROWS = [(17, 33, 65), (40, 4097, 1000), (32, 31, 4099)]
SMALL_CONFIGS = [
    ("d0", {}),  # the host's k slices: 1 or more (16 x 4097 x 4099: 2, the workspace and the fixup); 1 step in flight
    ("d0", {"S": 3}),  # three slices everywhere: the fixup at every shape, empty warp ranges at K = 8
    ("d0", {"KW": 4, "MINB": 3, "DEPTH": 2}),  # two steps in flight (the second pass's defaults)
    ("d0", {"G": 2, "U": 1, "KW": 8, "MINB": 2}),  # two steps of one chunk, 8 warps: odd step counts
    ("d0", {"G": 1, "U": 1, "KW": 2}),  # 16-row blocks, one chunk a step
    ("d0", {"G": 4, "U": 1, "KW": 4, "S": 2, "MINB": 1}),
    ("d0", {"G": 1, "U": 4, "KW": 8, "MINB": 1}),  # the decode tune's pick (H200, call 22): 4 chunks a step
    ("d0", {"G": 1, "U": 4, "KW": 4, "S": 2, "MINB": 2}),  # ... with slices: K = 8 and 1000 leave warps empty
    ("kc", {"SPLIT": 1}),  # no cluster: t3's mainloop with t4's wait depth, the register epilogue
    ("kc", {}),  # 128 x 128 tiles in clusters of 2: the band of 16 float4s in two halves
    ("kc", {"BN": 256, "SPLIT": 3}),  # uneven slices, uneven bands (32 float4s over 3)
    ("kc", {"BN": 256, "SPLIT": 4}),
    ("kc", {"BN": 64, "SPLIT": 8}),  # 8 slices: at K = 8 seven of them empty; at K = 1000 two k-tiles each
    ("kc", {"BN": 192, "SPLIT": 5, "STAGES": 3}),  # 24 float4s over 5
    ("kc", {"BN": 96, "STAGES": 6}),  # wgmma n96: 12 float4s in two halves
    ("kc", {"BN": 96, "SPLIT": 5, "STAGES": 4}),  # 12 float4s over 5
    ("ks", {}),  # 16 tokens a tile, one block an SM: at K = 8 one unit a tile, whole tiles stored directly
    ("ks", {"TN": 8}),  # wgmma n8: M = 16 is two token tiles
    ("ks", {"TN": 32, "BPS": 2, "STAGES": 5}),  # two blocks an SM: twice the partials
    ("ks", {"TN": 64, "STAGES": 4}),
    ("ks", {"TN": 128, "STAGES": 6, "BPS": 1}),  # M = 128 tokens in one tile
]


@pytest.mark.gpu
@pytest.mark.parametrize("exact", [False, True], ids=["random", "exact"])
@pytest.mark.parametrize("name, changes", SMALL_CONFIGS, ids=lambda c: c if isinstance(c, str) else
                         "-".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_small_tile_kernels_correct_at_ragged_shapes(lab, name, changes, exact):
    variant = EXP.variant(name)
    if reason := variant.arch_reason(lab.arch):
        pytest.skip(reason)
    params = variant.default_params() | changes
    for dims in SMALL_RAGGED + {"kc": KC_FEW_TILES, "d0": D0_MORE_ROWS}.get(name, KC_FEW_TILES + D0_MORE_ROWS):
        spec = RunSpec(EXP, variant, params, EXP.shape(*dims))
        assert variant.constraints(params, spec.shape) is None, dims
        result = lab.verify(spec, exact=exact)
        assert result.ok, f"{spec.label}: {result.describe()}"


# Where partial sums cross warps, blocks or a cluster: d0 with slices (the workspace, the ticket and
# its counter, launched three times on one workspace) and kc's cluster reduction, staged K included.
SAME_BITS = [("d0", {}, (16, 4096, 4096)), ("d0", {"S": 3}, (7, 4097, 4099)), ("d0", {"S": 8}, (1, 6144, 4096)),
             ("kc", {}, (128, 1024, 4096)), ("kc", {"SPLIT": 8}, (257, 129, 8191)),
             ("kc", {"BN": 64}, (128, 6144, 4096)), ("kc", {"BN": 256, "SPLIT": 3}, (128, 1024, 4096)),
             ("kc", {"BN": 96, "STAGES": 6}, (128, 6144, 4096)),
             ("ks", {}, (16, 4096, 4096)), ("ks", {"TN": 8}, (7, 4097, 4099)), ("ks", {"BPS": 2, "STAGES": 6}, (1, 57344, 8192)),
             ("ks", {"TN": 128, "STAGES": 6}, (128, 4096, 14336))]


@pytest.mark.gpu
@pytest.mark.parametrize("name, changes, dims", SAME_BITS,
                         ids=lambda x: x if isinstance(x, str) else "x".join(map(str, x)) if isinstance(x, tuple)
                         else "-".join(f"{k}={v}" for k, v in x.items()) or "default")
def test_split_k_kernels_give_the_same_bits_on_every_launch(lab, name, changes, dims):
    """Three launches of one launcher (one workspace and its counters): the same bits each time,
    every element written, and the third still correct (a counter left non-zero by a launch would
    make the next one's fixup run early or never). Then d0 and ks on a fresh workspace leave every counter
    at zero."""
    variant = EXP.variant(name)
    if reason := variant.arch_reason(lab.arch):
        pytest.skip(reason)
    cp = cupy()
    params = variant.default_params() | changes
    spec = RunSpec(EXP, variant, params, EXP.shape(*dims))
    inputs = lab.device_inputs(spec, exact=False, seed=5)
    out = EXP.output(spec.shape, cp)
    once = lab.launcher(spec, inputs, out)
    bits = []
    for _ in range(3):
        out.fill(cp.nan)
        once()
        bits.append(cp.asnumpy(out).view(np.uint32))
    assert all(np.array_equal(bits[0], b) for b in bits[1:])
    result = EXP.check(out, inputs, spec.shape, False, cp)
    assert result.ok, f"{spec.label}: {result.describe()}"
    # ks launched by hand only where K needs no staged copies (its tensor maps read the inputs as they are)
    if (name == "d0" and variant.launch(params, spec.shape).grid[1] > 1) or (name == "ks" and dims[2] % 8 == 0):
        extra = variant.extra_args(inputs, out, spec.shape, params)  # fresh: (..., workspace, counters)
        launch = variant.launch(params, spec.shape)
        load(compile_spec(spec, lab.arch))(launch.grid, launch.block,
                                           (*EXP.kernel_args(inputs, out, spec.shape, params), *extra),
                                           launch.smem_dynamic_bytes)
        cp.cuda.Device().synchronize()
        assert int(extra[-1].sum()) == 0  # the counters: the last of the extra arguments


@pytest.mark.gpu
@pytest.mark.parametrize("changes, dims", [({"KW": 4, "MINB": 3}, (16, 6144, 4096)),
                                           ({"KW": 4, "MINB": 3, "S": 1}, (7, 4097, 1000)),
                                           ({"G": 1, "U": 1, "KW": 2}, (16, 4097, 4099)),
                                           ({"G": 2, "U": 1, "KW": 8, "MINB": 2}, (1, 4096, 14336))],
                         ids=lambda x: "x".join(map(str, x)) if isinstance(x, tuple)
                         else "-".join(f"{k}={v}" for k, v in x.items()) or "default")
def test_d0_two_steps_in_flight_give_one_steps_bits(lab, changes, dims):
    """DEPTH 2 issues the next step's loads before this step's mma and DEPTH 1 after; the mma run in
    the same order in both, so the outputs are the same bits (16-byte and per-element loads, one
    slice or several, a warp range of an odd number of steps)."""
    cp = cupy()
    variant = EXP.variant("d0")
    shape = EXP.shape(*dims)
    bits = []
    for depth in (1, 2):
        params = variant.default_params() | changes | {"DEPTH": depth}
        assert variant.constraints(params, shape) is None
        spec = RunSpec(EXP, variant, params, shape)
        inputs = lab.device_inputs(spec, exact=False, seed=11)
        out = EXP.output(shape, cp)
        out.fill(cp.nan)
        lab.launcher(spec, inputs, out)()
        assert EXP.check(out, inputs, shape, False, cp).ok, spec.label
        bits.append(cp.asnumpy(out).view(np.uint32))
    assert np.array_equal(bits[0], bits[1])
