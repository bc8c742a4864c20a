"""gpulab's best row on a machine with no GPU (gpulab.jobs.best): a tuned pick at or very near the
shape; elsewhere the model (waves of tiles on the SMs, the access model's bytes against the card's
ceilings, a split's partials, each variant's measured efficiency), checked on stand-in variants whose
numbers are worked out by hand below and on shapes nobody lists; the real experiments get a row at
every shape; the bench plan that carries the row and its `chosen_by`; the % of the copy ceiling
beside it (gpulab.records.ceilings)."""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from gpulab import api, records
from gpulab.arith import cdiv
from gpulab.errors import GpulabError
from gpulab.experiments import all_experiments, get_experiment
from gpulab.experiments.base import Experiment, Launch, Param, Variant
from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.splitk import SK_DEFAULTS
from gpulab.gpu import clusters
from gpulab.jobs import bench as bench_job
from gpulab.jobs import best, best_efficiency, best_records, calibration, candidates, cost, model_errors, suite_plan
from gpulab.jobs.tune import accepted_params, load_tuned, shape_distance, tune_path
from gpulab.model.predict import Instruction, KernelAccess, Loop, every, same, shifted
from gpulab.records import BEST, DamagedFile, read_csv, write_csv
from gpulab.records.ceilings import attach_copy

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "results" / "h200"

V9 = SGEMM.variant("v9").default_params()
SK_GEMV = dict(SK_DEFAULTS["one row"])
SK_TALL = SK_DEFAULTS["few columns"] | {"BK": 16}


def _entry(by_shape: dict) -> dict:
    return {"params": next(iter(by_shape.values()))[0], "by_shape": {
        label: {"params": params, "rate": rate} for label, (params, rate) in by_shape.items()}}


TABLE = {
    "v9": _entry({"4096x4096x4096": (V9, 50000.0), "1024x1024x1024": (V9 | {"STAGES": 4}, 30000.0)}),
    "sk": _entry({"4096x64x4096": (SK_TALL, 20000.0), "1x8192x8192": (SK_GEMV, 2000.0),
                  "512x512x512": (SK_DEFAULTS["few rows"], 9000.0)}),
}


# -- rule 1: tuned at the shape, or very near it ----------------------------------------------------
def test_distance_counts_each_dimension_in_log2():
    """The distance the tuned picks and the tuned defaults share."""
    assert shape_distance(SGEMM.shape(4096, 64, 4096), (4096, 32, 4096)) == pytest.approx(1.0)
    assert shape_distance(SGEMM.shape(4096, 64, 4096), (4096, 4096, 4096)) == pytest.approx(6.0)


@pytest.mark.parametrize("shape, variant, why", [
    ((4096, 4096, 4096), "v9", "tuned here"),
    ((4000, 4000, 4000), "v9", "tuned at 4096x4096x4096"),  # 0.10 away: very near
    ((1024, 1024, 1024), "v9", "tuned here"),
    ((1, 8192, 8192), "sk", "tuned here"),
    ((4096, 64, 4097), "sk", "tuned at 4096x64x4096"),
])
def test_a_config_tuned_at_or_very_near_the_shape_runs(shape, variant, why):
    chosen = best.pick(SGEMM, TABLE, SGEMM.shape(*shape))
    assert chosen.variant.name == variant and chosen.why == why and chosen.estimate is None
    tuned = TABLE[variant]["by_shape"][SGEMM.shape(*shape).label if why == "tuned here" else why.split()[-1]]
    assert chosen.params == tuned["params"]


@pytest.mark.parametrize("shape", [(4096, 48, 4096), (1, 4096, 8192), (3072, 3072, 3072)])
def test_a_tuned_shape_further_away_leaves_the_choice_to_the_model(shape):
    """4096x48x4096 is 0.4 from 4096x64x4096, 1x4096x8192 is 1 from 1x8192x8192: the old rule took
    their tuned configs; now the model weighs every candidate, the tuned ones among them."""
    chosen = best.pick(SGEMM, TABLE, SGEMM.shape(*shape))
    assert chosen.why.startswith("model: ") and chosen.estimate is not None
    assert chosen.variant.constraints(chosen.params, SGEMM.shape(*shape)) is None


def test_a_tie_at_one_shape_goes_to_the_higher_rate():
    table = {"v9": _entry({"512x512x512": (V9, 8000.0)}), "sk": TABLE["sk"]}  # sk ran 9000 there
    assert best.pick(SGEMM, table, SGEMM.shape(512, 512, 512)).variant.name == "sk"
    table["v9"]["by_shape"]["512x512x512"]["rate"] = 12000.0
    assert best.pick(SGEMM, table, SGEMM.shape(512, 512, 512)).variant.name == "v9"


def test_entries_the_experiment_cannot_run_are_left_out():
    table = {
        "v99": _entry({"4096x4096x4096": ({"BM": 64}, 99999.0)}),  # a variant this build does not have
        "v11": _entry({"4096x4096x4096": ({"BM": 64, "XX": 1}, 99999.0)}),  # a param it does not have
        "sk": _entry({"4096x4096x4096": (SK_TALL | {"BM": 3}, 99999.0)}),  # a choice it no longer accepts
        "v9": _entry({"4096x4096x4096": (V9, 50000.0)}),
    }
    chosen = best.pick(SGEMM, table, SGEMM.shape(4096, 4096, 4096))
    assert chosen.variant.name == "v9" and chosen.why == "tuned here"


def test_a_param_added_after_the_tune_takes_its_default():
    """gemm_bf16's t4 was tuned before it had SCHEDULE: its tuned config still counts, with
    SCHEDULE at its declared default (the schedule the tune timed)."""
    bf16 = get_experiment("gemm_bf16")
    t4 = bf16.variant("t4")
    old = {p.name: p.default for p in t4.params if p.name != "SCHEDULE"} | {"STAGES": 4}
    assert accepted_params(t4, old) == t4.default_params() | {"STAGES": 4}
    assert accepted_params(t4, old | {"SCHEDULE": 7}) is None  # a value it does not offer
    chosen = best.pick(bf16, {"t4": _entry({"4096x4096x4096": (old, 700000.0)})}, bf16.shape(4096, 4096, 4096))
    assert chosen.variant.name == "t4" and chosen.params["SCHEDULE"] == 0 and chosen.why == "tuned here"


def test_any_tuned_variant_counts_not_only_v9():
    """A rung added later (v10 by another branch) wins where it was tuned fastest, by name from the data."""
    v10 = dataclasses.replace(SGEMM.variant("v9"), name="v10x")
    exp = type("WithV10", (type(SGEMM),), {"variants": SGEMM.variants + (v10,)})()
    table = {"v9": _entry({"4096x4096x4096": (V9, 50000.0)}), "v10x": _entry({"4096x4096x4096": (V9, 52000.0)})}
    assert best.pick(exp, table, exp.shape(4096, 4096, 4096)).variant.name == "v10x"


# -- stand-in variants: the model's reasons, worked out by hand ------------------------------------
# A BF16-like GEMM (2-byte operands, a 4-byte output) on a card of 132 SMs, 4,000 GB/s copy, 10,000
# GB/s L2, 800 TFLOP/s tensor: three kernels with exact access models of what they move (contiguous
# 16-byte loads of their panels, 4-byte stores; the addresses are stand-ins, the bytes are not).
CARD = cost.Card(sms=132, copy_gbps=4000.0, l2_gbps=10000.0, compute={"tensor_bf16": 800_000.0}, arch="sm_90",
                 source="a stand-in card")
THREADS = 256


def _standin_model(p, s, splits: int, partials: bool = True):
    """What a tile kernel of BM x BN tiles, each cut into `splits` k slices (one block each), moves:
    each block loads its tile's panels of A and B over its k slice, the blocks together store C once,
    and all but one slice of each tile store a BM x BN FP32 partial (with `partials`; without, they
    add them in shared memory, as a cluster's blocks do through distributed shared memory)."""
    tiles = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    blocks = tiles * splits
    per_block = (p["BM"] + p["BN"]) * cdiv(s["K"], splits) * 2
    load_steps = cdiv(per_block, THREADS * 16)
    loads = Instruction("ld panels", "global", "load", 16, address=lambda i: 16 * i.tid + 4096 * i.k,
                        loops=(Loop("k", load_steps, shifted(load_steps, 4096)),), blocks={"x": same(blocks)})
    elements = s["M"] * s["N"]
    per = cdiv(elements, blocks * THREADS) * THREADS  # output elements per block
    store_steps = per // THREADS
    edge = range(elements // per, blocks)  # the blocks whose share passes the output's end

    def flat(i):
        return (i.bx * store_steps + i.j) * THREADS + i.tid

    out = Instruction("st C", "global", "store", 4, address=lambda i: 4 * flat(i), active=lambda i: flat(i) < elements,
                      loops=(Loop("j", store_steps, every(store_steps)),),
                      blocks={"x": shifted(blocks, 4 * per, edge=edge)})
    instructions = [loads, out]
    if splits > 1 and partials:
        partial = (splits - 1) * p["BM"] * p["BN"] * 4 // splits  # bytes each block stores on average
        steps = partial // (THREADS * 4)
        instructions.append(Instruction("st partial", "global", "store", 4, address=lambda i: 4 * i.tid + 1024 * i.q,
                                        loops=(Loop("q", steps, shifted(steps, 1024)),), blocks={"x": same(blocks)}))
    return KernelAccess(grid=(blocks, 1, 1), block=(THREADS, 1, 1), instructions=tuple(instructions),
                        flops=2.0 * s["M"] * s["N"] * s["K"],
                        dram_compulsory_bytes=2 * (s["M"] + s["N"]) * s["K"] + 4 * s["M"] * s["N"])


def _tiles_launch(p, s, splits=1):
    return Launch(grid=(cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"]) * splits, 1, 1), block=(THREADS, 1, 1))


WHOLE = Variant("whole", "whole.cu", "one block per 128 x 128 tile", _tiles_launch,
                params=(Param("BM", (64, 128), 128), Param("BN", (64, 128), 128)),
                access=lambda p, s: _standin_model(p, s, 1))
SPLIT = Variant("split", "split.cu", "each 128 x 128 tile cut into S k slices", lambda p, s: _tiles_launch(p, s, p["S"]),
                params=(Param("BM", (128,), 128), Param("BN", (128,), 128), Param("S", (2, 4, 8, 16), 4)),
                access=lambda p, s: _standin_model(p, s, p["S"]), rung=False)
GEMV = Variant("gemv", "gemv.cu", "16 x 64 tiles for a few rows of A", _tiles_launch,
               params=(Param("BM", (16,), 16), Param("BN", (64,), 64)),
               constraints=lambda p, s: None if s is None or s["M"] <= 16 else "for M <= 16 only",
               access=lambda p, s: _standin_model(p, s, 1), rung=False)


# S blocks a tile, adding their partials in a cluster's shared memory: none reach global memory,
# every block stores its band of C.
CLUSTER = Variant("cluster", "cluster.cu", "each tile cut into S k slices, one cluster", lambda p, s: _tiles_launch(p, s, p["S"]),
                  params=(Param("BM", (128,), 128), Param("BN", (128,), 128), Param("S", (2, 4, 8, 16), 4)),
                  access=lambda p, s: _standin_model(p, s, p["S"], partials=False), rung=False)


def _padded_model(p, s):
    """WHOLE's model in a launch of twice its blocks, the second half idle (a cluster past M's last
    row): they load nothing and store nothing."""
    whole = _standin_model(p, s, 1)
    tiles = whole.grid[0]

    def only_first(instr):
        guard = instr.active
        return dataclasses.replace(instr, active=lambda i: (i.bx < tiles) & (True if guard is None else guard(i)),
                                   blocks={"x": tuple(instr.blocks["x"]) + ((tiles, tiles),)})
    return dataclasses.replace(whole, grid=(2 * tiles, 1, 1), instructions=tuple(map(only_first, whole.instructions)))


PADDED = Variant("padded", "padded.cu", "one block per tile, twice the blocks", lambda p, s: _tiles_launch(p, s, 2),
                 params=(Param("BM", (128,), 128), Param("BN", (128,), 128)), access=_padded_model, rung=False)


class StandIn(Experiment):
    name, dims, bound, compute_ceiling = "standin", ("M", "N", "K"), "compute", "tensor_bf16"
    variants = (WHOLE, SPLIT, GEMV)

    def flops(self, shape):
        return 2.0 * shape["M"] * shape["N"] * shape["K"]

    def bytes_moved(self, shape):
        return 2 * (shape["M"] + shape["N"]) * shape["K"] + 4 * shape["M"] * shape["N"]


STANDIN = StandIn()


def _choose(shape, variants=None) -> best.Pick:
    exp = STANDIN if variants is None else type("Some", (StandIn,), {"variants": variants})()
    return best.Selector(exp, {}, CARD).pick(exp.shape(*shape))


def test_many_tiles_run_whole_a_split_would_only_add_its_partials():
    """8192 x 8192 x 1000 (a K nobody lists): 4,096 tiles of 128 x 128, 31 waves on 132 SMs (q 1.03):
    whole, the loads of the panels (2.1 GB, 210 us at 10 TB/s) bind. Split 2 levels the waves no
    better (63 of 64 full) and adds 268 MB of partials, written and read back (134 us)."""
    chosen = _choose((8192, 8192, 1000))
    est = chosen.estimate
    assert chosen.variant.name == "whole" and est.bound == "L2" and not est.split
    assert est.tiles == 4096 and est.quantization == pytest.approx(32 * 132 / 4096)
    assert est.traffic.workspace_bytes == 0 and "waves (4096 blocks, 132 SMs, the last 3% full)" in chosen.why
    runner_up = best.Selector(STANDIN, {}, CARD).ranking(STANDIN.shape(8192, 8192, 1000))[1]
    assert runner_up.variant.name == "split" and runner_up.workspace_s > 0 and runner_up.seconds > est.seconds


def test_few_tiles_split_along_k():
    """300 x 256 x 8192: six tiles of 128 x 128 leave 126 of 132 SMs idle (q 22: 55 us); cut 16
    ways, 96 blocks (q 1.4) and 5.9 MB of partials, about 7 us."""
    chosen = _choose((300, 256, 8192))
    est = chosen.estimate
    assert chosen.variant.name == "split" and chosen.params["S"] == 16 and est.split
    assert est.blocks == 96 and est.quantization == pytest.approx(132 / 96)
    assert est.traffic.workspace_bytes == pytest.approx(15 * 6 * 128 * 128 * 4, rel=0.01)
    assert "split 16" in chosen.why and "MB of partials" in chosen.why
    whole = best.Selector(STANDIN, {}, CARD)._estimate(WHOLE, WHOLE.default_params(), STANDIN.shape(300, 256, 8192),
                                                          modelled=True)
    assert whole.quantization == pytest.approx(22.0) and whole.seconds > 4 * est.seconds
    assert _choose((300, 256, 8192), (WHOLE,)).estimate.seconds > 2 * est.seconds  # its smaller tiles too


def test_clustered_blocks_count_their_waves_over_the_sms_that_hold_whole_clusters():
    """kc at 1024x1024x4096 in 128 x 256 tiles split four ways: 128 blocks in 32 clusters of four. A
    cluster runs on the SMs of one GPC, and the H200 holds 30 clusters of four at once (120 of its
    132 SMs; without a GPU gpulab.gpu.clusters answers for it): the last two clusters run in a second
    wave, q = 2 x 132 / 128, not 132 / 128. Counted as one wave, it was the pick there and ran 35.2 us,
    twice cuBLAS BF16's time (H200, 2026-12-05, notebook/probes/issue40/call26). In clusters of two,
    64 of them, all run at once."""
    bf16 = get_experiment("gemm_bf16")
    kc = bf16.variant("kc")
    shape = bf16.shape(1024, 1024, 4096)
    chooser = best.Selector(bf16, {}, CARD)
    four = chooser._estimate(kc, kc.default_params() | {"BN": 256, "SPLIT": 4}, shape, modelled=True)
    at_once = clusters.blocks_at_once(4)
    assert four.blocks == 128 and four.at_once == at_once < 128
    assert four.quantization == pytest.approx(cdiv(128, at_once) * 132 / 128)
    assert f"{at_once} of 132 SMs hold its clusters" in four.reason()
    two = chooser._estimate(kc, kc.default_params() | {"BN": 128, "SPLIT": 2}, shape, modelled=True)
    assert two.blocks == 128 and two.at_once == 132 and two.quantization == pytest.approx(132 / 128)
    assert "(128 blocks, 132 SMs)" in two.reason() and four.seconds > 1.5 * two.seconds


def test_a_cluster_split_counts_its_blocks_a_padded_cluster_its_tiles():
    """300 x 256 x 8192 again: six tiles. A cluster of 16 blocks a tile adds its partials in shared
    memory (no partial reaches global memory) but its blocks store their shares of C: 96 blocks
    working, q 1.4, like the split through global memory without its partials. A launch of twice the
    tiles whose second half stores nothing is six working blocks: q 22, as WHOLE."""
    exp = type("Clusters", (StandIn,), {"variants": (WHOLE, CLUSTER, PADDED)})()
    chooser = best.Selector(exp, {}, CARD)
    shape = exp.shape(300, 256, 8192)
    cluster = chooser._estimate(CLUSTER, CLUSTER.default_params() | {"S": 16}, shape, modelled=True)
    # The stand-in stores C flat, 1,024 elements a block: the 76,800 fill 75 of the 96 blocks, far more than 6 tiles
    assert cluster.traffic.workspace_bytes == 0 and cluster.traffic.working_blocks == 75
    assert cluster.split and cluster.quantization == pytest.approx(132 / 96)
    padded = chooser._estimate(PADDED, PADDED.default_params(), shape, modelled=True)
    assert padded.traffic.working_blocks == 6 and not padded.split
    assert padded.quantization == pytest.approx(22.0)
    chosen = chooser.pick(shape)
    assert chosen.variant.name == "cluster" and chosen.params["S"] == 16 and "split 16" in chosen.why


def _narrow(threads: int, smem: int = 0) -> Variant:
    return dataclasses.replace(WHOLE, name=f"narrow{threads}", access=None, launch=lambda p, s: Launch(
        grid=(cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"]), 1, 1), block=(threads, 1, 1), smem_dynamic_bytes=smem))


@pytest.mark.parametrize("threads, smem, shape, busy", [
    (64, 0, (1024, 1024, 8192), 0.5),  # 64 tiles: one block of 2 warps an SM, 2 of its 4 schedulers
    (64, 0, (2048, 2048, 8192), 1.0),  # 256 tiles: 2 blocks on the busiest SM, 4 warps
    (32, 0, (1024, 2048, 8192), 0.25),  # 128 blocks of one warp
    (32, 200_000, (2048, 4096, 8192), 0.25),  # 512 blocks, but their shared memory fits one an SM
    (256, 0, (128, 128, 8192), 1.0),  # one block of 8 warps
])
def test_an_sm_computes_at_the_share_of_its_schedulers_its_warps_keep(threads, smem, shape, busy):
    v = _narrow(threads, smem)
    s = STANDIN.shape(*shape)
    assert cost.schedulers_busy(v, v.default_params(), s, 132, "sm_90") == pytest.approx(busy)
    exp = type("Narrow", (StandIn,), {"variants": (WHOLE, v)})()
    chooser = best.Selector(exp, {}, CARD)
    narrow = chooser._estimate(v, v.default_params(), s, modelled=False)
    wide = chooser._estimate(WHOLE, WHOLE.default_params(), s, modelled=False)
    assert narrow.limits_s["compute"] == pytest.approx(wide.limits_s["compute"] / busy)
    if busy < 1 and narrow.bound == "compute":
        assert f"{round(4 * busy)} of an SM's 4 warp schedulers busy" in narrow.reason()


@pytest.mark.parametrize("m", [1, 7, 16])
def test_a_few_rows_take_the_memory_bound_path(m):
    """M <= 16 at 4096 x 4096 (or N = 31): the 16-row tiles read Bt once with every SM busy and pad
    M 16/M times, where the 128-row tiles pad it 128/M times on 32 tiles; the time is the bytes'."""
    chosen = _choose((m, 4096, 4096))
    assert chosen.variant.name == "gemv" and chosen.estimate.bound in ("DRAM", "L2")
    assert f"{chosen.estimate.bound}-bound" in chosen.why


def test_a_few_rows_of_a_narrow_product_split():
    """7 x 31 x 1000: one 16 x 64 tile leaves the gemv one block on 132 SMs; cut 16 ways, 16 blocks."""
    chosen = _choose((7, 31, 1000))
    assert chosen.variant.name == "split" and chosen.params["S"] == 16 and chosen.estimate.blocks == 16


def test_without_the_memory_path_a_few_rows_split():
    """No kernel for a few rows (M = 7): 32 tiles of 128 x 128 leave most SMs idle; the split fills them."""
    assert _choose((7, 4096, 4096), (WHOLE, SPLIT)).variant.name == "split"


def test_the_bound_never_exceeds_the_model():
    """The cheap bound orders the access model's evaluations and skips what cannot win: it must never
    be above the modelled time of the same config."""
    chooser = best.Selector(STANDIN, {}, CARD)
    for shape in [(1, 4096, 4096), (300, 256, 8192), (8192, 8192, 1000), (7, 31, 1000)]:
        s = STANDIN.shape(*shape)
        for v in STANDIN.variants:
            for params in chooser.configs(v, s):
                bound = chooser._estimate(v, params, s, modelled=False)
                modelled = chooser._estimate(v, params, s, modelled=True)
                assert bound.seconds <= modelled.seconds * (1 + 1e-12), (v.name, params, shape)


def test_a_measured_variant_is_held_to_its_measured_efficiency():
    """A run measured twice as slow as the model says halves that variant's efficiency near it, and
    the other variant, measured at its model's time, wins where the two models tie."""
    twin = dataclasses.replace(WHOLE, name="twin")
    exp = type("Twins", (StandIn,), {"variants": (WHOLE, twin)})()
    shape = exp.shape(4096, 4096, 4096)
    plain = best.Selector(exp, {}, CARD)
    modelled = plain._estimate(WHOLE, WHOLE.default_params(), shape, modelled=True, efficiency=(1.0, ""))
    runs = [calibration.Measured("whole", WHOLE.default_params(), shape.values, 2 * modelled.roof_s),
            calibration.Measured("twin", WHOLE.default_params(), shape.values, modelled.roof_s)]
    chooser = best.Selector(exp, {}, CARD, runs)
    assert chooser.efficiency(WHOLE, shape)[0] == pytest.approx(0.5)
    assert chooser.efficiency(twin, shape) == (pytest.approx(1.0), "from 4096x4096x4096")
    near = exp.shape(3000, 5000, 4096)
    chosen = chooser.pick(near)
    assert chosen.variant.name == "twin" and "efficiency 1.00 from 4096x4096x4096" in chosen.why


def test_two_runs_of_one_config_at_one_shape_each_have_their_own_ratio():
    """A suite's run and a tune's of the same config at the same shape are two measurements: each
    run's model-over-measured ratio is its own, whichever is asked first (the memo once kept the
    first's for both, so picks hung on the order shapes were asked in)."""
    shape = STANDIN.shape(4096, 4096, 4096)
    roof = best.Selector(STANDIN, {}, CARD)._estimate(WHOLE, WHOLE.default_params(), shape, modelled=True,
                                                      efficiency=(1.0, "")).roof_s
    slow, fast = (calibration.Measured("whole", WHOLE.default_params(), shape.values, k * roof) for k in (2, 1))
    for first, second in ((slow, fast), (fast, slow)):
        chooser = best.Selector(STANDIN, {}, CARD, [slow, fast])
        assert chooser._ratio(WHOLE, first) == pytest.approx(roof / first.seconds)
        assert chooser._ratio(WHOLE, second) == pytest.approx(roof / second.seconds)


def test_an_unmeasured_variant_gets_the_lowest_of_the_measured():
    shape = STANDIN.shape(4096, 4096, 4096)
    plain = best.Selector(STANDIN, {}, CARD)
    roof = plain._estimate(WHOLE, WHOLE.default_params(), shape, modelled=True, efficiency=(1.0, "")).roof_s
    chooser = best.Selector(STANDIN, {}, CARD, [calibration.Measured("whole", WHOLE.default_params(), shape.values, 4 * roof)])
    eff, source = chooser.efficiency(SPLIT, shape)
    assert eff == pytest.approx(0.25) and "lowest" in source
    assert best.Selector(STANDIN, {}, CARD).efficiency(SPLIT, shape)[1].startswith("(nothing measured")


def test_no_variant_runs_the_shape_says_why_in_one_line():
    exp = type("OnlyGemv", (StandIn,), {"variants": (GEMV,)})()
    chooser = best.Selector(exp, {}, CARD)
    assert chooser.pick(exp.shape(64, 4096, 4096)) is None
    line = chooser.why_none(exp.shape(64, 4096, 4096))
    assert "\n" not in line and "gemv: for M <= 16 only" in line


def test_candidates_are_bounded_and_include_the_repaired_moves():
    """sk's moves from its default: each changes its grid or its padded work, each its constraints
    accept, and some are
    moves its constraints refused alone (BN=4 with TN=4 leaves a block too small), repaired by a
    second param (TN=1)."""
    chooser = best.Selector(SGEMM, {}, CARD)
    shape = SGEMM.shape(300, 1000, 1000)
    sk = SGEMM.variant("sk")
    found = chooser.configs(sk, shape)
    default = sk.default_params()
    assert 1 < len(found) <= best.MAX_CONFIGS and found[0] == default
    assert all(sk.constraints(p, shape) is None for p in found)
    work = cost.work_units(sk, default, shape)  # blocks, tiles, padded work
    assert all(cost.work_units(sk, p, shape) != work for p in found[1:])
    repaired = [p for p in found if sum(p[k] != default[k] for k in p) == 2]
    assert repaired
    for p in repaired:  # one of the two moves alone was refused: the other repairs it
        alone = [default | {k: p[k]} for k in p if p[k] != default[k]]
        assert any(sk.constraints(q, shape) is not None for q in alone), p


# -- the real experiments ---------------------------------------------------------------------------
UNLISTED = {3: [(1, 4097, 4096), (7, 31, 1000), (300, 1000, 1000), (1, 31, 1000), (300, 4096, 1000)],
            2: [(7, 31), (300, 1000), (1, 4097)], 1: [(7,), (300,), (1000,)]}


@pytest.mark.parametrize("exp", all_experiments(), ids=lambda e: e.name)
def test_every_experiment_has_a_best_row_at_every_shape(exp):
    """gemm_bf16 used to print no best row where nothing was tuned near: now every shape gets one,
    from this card's tune, runs and ceilings (results/h200), or the bare model."""
    shapes = [exp.shape(*s) for s in exp.default_shapes + exp.test_shapes]
    shapes += [exp.shape(*s) for s in UNLISTED[len(exp.dims)]]
    for folder in (H200, None):
        chooser = best.selector(exp, folder)
        for shape in shapes:
            chosen = chooser.pick(shape)
            assert chosen is not None, (exp.name, shape.label, chooser.why_none(shape))
            assert chosen.variant.constraints(chosen.params, shape) is None
            assert not chosen.variant.expected_wrong
            assert chosen.why.startswith(("tuned", "model: ")), chosen.why


@pytest.mark.parametrize("shape", [(1, 4097, 4096), (7, 8192, 1000), (16, 28672, 4096)])
def test_sgemm_a_few_rows_are_held_to_what_was_measured_on_memory_bound_shapes(shape):
    """On the H200's results: M <= 16 is a memory-bound shape (below the ridge of FFMA over copy), and
    each kernel measured on memory-bound shapes (gv at 1x8192x8192, ...) is held to its efficiency
    there, not to the one it reached on squares; the ladder's first rungs are never the pick."""
    chooser = best.selector(SGEMM, H200)
    s = SGEMM.shape(*shape)
    gv = SGEMM.variant("gv")
    assert chooser.shape_class(gv, s) == "memory"
    eff, source = chooser.efficiency(gv, s)
    measured = {r.shape for r in chooser.runs["gv"] if chooser.shape_class(gv, r.shape) == "memory"}
    assert source.startswith("from ") and tuple(int(x) for x in source.split()[1].split("x")) in measured
    chosen = chooser.pick(s)
    assert chosen.variant.name not in ("v0", "v1", "v2", "v3") and chosen.estimate is not None


# gemm_bf16's decode and split kernels as the H200 measured them (2026-12-04, before the llm suite's
# first card run; gpulab bench gemm_bf16 d0,kc at these shapes): (shape, d0 ms, kc ms).
BF16_D0 = {"G": 2, "U": 2, "KW": 4, "S": 0, "MINB": 3, "DEPTH": 2}
BF16_KC = {"BM": 128, "BN": 128, "STAGES": 4, "SPLIT": 2, "GROUP_M": 8}
BF16_MEASURED = (((8, 12288, 4096), 0.03616, 0.06624), ((16, 5120, 5120), 0.025952, 0.033088),
                 ((128, 3072, 4096), 0.04928, 0.02208), ((256, 5120, 2048), 0.086272, 0.026224))


def _bf16_chooser(results: Path = H200):
    bf16 = get_experiment("gemm_bf16")
    d0, kc = bf16.variant("d0"), bf16.variant("kc")
    runs = [calibration.Measured(name, v.completed_params(p), shape, ms / 1e3) for shape, *times in BF16_MEASURED
            for (name, v, p), ms in zip((("d0", d0, BF16_D0), ("kc", kc, BF16_KC)), times)]
    folder = best.selector(bf16, results)
    return bf16, best.Selector(bf16, folder.table, folder.card, folder_runs(folder) + runs,
                               tune_rows=calibration.tune_runs(bf16, results))


# The llm tunes of 2026-12-05 on the H200 (notebook/device/device_call18.sh, device_call21.sh,
# device_call22.sh: ks at the layers of 1, 16 and 128 tokens, kc at 128, d0 at the smaller layers of
# 1 and 16) made ks, kc or d0 'tuned here' where the tests below replay a choice made before them (t4
# the only variant tuned at 128x6144x4096; d0's untuned configs the only ones timed at 1x10240x8192):
# those read the card's results as they were, without those tunes.
LLM_TUNES = ("ks", "kc", "d0")
# t3 and t4 were tuned at the llm shapes of 128 tokens too (H200, 2026-12-06, notebook call 39); t4's
# pick at 128x6144x4096 is call 6's, which that tune kept.
LLM_128_TUNES = {"t3": (), "t4": ("128x6144x4096",)}


def _h200_before_llm_tunes(tmp_path: Path) -> Path:
    folder = tmp_path / "h200"
    shutil.copytree(H200, folder)
    tuned = json.loads((folder / "tuned.json").read_text())
    for name in LLM_TUNES:
        tuned["gemm_bf16"].pop(name, None)
    for name, kept in LLM_128_TUNES.items():
        picks = tuned["gemm_bf16"][name]["by_shape"]
        tuned["gemm_bf16"][name]["by_shape"] = {label: b for label, b in picks.items()
                                               if not label.startswith("128x") or label in kept}
    (folder / "tuned.json").write_text(json.dumps(tuned))
    return folder


def folder_runs(chooser):
    return [run for found in chooser.runs.values() for run in found]




@pytest.mark.parametrize("shape", [(1, 12000, 7000), (4, 20000, 5000), (13, 9000, 9000), (2, 30000, 6000)])
def test_bf16_a_few_rows_of_a_weight_past_the_l2_stream_it(shape):
    """M <= 16 with Bt's N K 2 bytes three times the H200's 50 MB L2 and more: the time is one read
    of Bt, so a kernel that streams it (d0, or ks since its tune) is the pick, not a 128-row tile kernel padding M 128/M
    times (kc ran 1.5-2x slower than d0 at such shapes on the card). kc's cluster split counts as a
    split (its blocks all work), which levels its calibration: its measured runs at M <= 16 hold it to
    what it reached there. These four were known misses (strict xfails) until padded tiles were
    calibrated on padded runs (t4 in clusters of one, 13x9000x9000) and memory-bound runs were fitted
    with a fixed cost (t3 against d0 at 20000 and 30000 columns: d0's runs, a fixed 9 us plus 1.04x
    its model, had been read as 0.73 of its model at any size)."""
    bf16, chooser = _bf16_chooser()
    chosen = chooser.pick(bf16.shape(*shape))
    # ks streams Bt too, through a TMA ring: timed at the llm layers (2026-12-05), it is the pick here
    assert chosen.variant.name in ("d0", "ks") and chosen.estimate.bound == "DRAM", chosen.why
    kc = [e for e in chooser.ranking(bf16.shape(*shape)) if e.variant.name == "kc"]
    assert kc and kc[0].split and kc[0].seconds > chosen.estimate.seconds


def test_bf16_kc_split_is_a_split_where_n_is_under_its_bands():
    """kc's slices add their partials in the cluster's shared memory and each block stores a band of
    the tile's columns: at N = 31, SPLIT = 2, only the first band lies inside N, so one block a tile
    stores, as in a cluster padded past M. Its declared split_param still makes it a split: read as
    one block a tile doing the whole K, it was modelled at 44.9 us; it ran 20.1 (H200, 2026-12-04)."""
    bf16, chooser = _bf16_chooser()
    shape = bf16.shape(2048, 31, 4096)
    kc = bf16.variant("kc")
    assert kc.split_param == "SPLIT"
    params = kc.completed_params({"BN": 128, "STAGES": 4, "SPLIT": 2, "GROUP_M": 8})
    one = chooser._estimate(kc, params | {"SPLIT": 1}, shape, modelled=True, efficiency=(1.0, ""))
    two = chooser._estimate(kc, params, shape, modelled=True, efficiency=(1.0, ""))
    assert two.traffic.working_blocks == two.tiles  # one block a tile stores
    assert two.split and not one.split
    assert two.seconds < 0.6 * one.seconds


@pytest.mark.parametrize("shape", [(128, 3000, 5000), (100, 5000, 3000), (128, 2000, 12000)])
def test_bf16_a_few_row_tiles_split_over_k(shape):
    """M of about 128 with 16-40 tiles of 128 x 128 on 132 SMs: an unsplit kernel leaves most SMs
    idle; the pick is the split over K (kc), whose blocks fill them."""
    bf16, chooser = _bf16_chooser()
    chosen = chooser.pick(bf16.shape(*shape))
    assert chosen.variant.name == "kc" and chosen.estimate.split, chosen.why


@pytest.mark.parametrize("shape", [(128, 3000, 5000), (100, 5000, 3000), (96, 3000, 3000)])
def test_sgemm_a_few_row_tiles_pick_a_split_over_k(shape):
    """sgemm at M of about 100 (few tiles): v11 and v9 in 64 x 64 tiles put one block of 2 warps on an
    SM, half its schedulers idle (v11 ran 128 x 4096 x 4096 at 0.42x v12 on the H200): the pick splits K
    (v12's stream-K, v13's slices, sx) and fills the SMs. (These picked a split before the schedulers'
    share too: a guard that it stays so.)"""
    chooser = best.selector(SGEMM, H200)
    chosen = chooser.pick(SGEMM.shape(*shape))
    assert chosen.variant.name in ("v12", "v13", "sx") and chosen.estimate.split, chosen.why


def test_calibration_reads_the_experiments_runs_and_the_tune_not_a_suites(tmp_path):
    (tmp_path / "sgemm.csv").write_text((H200 / "sgemm.csv").read_text())
    (tmp_path / "sgemm-llm.csv").write_text("experiment,variant,params,shape,correct,time_ms,suite\n"
                                            "sgemm,v9,,1x6144x4096,True,0.001,llm\n")
    runs = calibration.measured_runs(SGEMM, tmp_path, TABLE)
    assert {r.shape for r in runs if r.variant == "v9"} >= {(4096, 4096, 4096), (1024, 1024, 1024)}
    assert (1, 6144, 4096) not in {r.shape for r in runs}
    assert any(r.variant == "sk" and r.shape == (4096, 64, 4096) for r in runs)  # from the tune's pick


def test_calibration_refuses_a_results_csv_that_lost_its_times(tmp_path):
    """A sgemm.csv without its time_ms column reads as every run untimed: the model would then choose
    with borrowed or bare efficiencies and say nothing. It is damage, refused in one line."""
    header, *lines = (H200 / "sgemm.csv").read_text().splitlines()
    names = header.split(",")
    drop = names.index("time_ms")
    rows = [",".join(c for i, c in enumerate(line.split(",")) if i != drop) for line in [header] + lines[:3]
            if line.count(",") == header.count(",")]  # rows without quoted commas, enough to read
    (tmp_path / "sgemm.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(DamagedFile, match="time_ms"):
        calibration.measured_runs(SGEMM, tmp_path, TABLE)


# -- the bench plan and its rows --------------------------------------------------------------------
def test_bench_plan_puts_the_best_row_before_the_vendor_rows(tmp_path):
    (tmp_path / "tuned.json").write_text(json.dumps({"sgemm": TABLE}))
    shapes = [SGEMM.shape(4096, 64, 4096), SGEMM.shape(1, 8192, 8192)]
    specs = bench_job.bench_plan(SGEMM, ["v0"], {}, shapes, tmp_path, with_best=True)
    assert [(s.name, s.shape.label) for s in specs] == [
        ("v0", "4096x64x4096"), ("best", "4096x64x4096"), ("cublas", "4096x64x4096"),
        ("v0", "1x8192x8192"), ("best", "1x8192x8192"), ("cublas", "1x8192x8192")]
    row = specs[1].base_record()
    assert row["variant"] == "best" and row["picked"] == "sk"
    assert row["params"] == SGEMM.variant("sk").params_label(SK_TALL)
    assert "best" not in [s.name for s in bench_job.bench_plan(SGEMM, ["v0"], {}, shapes, tmp_path, with_best=False)]


def test_the_best_rows_say_why_in_chosen_by(tmp_path):
    (tmp_path / "tuned.json").write_text(json.dumps({"sgemm": TABLE}))
    shapes = [SGEMM.shape(4096, 64, 4096), SGEMM.shape(1, 4096, 8192)]
    picks = bench_job.best_picks(best.selector(SGEMM, tmp_path), shapes)
    columns = bench_job.row_columns(picks, {"1x4096x8192": {"suite": "mine", "layer": "x"}})
    assert columns({"variant": BEST, "shape": "4096x64x4096"}) == {"chosen_by": "tuned here"}
    extra = columns({"variant": BEST, "shape": "1x4096x8192"})
    assert extra["suite"] == "mine" and extra["layer"] == "x" and extra["chosen_by"].startswith("model: ")
    assert columns({"variant": "v0", "shape": "1x4096x8192"}) == {"suite": "mine", "layer": "x"}


def test_contenders_keep_the_variants_near_the_pick(tmp_path):
    shape = SGEMM.shape(8192, 8192, 8192)
    chooser = best.selector(SGEMM, H200)
    near = suite_plan.contenders(chooser, shape, 1.5)
    ranked = chooser.ranking(shape)
    assert near[0] == ranked[0].variant.name and "v0" not in near and len(near) < len(ranked)
    specs = bench_job.bench_plan(SGEMM, None, {}, [shape], H200, with_best=True, within=1.5)
    assert {s.variant.name for s in specs if s.variant is not None and not s.picked} == set(near)


def test_the_best_spec_survives_the_trip_to_the_worker(tmp_path):
    import pickle

    spec = bench_job.bench_plan(SGEMM, [], {}, [SGEMM.shape(1, 8192, 8192)], tmp_path, with_best=True)[0]
    back = pickle.loads(pickle.dumps(spec))
    assert back.name == "best" and back.picked == spec.picked and back.params == spec.params


def test_api_best_names_each_shapes_pick(tmp_path):
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "tuned.json").write_text(json.dumps({"sgemm": TABLE}))
    heard = []

    class Heard(api.Progress):
        def planned(self, count):
            heard.append(count)

        def started(self, label):
            heard.append(label)

    rows = api.best("sgemm", shapes=["4096x4096x4096", "1x8192x8192", "7x31x1000"], results=tmp_path, gpu="h200",
                    progress=Heard())
    assert [(r["variant"], r["chosen_by"]) for r in rows[:2]] == [("v9", "tuned here"), ("sk", "tuned here")]
    assert rows[2]["chosen_by"].startswith("model: ") and rows[2]["model_ms"] > 0 and rows[2]["variant"]
    assert heard == [3, "best sgemm 4096x4096x4096", "best sgemm 1x8192x8192", "best sgemm 7x31x1000"]


def test_a_tune_the_model_still_puts_first_after_weighing_a_rival_stands_as_tuned(monkeypatch):
    """At 16x8192x28672 ks was tuned (120 us); the model puts d0 in G=1 U=4 (timed at other shapes)
    6% ahead (d0 ran 122 us there in the llm suite). With the margin for a rival at 5%, d0 is weighed,
    but not enough to pass over a config timed there (MEASURED_EDGE): the tuned config stays first,
    and the pick says 'tuned here', not that the tune was passed over for itself. (At the 10% margin,
    d0 is no rival there: before the model capped what a fit lends, it put d0 13% ahead.)"""
    bf16 = get_experiment("gemm_bf16")
    chooser = best.selector(bf16, H200)
    shape = bf16.shape(16, 8192, 28672)
    assert chooser.untuned_rivals(shape, "ks", "16x8192x28672") == []
    monkeypatch.setattr(best, "RIVAL_MARGIN", 0.95)
    assert [e.variant.name for e in chooser.untuned_rivals(shape, "ks", "16x8192x28672")] == ["d0"]
    pick = chooser.pick(shape)
    assert (pick.variant.name, pick.why) == ("ks", "tuned here")


def _unknown_partials_count_nothing(monkeypatch):
    """The model as it stood before split_partials_bytes: a split's partials only where its access
    model says them."""
    monkeypatch.setattr(best, "split_partials_bytes", lambda *args: (args[-1] and args[-1].workspace_bytes) or 0.0)


def test_a_tune_passed_over_yields_only_to_a_config_the_card_has_timed(monkeypatch):
    """At sgemm's 64x4096x4096 sx was tuned; the model without the fixup's series and a split's
    partials where its access model cannot say them (as it stood before serial_fixup_s and
    split_partials_bytes) expects v13, in a config timed on shapes of this kind, 10% faster, and
    passes the tune over. It puts v12, never timed, ahead of v13, and sx in 32-wide tiles (timed
    only on memory-bound shapes) beside it; what overrules a measured tune must be measured too, on
    shapes like this one, so the pick is v13. With the series, v13's 16 slices a tile added one
    after another take that lead away, and the tune stands."""
    shape = SGEMM.shape(64, 4096, 4096)
    assert best.selector(SGEMM, H200).pick(shape).why == "tuned here"
    monkeypatch.setattr(best, "serial_fixup_s", lambda *args: 0.0)
    _unknown_partials_count_nothing(monkeypatch)
    chooser = best.selector(SGEMM, H200)
    ranked = {e.variant.name: e for e in chooser.ranking(shape)}
    assert ranked["v12"].seconds < ranked["v13"].seconds and not chooser.timed_somewhere(ranked["v12"])
    assert chooser.timed_somewhere(ranked["sx"]) and not chooser.timed_alike(ranked["sx"])
    pick = chooser.pick(shape)
    assert pick.why.endswith("sx tuned here passed over: the model expects v13 at least 10% faster")
    assert pick.variant.name == "v13" and chooser.timed_alike(pick.estimate) and best.UNTIMED not in pick.why


def test_a_variant_the_card_timed_at_the_shape_slower_than_the_tune_is_no_rival():
    """At sgemm's 512^3 sx's tune ran 20.2 us and v13, timed there too, 21.8 us; the model puts v13
    in another config (BK = 16, never timed there) more than 10% ahead of the tune on the
    efficiency v13 reached elsewhere. The card measured v13 losing here, so the tune stands."""
    chooser = best.selector(SGEMM, H200)
    shape = SGEMM.shape(512, 512, 512)
    v13 = next(e for e in chooser.ranking(shape) if e.variant.name == "v13")
    tuned_s = chooser.tuned_time("sx", "512x512x512")
    assert v13.seconds < best.RIVAL_MARGIN * tuned_s and chooser.lost_here(v13, shape, tuned_s)
    assert chooser.untuned_rivals(shape, "sx", "512x512x512") == []
    pick = chooser.pick(shape)
    assert (pick.variant.name, pick.why) == ("sx", "tuned here")


G1U4, G2U2 = {"G": 1, "U": 4}, {"G": 2, "U": 2}


def _d0_factor_chooser(fast: dict, slow: dict, slow_time):
    """A Selector on d0 measured at 16x4096x4096 only: `fast` the fastest, at its model's time
    (efficiency 1), and `slow` beside it in the tune, at slow_time(its roof, fast's roof) seconds,
    which must be slower."""
    bf16 = get_experiment("gemm_bf16")
    d0 = bf16.variant("d0")
    fast, slow = d0.completed_params(fast), d0.completed_params(slow)
    at = bf16.shape(16, 4096, 4096)
    bare = best.Selector(bf16, {}, CARD)
    roof_fast, roof_slow = (bare._estimate(d0, p, at, modelled=True, efficiency=(1.0, "")).roof_s for p in (fast, slow))
    fast_run = calibration.Measured("d0", fast, at.values, roof_fast)
    slow_run = calibration.Measured("d0", slow, at.values, slow_time(roof_slow, roof_fast))
    assert slow_run.seconds > fast_run.seconds, "the slower config must have run slower"
    return bf16, d0, fast, slow, best.Selector(bf16, {}, CARD, [fast_run], tune_rows=[fast_run, slow_run])


def test_a_config_that_ran_slower_beside_the_fastest_carries_its_own_ratio_on_memory_bound_shapes():
    """The variant's efficiency is its fastest config's; a config its tune timed beside it at the
    shapes that efficiency comes from is held to its own ratio there (config_factor): half the
    model's rate where the fastest ran at the model's, so half its efficiency, at a decode shape
    of no list. The fastest itself keeps its variant's; a config the tune never timed there takes
    the median of those it did; on a compute-bound shape nothing changes."""
    bf16, d0, fast, slow, chooser = _d0_factor_chooser(G1U4, G2U2, lambda mine, theirs: 2 * max(mine, theirs))
    shape = bf16.shape(7, 4096, 4096)
    assert chooser.shape_class(d0, shape) == "memory"
    factor, why = chooser.config_factor(d0, slow, shape)
    slow_run = next(r for r in chooser._runs_at[("d0", (16, 4096, 4096))] if r.params == slow)
    assert factor == pytest.approx(chooser._ratio(d0, slow_run)) and factor < 1 and "at 16x4096x4096" in why
    assert chooser.config_factor(d0, fast, shape) is None
    untimed = d0.completed_params({"G": 4, "U": 1})
    assert chooser.config_factor(d0, untimed, shape)[0] == pytest.approx((1 + factor) / 2)  # the median of the two
    est = chooser._estimate(d0, slow, shape, modelled=True)
    plain = chooser.efficiency(d0, shape, slow, est.roof_s)[0]
    assert est.efficiency == pytest.approx(factor * plain) and why in est.efficiency_from
    assert chooser.config_factor(d0, slow, bf16.shape(4096, 4096, 4096)) is None


def test_a_config_factor_never_lifts_a_config_above_its_variants_fastest():
    """A config that ran slower than the fastest where the model expected it slower still (its
    ratio of model over measured time above the fastest's) is not taken to run faster elsewhere:
    the factor is at most 1 (uncapped, kc in 256-wide tiles, lifted so, became the pick at
    128x4096x1000 and ran 1.30x the pick before)."""
    # The stand-in card models G=2 U=2 slower than G=1 U=4 at 16x4096x4096: timed between the two
    # models' times, it ran slower than G=1 U=4 and faster than its own model.
    bf16, d0, fast, slow, chooser = _d0_factor_chooser(G1U4, G2U2, lambda mine, theirs: (mine + theirs) / 2)
    slow_run = next(r for r in chooser._runs_at[("d0", (16, 4096, 4096))] if r.params == slow)
    assert chooser._ratio(d0, slow_run) > 1, "the model must expect this config slower than it ran"
    assert chooser.config_factor(d0, slow, bf16.shape(7, 4096, 4096)) is None


def test_a_config_factor_is_read_only_where_the_config_filled_the_sms_alike():
    """At 128 tokens t3 in 256-wide tiles leaves most SMs idle where N is small (24 tiles at N = 6144)
    and fills them where N is large (224 at 57344): its standing beside 128-wide tiles at the one
    says nothing of the other. At 128x28672x4096 (112 tiles, 0.85 of the SMs) its factor is read at
    57344 alone, where it ran fastest, not with the half it ran at 6144 (read so on the H200's
    tunes it put 256-wide tiles behind there, where they ran fastest: 65.5 against 71.6 us); at
    128x5120x4096 (20 tiles) it is read at 6144."""
    bf16 = get_experiment("gemm_bf16")
    t3 = bf16.variant("t3")
    narrow, wide = (t3.completed_params({"BM": 128, "BN": bn, "STAGES": 4}) for bn in (128, 256))
    bare = best.Selector(bf16, {}, CARD)

    def run(params, values, slower: bool) -> calibration.Measured:
        roofs = [bare._estimate(t3, p, bf16.shape(*values), modelled=True, efficiency=(1.0, "")).roof_s
                 for p in (narrow, wide)]
        mine = roofs[(narrow, wide).index(params)]
        return calibration.Measured("t3", params, values, 2 * max(roofs) if slower else mine)

    few, many = (128, 6144, 4096), (128, 57344, 8192)
    tune = [run(narrow, few, False), run(wide, few, True), run(wide, many, False), run(narrow, many, True)]
    chooser = best.Selector(bf16, {}, CARD, [tune[0], tune[2]], tune_rows=tune)
    between = bf16.shape(128, 28672, 4096)
    assert chooser.shape_class(t3, between) == "memory"
    assert chooser.config_factor(t3, wide, between) is None  # 1 where it filled the SMs alike
    assert "(at 128x57344x8192)" in chooser.config_factor(t3, narrow, between)[1]
    factor, why = chooser.config_factor(t3, wide, bf16.shape(128, 5120, 4096))
    assert factor < 0.75 and "(at 128x6144x4096)" in why


def test_a_config_factor_is_read_only_where_the_warps_chains_of_steps_stood_alike():
    """d0's warps split K: in KW = 4 a warp runs twice the steps of KW = 8. At 1x4096x4096 (256
    blocks, one round of either) that chain is twice as long, and KW = 4 ran there at half its
    model's rate; at 1x8192x8192 KW = 8 runs two rounds (2 blocks an SM hold, 4 of KW = 4) of half
    the steps, the chains are as long, and both ran at the model's rate. At 1x6144x4096 the chains
    are as long again (KW = 8 in two rounds): KW = 4's standing is read at 1x8192x8192, not at
    1x4096x4096 (read there, it ran 1.06x KW = 8's time at 1x6144x4096 on the H200 and lost the
    pick); at 1x4096x6144, one round of twice the steps as at 1x4096x4096, it is read there."""
    bf16 = get_experiment("gemm_bf16")
    d0 = bf16.variant("d0")
    kw4, kw8 = (d0.completed_params(G1U4 | {"KW": kw, "S": 0, "MINB": 1}) for kw in (4, 8))
    assert d0.warp_k_steps(kw4, bf16.shape(1, 4096, 4096)) == 2 * d0.warp_k_steps(kw8, bf16.shape(1, 4096, 4096))
    bare = best.Selector(bf16, {}, CARD)

    def run(params, values, slowdown: float) -> calibration.Measured:
        roof = bare._estimate(d0, params, bf16.shape(*values), modelled=True, efficiency=(1.0, "")).roof_s
        return calibration.Measured("d0", params, values, slowdown * roof, resident=4 if params is kw4 else 2)

    small, large = (1, 4096, 4096), (1, 8192, 8192)
    tune = [run(kw8, small, 1.0), run(kw4, small, 2.0), run(kw8, large, 1.0), run(kw4, large, 1.0)]
    chooser = best.Selector(bf16, {}, CARD, [tune[0], tune[2]], tune_rows=tune)
    alike = bf16.shape(1, 6144, 4096)
    assert chooser.shape_class(d0, alike) == "memory"
    assert chooser._chain(d0, kw4, alike, CARD) == chooser._chain(d0, kw8, alike, CARD)
    assert chooser.config_factor(d0, kw4, alike) is None  # read at 1x8192x8192: 1
    factor, why = chooser.config_factor(d0, kw4, bf16.shape(1, 4096, 6144))
    assert factor == pytest.approx(0.5, rel=0.05) and "(at 1x4096x4096)" in why


def test_a_config_too_large_to_evaluate_splits_as_its_sibling_of_the_same_launch_does():
    """sgemm's v14 in STORE=0 (stores from registers: too many lanes for the access model here) runs
    its persistent blocks over whole tiles, as STORE=1 does. Read as partials unknown, it counted as
    stream-K: at 1000x3000x777 its 192 tiles shared evenly over 132 blocks, modelled 1.375x faster
    than STORE=1 and picked on a fresh H100, where it ran 132 us in two rounds and STORE=1 (in
    clusters of two) 80 (2026-12-06). Now it ties STORE=1, in two rounds, and its bytes count as its
    launch's. t4's stream-K, which the model declines, still shares its tiles evenly, its bytes
    borrowed."""
    v14 = SGEMM.variant("v14")
    chooser = best.Selector(SGEMM, {}, CARD)
    shape = SGEMM.shape(1000, 3000, 777)
    store0, store1 = (v14.completed_params({"BM": 128, "BN": 128, "STAGES": 5, "CLUSTER": 1, "STORE": store,
                                            "SCHEDULE": 0}) for store in (0, 1))
    mine, sibling = (chooser._estimate(v14, p, shape, modelled=True, efficiency=(1.0, "")) for p in (store0, store1))
    assert "too large to evaluate" in mine.note and "partials of STORE=1" in mine.note
    assert not mine.balanced and mine.quantization == pytest.approx(2 * CARD.sms / 192)
    assert mine.seconds == pytest.approx(sibling.seconds) and not mine.borrowed

    bf16 = get_experiment("gemm_bf16")
    t4 = bf16.variant("t4")
    stream_k = t4.completed_params({"BN": 256, "CLUSTER": 2, "SCHEDULE": 1})
    declined = best.Selector(bf16, {}, CARD)._estimate(t4, stream_k, bf16.shape(1024, 8192, 8192), modelled=True,
                                                       efficiency=(1.0, ""))
    assert declined.balanced and declined.borrowed and cost.DECLINED in declined.note


def test_configs_the_model_times_alike_do_not_use_up_a_variants_turns():
    """On the H200's results, sgemm at 1536x1600x6400, v14 as it was before it declared its
    SCHEDULE (Variant.stream_k_param): the guess counts its persistent grid as stream-K, so its
    128-wide tiles (156 tiles, 1.2 rounds on 132 blocks) come first in six configs that differ in
    what the model cannot see (STAGES, STORE, GROUP_M, CLUSTER) and all model alike. They took every
    turn, and the 192-wide tiles (108 tiles, one round) were never weighed; counted once, they are,
    and picked: 440 us on an H100 where the 128-wide tiles ran 594 (2026-12-06). With SCHEDULE
    declared, the guess itself puts the 192-wide tiles first."""
    shape = SGEMM.shape(1536, 1600, 6400)
    undeclared = dataclasses.replace(SGEMM.variant("v14"), stream_k_param="")
    sgemm = copy.copy(SGEMM)
    sgemm.variants = tuple(undeclared if v.name == "v14" else v for v in SGEMM.variants)
    for experiment, widths in ((sgemm, {128, 192}), (SGEMM, {192})):
        chooser = best.selector(experiment, H200)
        v14 = [e for e in chooser.estimates(shape) if e.variant.name == "v14"]
        assert {e.params["BN"] for e in v14} == widths
        pick = chooser.pick(shape)
        assert (pick.variant.name, pick.params["BN"]) == ("v14", 192), pick.why


def test_decode_shapes_of_no_list_pick_the_d0_config_that_ran_fastest_beside_it():
    """On the H200's results: at 1x5120x3000 and 7x4096x4096 (no suite, tune or calibration row
    has them) d0's pick is a G=1 U=4 config, its tune's fastest at the decode shapes nearest, not
    G=2 U=2, which the model alone ranks first and which ran 1.18-1.36x their time there (gpulab ab
    on an H100, 2026-12-05): G=2 U=2's estimate carries its standing beside the fastest, and says so."""
    chooser = best.selector(get_experiment("gemm_bf16"), H200)
    d0 = chooser.experiment.variant("d0")
    for shape in ((1, 5120, 3000), (7, 4096, 4096)):
        at = chooser.experiment.shape(*shape)
        pick = chooser.pick(at)
        assert (pick.variant.name, pick.params["G"], pick.params["U"]) == ("d0", 1, 4), shape
        g2u2 = pick.params | {"G": 2, "U": 2, "KW": 8, "MINB": 2}
        factor, why = chooser.config_factor(d0, g2u2, at)
        assert factor < 0.95 and why in chooser._estimate(d0, g2u2, at, modelled=True).efficiency_from
        assert "its variant's fastest where both ran" in why


def test_a_config_timed_only_on_the_other_kind_of_shape_is_no_evidence_here():
    """sx in 128 x 32 tiles was tuned and timed only where N <= 33, memory-bound shapes in FP32. At
    128x4096x4096 (compute-bound) the model puts it 1% ahead of v13, on the efficiency sx's 64-wide
    tiles measured; that it ran elsewhere shows nothing of this kind of shape, so v13, timed on
    compute-bound shapes, is the pick (on an H100 the 32-wide config ran 1.30x v13's time there,
    2026-12-05)."""
    chooser = best.selector(SGEMM, H200)
    shape = SGEMM.shape(128, 4096, 4096)
    sx = SGEMM.variant("sx")
    narrow = sx.completed_params({"BM": 128, "BN": 32, "BK": 16, "WM": 32, "WN": 32, "WNITER": 1, "TM": 4, "TN": 4,
                                  "STAGES": 4, "MINB": 3, "GROUP_M": 4, "S": 4})
    est = chooser._estimate(sx, narrow, shape, modelled=True)
    assert chooser.shape_class(sx, shape) == "compute"
    assert chooser.timed_somewhere(est) and not chooser.timed_alike(est)
    assert best_records.timed_where(chooser, est) == "other kind only"
    assert chooser.pick(shape).variant.name == "v13"


def test_a_pick_the_card_never_timed_says_so():
    """At 1536x31x2048 (a narrow head; no tune near) the model's pick is a config no run on the card
    had: chosen_by says so, since its efficiency is its variant's, borrowed. A config timed
    elsewhere (v12 at 128x4096x1000) carries no such word. (2048x31x4096 was this shape until sx was
    tuned there, 2026-12-05.)"""
    chooser = best.selector(SGEMM, H200)
    narrow = chooser.pick(SGEMM.shape(1536, 31, 2048))
    assert not chooser.timed_somewhere(narrow.estimate) and narrow.why.endswith(best.UNTIMED)
    timed = chooser.pick(SGEMM.shape(128, 4096, 1000))
    assert chooser.timed_somewhere(timed.estimate) and best.UNTIMED not in timed.why


def test_api_ranking_shows_what_the_model_weighed_and_marks_the_pick():
    """At 4096x64x4096 sx was tuned (the pick, 'tuned here'); the model puts configs it never timed
    at this shape ahead of it (v12's, v13's, sx's 32-wide tiles timed at 2048x31x4096), which the
    ranking shows with 'never' or 'on this card' beside them. One row per variant that runs the
    shape, in the model's order, and the pick marked once, in a row of its own where the model
    ranks its variant's best config above it."""
    rows = api.best("sgemm", shapes=["4096x64x4096"], results=ROOT / "results", gpu="h200", ranking=True).ranking
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert min(r["vs_fastest"] for r in rows) == 1.0
    picks = [r for r in rows if r["picked"]]
    assert len(picks) == 1 and picks[0]["variant"] == "sx" and picks[0]["timed"] == "at this shape"
    others = [r for r in rows if not r["picked"]]
    assert len({r["variant"] for r in others}) == len(others) >= 10
    ahead = rows[:picks[0]["rank"] - 1]
    assert ahead and all(r["timed"] in ("never", "on this card", "other kind only") for r in ahead)
    assert {r["timed"] for r in rows} <= {"at this shape", "on this card", "other kind only", "never"}
    assert all(r["bound"] in ("compute", "DRAM", "L2") and r["efficiency"] > 0 for r in rows)


def test_api_ranking_names_the_variants_left_out_and_why():
    """At 300 rows gv is not weighed (Variant.best_refusal): the ranking has no row of it, and
    `.not_weighed` says why, as `gpulab best --ranking` prints under its table."""
    rows = api.best("sgemm", shapes=["300x31x2048", "1x8192x8192"], results=ROOT / "results", gpu="h200",
                    ranking=True)
    assert "gv" not in {r["variant"] for r in rows.ranking if r["shape"] == "300x31x2048"}
    assert [(r["shape"], r["variant"]) for r in rows.not_weighed] == [("300x31x2048", "gv")]
    assert "16 rows" in rows.not_weighed[0]["why"]


def test_a_tuned_pick_the_model_ranks_below_its_variants_best_is_still_shown():
    """At 1000x3000x776 t4 is picked as tuned there (BN=200 in clusters of 4); the model's best t4
    config there is another (BN=192, timed at 777), so the ranking adds the pick's own row."""
    rows = api.best("gemm_bf16", shapes=["1000x3000x776"], results=ROOT / "results", gpu="h200", ranking=True).ranking
    t4 = [r for r in rows if r["variant"] == "t4"]
    assert len(t4) == 2 and [r["picked"] for r in t4] == [False, True]
    assert "CLUSTER=4" in t4[1]["params"]


def test_api_best_on_a_suite_carries_its_columns():
    rows = api.best("gemm_bf16", suite="llm", results=ROOT / "results", gpu="h200")
    assert len(rows) == 40 and all(r["variant"] and r["suite"] == "llm" for r in rows)
    assert rows[0]["layer"] == "Llama-3-8B qkv" and rows[0]["shape"] == "1x6144x4096"
    with pytest.raises(Exception, match="no results for card 'nocard'"):
        api.best("gemm_bf16", suite="llm", results=ROOT / "results", gpu="nocard")


def test_tune_targets_are_the_models_top_variants_at_each_shape():
    chooser = best.selector(SGEMM, H200)
    shapes = [SGEMM.shape(1, 6144, 4096), SGEMM.shape(8192, 8192, 8192)]
    targets = suite_plan.tune_targets(chooser, shapes, top=2)
    for shape in shapes:
        top = [e.variant.name for e in chooser.ranking(shape)[:2]]
        assert all(shape in targets[name] for name in top)
    assert sum(len(v) for v in targets.values()) == 4


def test_pct_of_copy_only_on_memory_bound_shapes():
    from gpulab.records.ceilings import attach
    from gpulab.records.ceilings import load as load_ceilings

    ceilings = load_ceilings(H200 / "ceilings.csv")  # measured: ridge ~15 flop/byte
    gemv = {"time_ms": 0.1, "gflops": 1300.0, "gbps": 2600.0}  # 0.5 flop/byte
    square = {"time_ms": 3.0, "gflops": 48000.0, "gbps": 70.0}
    rows = attach_copy(attach([gemv, square], SGEMM, ceilings), SGEMM, ceilings)
    assert rows[0]["pct_of_copy"] == pytest.approx(100 * 2600 / ceilings.copy_gbps)
    assert "pct_of_copy" not in rows[1]
    fresh = {"time_ms": 0.1, "gflops": 1300.0, "gbps": 2600.0}
    assert "pct_of_copy" not in attach_copy([fresh], SGEMM, None)[0]
    assert "pct_of_copy" not in attach_copy([dict(fresh)], SGEMM, ceilings)[0]  # no compute ceiling attached


def test_the_readme_block_has_one_line_per_shape_with_the_best_row(tmp_path):
    from gpulab.records import write_csv
    from gpulab.report.markdown import best_block, readme_blocks

    base = {"experiment": "sgemm", "correct": True, "gpu": "NVIDIA H200", "date": "2026-12-01T06:00:00+00:00"}
    rows = [base | {"variant": "best", "picked": "sk (tuned at 1x8192x8192)", "params": "BM=1 BN=32",
                    "shape": "1x8192x8192", "time_ms": 0.07, "gflops": 1917.0, "gbps": 3835.0,
                    "pct_of_cublas": 88.0, "pct_of_copy": 89.2},
            base | {"variant": "cublas", "params": "", "shape": "1x8192x8192", "time_ms": 0.06, "gflops": 2200.0,
                    "gbps": 4400.0},
            base | {"variant": "best", "picked": "v9", "chosen_by": "tuned at 4096x4096x4096", "params": "BM=64",
                    "shape": "4096x4096x4096", "time_ms": 2.9, "gflops": 47000.0, "gbps": 70.0, "pct_of_cublas": 93.0}]
    (tmp_path / "h200").mkdir()
    write_csv(tmp_path / "h200" / "sgemm.csv", rows)
    block = best_block(tmp_path / "h200" / "sgemm.csv")
    assert "| 1x8192x8192 | sk (tuned at 1x8192x8192) BM=1 BN=32 | 1,917 | 88.0% | 89.2% (copy) |" in block
    assert "| 4096x4096x4096 | v9 (tuned at 4096x4096x4096) BM=64 | 47,000 | 93.0% |  |" in block
    assert readme_blocks(tmp_path)["h200-sgemm-best"] == block
    write_csv(tmp_path / "h200" / "sgemm.csv", rows[1:2])
    assert "h200-sgemm-best" not in readme_blocks(tmp_path)


def test_a_memory_bound_experiments_best_block_gives_gb_per_s_and_no_vendor_column(tmp_path):
    from gpulab.records import write_csv
    from gpulab.report.markdown import best_block

    row = {"experiment": "stencil", "variant": "best", "picked": "shfl", "params": "R=3 PER=16 HINT=0",
           "shape": "67108864", "correct": True, "time_ms": 0.129, "gbps": 4169.3, "pct_of_ceiling": 96.8,
           "ceiling": "copy_kernel", "gpu": "NVIDIA H200", "date": "2026-12-04T18:31:15+00:00"}
    write_csv(tmp_path / "stencil.csv", [row])
    block = best_block(tmp_path / "stencil.csv")
    assert block.startswith("| shape | gpulab best ran | GB/s | % of ceiling |\n|---|---|---|---|\n")
    assert "| 67108864 | shfl R=3 PER=16 HINT=0 | 4,169.3 | 96.8% (copy_kernel) |" in block



def test_a_tune_of_one_variant_names_the_rivals_the_model_expects_faster(tmp_path):
    """After call 6's tune of t4 alone at 128x6144x4096 (H200, 2026-12-04; the llm suite measured its
    config 20% slower than kc there), the tune names kc, says the best row there is the model's
    choice, and gives the command that would let the card decide. At 4096^3, where t4's tuned config is the
    fastest the model knows of, and at 1000x3000x777, where the model puts t3 5% ahead (within its
    margin: its times are estimates), it says nothing."""
    import types

    from gpulab.cli import _untuned_rivals

    bf16 = get_experiment("gemm_bf16")
    t4 = bf16.variant("t4")
    folder = _h200_before_llm_tunes(tmp_path)
    table = load_tuned(folder)["gemm_bf16"]["t4"]["by_shape"]
    plan = types.SimpleNamespace(experiment=bf16, variant=t4, folder=folder)
    skinny = _untuned_rivals(plan, types.SimpleNamespace(by_shape={"128x6144x4096": table["128x6144x4096"]}))
    assert len(skinny) == 1 and "the model expects kc" in skinny[0]
    assert "gpulab tune gemm_bf16 kc --shape 128x6144x4096" in skinny[0]
    for label in ("4096x4096x4096", "1000x3000x777"):
        assert _untuned_rivals(plan, types.SimpleNamespace(by_shape={label: table[label]})) == [], label


def test_a_tune_of_one_variant_yields_where_the_model_expects_a_rival_well_ahead(tmp_path):
    """Rule 1 trusts a tune to say which config of its variant is best, not which variant: at
    128x6144x4096 only t4 was tuned (call 6, H200, 2026-12-04), and the model, on the card's
    calibration rows, expects kc more than 10% faster than t4's tuned time; the llm suite measured kc
    there at 0.0224 ms against t4's 0.0273 (call 10). So the model picks, the tuned config among its
    candidates, and chosen_by says what was passed over. Where t4's tune is the fastest the model
    knows of (4096^3) rule 1 still holds, and a rival with nothing measured (the bare model, an
    optimistic bound) never overrules a tune (the stand-in table above)."""
    bf16 = get_experiment("gemm_bf16")
    chooser = best.selector(bf16, _h200_before_llm_tunes(tmp_path))
    skinny = chooser.pick(bf16.shape(128, 6144, 4096))
    assert skinny.variant.name == "kc" and skinny.why.startswith("model: ")
    assert skinny.why.endswith("t4 tuned here passed over: the model expects kc at least 10% faster")
    square = chooser.pick(bf16.shape(4096, 4096, 4096))
    assert (square.variant.name, square.why) == ("t4", "tuned here")
    bare = best.pick(SGEMM, TABLE, SGEMM.shape(4096, 4096, 4096))
    assert (bare.variant.name, bare.why) == ("v9", "tuned here")


def test_tiles_mostly_padding_are_calibrated_on_runs_that_were():
    """A tile of 128 rows at M = 16 is seven eighths padding; t3, t4 and kc run such tiles slower
    than their model says, more than where the tile is full. So a config whose tiles are mostly
    padding (fewer than BM / 4 rows real) takes its variant's efficiency from runs that were too: at
    16x8192x8192 t4 in clusters of one (BM = 128) reads 0.59-0.61 from its runs at M = 1 and 4 (H200,
    2026-12-04), not the 0.89 of 64x8192x8192, where its tiles were half full; the llm suite measured
    it there at 1.62x d0's time (call 10), and d0 is the pick. A kernel without row tiles (d0) is
    never 'padded'."""
    bf16, chooser = _bf16_chooser()
    t4 = bf16.variant("t4")
    c1 = t4.default_params() | {"BM": 128, "BN": 128, "CLUSTER": 1}
    assert cost.mostly_padding(bf16, c1, (16, 8192, 8192)) and not cost.mostly_padding(bf16, c1, (64, 8192, 8192))
    assert cost.mostly_padding(bf16, c1, (31, 64, 64)) and not cost.mostly_padding(bf16, c1, (32, 64, 64))  # a quarter
    assert not cost.mostly_padding(bf16, c1, (129, 64, 64))  # two tiles for 129 rows: half of their rows real
    assert not cost.mostly_padding(bf16, bf16.variant("d0").default_params(), (1, 8192, 8192))
    eff, source = chooser.efficiency(t4, bf16.shape(16, 8192, 8192), c1)
    assert 0.55 < eff < 0.65 and source.startswith("from 4x16384x8192"), source
    assert chooser.pick(bf16.shape(16, 8192, 8192)).variant.name in ("d0", "ks")  # a stream of Bt, not padded tiles


def test_a_config_timed_on_the_card_wins_a_near_tie_over_one_never_timed(tmp_path):
    """d0 in G=4 U=1 was never timed; the model put it 0.7% ahead of G=2 U=2 (timed at eight shapes)
    at 1x10240x8192 (9% since G=2 U=2's last wave of 56 blocks in 264 slots counts), where the llm suite measured it at 1.32x G=2 U=2's time (H200, 2026-12-04). Within
    MEASURED_EDGE the config with runs of its own is the pick."""
    bf16, chooser = _bf16_chooser(_h200_before_llm_tunes(tmp_path))
    shape = bf16.shape(1, 10240, 8192)
    d0 = [e for e in chooser.estimates(shape) + chooser.ranking(shape) if e.variant.name == "d0"]
    untimed = [e for e in d0 if not chooser.timed_somewhere(e)]
    timed = [e for e in d0 if chooser.timed_somewhere(e)]
    assert untimed and timed and min(e.seconds for e in untimed) < min(e.seconds for e in timed)
    assert min(e.seconds for e in timed) < (1 + best.MEASURED_EDGE) * min(e.seconds for e in untimed)
    pick = chooser.pick(shape)
    assert pick.variant.name == "d0" and (pick.params["G"], pick.params["U"]) == (2, 2)


def test_a_run_very_near_in_size_but_not_in_what_the_kernel_does_is_not_the_configs_own(tmp_path):
    """t0 reads rows of K = 777 elements (odd) a few bytes at a time: its access model counts 7x the
    L2 bytes of K = 776, and it ran 65 us at 1000x3000x777 (H200, 2026-12-04), faster than that
    model. Read as its own efficiency at 1000x3000x776 (shape_distance 0.002), it put t0 at 9 us
    there and passed over t4's tune (15 us, the fastest row timed): a run speaks for a shape very near
    only where the model's time per FLOP is within SAME_REGIME of the shape's. At 777 itself it
    still does."""
    bf16 = get_experiment("gemm_bf16")
    chooser = best.selector(bf16, H200)
    t0 = bf16.variant("t0")
    params = t0.completed_params({"BM": 128, "BN": 128, "BK": 64, "WM": 32, "WN": 32})
    assert chooser.measured_here(t0, params, bf16.shape(1000, 3000, 776)) is None
    here = chooser.measured_here(t0, params, bf16.shape(1000, 3000, 777))
    assert here is not None and here[1] == "measured for this config at 1000x3000x777"
    pick = chooser.pick(bf16.shape(1000, 3000, 776))
    assert (pick.variant.name, pick.why) == ("t4", "tuned here")


def test_a_rival_that_overrules_a_tune_is_a_config_the_card_has_timed(monkeypatch):
    """A tune's fastest config is measured; a rival the model expects 10% faster overrules it only
    where the rival's config was timed on the card somewhere (its efficiency its own, not borrowed
    from its variant's other configs). At sgemm's 4096x64x4096 the model put v12 in MINB=3, never
    timed, at 2x v12's speed in the config timed there, and passed over sx's tune; v12 had run 1.87x
    sx's time at that shape (H200, 2026-12-04). Counting v12's partials where its access model cannot
    say them (split_partials_bytes) took that lead away; the rule is checked on the model before it."""
    shape = SGEMM.shape(4096, 64, 4096)
    assert best.selector(SGEMM, H200).pick(shape).why == "tuned here"
    _unknown_partials_count_nothing(monkeypatch)
    chooser = best.selector(SGEMM, H200)
    pick = chooser.pick(shape)
    assert (pick.variant.name, pick.why) == ("sx", "tuned here")
    tuned_s = chooser.tuned_time("sx", "4096x64x4096")
    ahead = [e for e in chooser.ranking(shape) if e.seconds < best.RIVAL_MARGIN * tuned_s and e.variant.name != "sx"]
    assert ahead and all(not chooser.timed_somewhere(e) for e in ahead)  # what the rule turned away


def test_a_lead_the_model_gives_a_config_never_timed_must_pass_its_noise(monkeypatch):
    """At sgemm's 128x4096x1000, a shape of no list, the model put v12 in MINB=3 (never timed) 15%
    ahead of MINB=2 (timed at other shapes); the card ran MINB=3 at 1.08x MINB=2's time there (H200,
    notebook/probes/unlisted/call15/). Across the tunes' configs, leads of 8-12% for a config never
    timed went the other way on average (MEASURED_EDGE's comment): under MEASURED_EDGE the timed
    config is the pick. Counting the partials of v12's stream-K where its access model cannot say
    them (split_partials_bytes: MINB=3's 396 blocks store more of them) now puts MINB=2 ahead by
    itself; the rule is checked on the model before it."""
    shape = SGEMM.shape(128, 4096, 1000)
    v12 = SGEMM.variant("v12")
    counted = best.selector(SGEMM, H200)
    ranked = next(e for e in counted.ranking(shape) if e.variant is v12)
    two, three = (counted._estimate(v12, ranked.params | {"MINB": m}, shape, modelled=True) for m in (2, 3))
    assert ranked.params["MINB"] == 2 and two.seconds < three.seconds
    _unknown_partials_count_nothing(monkeypatch)
    chooser = best.selector(SGEMM, H200)
    pick = chooser.pick(shape)
    assert (pick.variant.name, pick.params["MINB"]) == ("v12", 2)
    timed, untimed = (chooser._estimate(v12, pick.params | {"MINB": m}, shape, modelled=True) for m in (2, 3))
    assert chooser.timed_somewhere(timed) and not chooser.timed_somewhere(untimed)
    assert 1.08 < timed.seconds / untimed.seconds < 1 + best.MEASURED_EDGE


def test_a_fixed_cost_fit_recovers_the_line_and_declines_what_is_no_fixed_cost():
    line = [(x, 1.05 * x + 9e-6, 1.0) for x in (10e-6, 40e-6, 200e-6)]  # one round each: a cost per launch
    slope, fixed = calibration.fixed_cost_fit(line)
    assert slope == pytest.approx(1.05) and fixed == pytest.approx(9e-6)
    assert calibration.fixed_cost_fit(line[:1]) is None  # one run: no line
    assert calibration.fixed_cost_fit([(10e-6, 20e-6, 1.0), (12e-6, 22e-6, 1.0)]) is None  # the model's times too close
    assert calibration.fixed_cost_fit([(10e-6, 10e-6, 1.0), (100e-6, 150e-6, 1.0)]) is None  # a fixed cost below zero


def test_a_fixed_cost_given_leaves_the_slope_to_fit():
    """With the kernel's fixed cost a round given, only the slope is fitted, from one run on."""
    runs = [(20e-6, 2.2 * 20e-6 + 7e-6, 1.0), (60e-6, 2.2 * 60e-6 + 14e-6, 2.0)]
    assert calibration.fixed_cost_fit(runs, 7e-6) == pytest.approx((2.2, 7e-6))
    assert calibration.fixed_cost_fit(runs[:1], 7e-6) == pytest.approx((2.2, 7e-6))
    assert calibration.fixed_cost_fit(runs, 200e-6) is None  # more than the runs took: no slope


def test_a_padded_config_pays_its_kernels_fixed_cost():
    """kc at 7x3000x1000 (7 rows in 128-row tiles, split four ways): its padded runs on the H200
    (8x12288x4096, 16x5120x5120, 4x16384x8192: 15-62 us modelled) fit 2.6 us a round and 2.4x the
    model, which put it at 6.5 us (1.6 modelled), ahead of d0; it ran 11.6 us on an H100 and d0 in
    G=2 U=2 7.9 (2026-12-06, notebook/probes/fixup/call81-h100/). Its other runs fit 7.3 us a round:
    the kernel's fixed cost, whatever its rows hold, so the padded runs now give the slope alone."""
    bf16 = get_experiment("gemm_bf16")
    chooser = best.selector(bf16, H200)
    shape, kc = bf16.shape(7, 3000, 1000), bf16.variant("kc")
    padded = chooser._own_efficiency(kc, shape, "memory", True)
    whole = chooser._own_efficiency(kc, shape, "memory", False)
    assert padded.fit[1] == whole.fit[1] == pytest.approx(7.33e-6, rel=0.01)
    est = chooser._estimate(kc, kc.default_params() | {"SPLIT": 4}, shape, modelled=True)
    assert est.seconds > 10e-6 and "7.33 us a round" in est.efficiency_from
    assert chooser.pick(shape).variant.name != "kc"


def test_the_fixed_cost_is_paid_once_a_round():
    """Runs of one, two and three rounds (blocks the busiest SM runs one after another) at 1.02x the
    model plus 3 us a round: the fit recovers both, and a candidate of two rounds is lent less than
    one of one at the same modelled time."""
    runs = [(20e-6, 1.02 * 20e-6 + 3e-6, 1.0), (45e-6, 1.02 * 45e-6 + 6e-6, 2.0), (90e-6, 1.02 * 90e-6 + 9e-6, 3.0)]
    slope, fixed = calibration.fixed_cost_fit(runs)
    assert slope == pytest.approx(1.02) and fixed == pytest.approx(3e-6)
    cal = calibration.Calibration(0.9, "from here", (slope, fixed))
    one, _ = cal.at(40e-6, 1.0)
    two, where = cal.at(40e-6, 2.0)
    assert two == pytest.approx(40 / (1.02 * 40 + 6)) and one == pytest.approx(40 / (1.02 * 40 + 3))
    assert "3 us a round + 1.02x the model" in where


def test_a_fit_lends_no_more_than_its_runs_reached_or_the_model_allows():
    """A fit whose slope is under 1 lends ever more efficiency past its runs (0.64x the model plus
    17 us lends 1.5 at ten times their size): capped at the highest its runs reached, or 1 where
    they stayed under the model."""
    cal = calibration.Calibration(0.95, "from there", (0.64, 17e-6), most=1.09)
    assert cal.at(1e-3)[0] == pytest.approx(1.09)
    assert cal.at(30e-6)[0] == pytest.approx(30 / (0.64 * 30 + 17))  # inside its runs: the line's own
    bf16, _ = _bf16_chooser()
    unseen = model_errors.Unseen(bf16, H200).selector(bf16.shape(128, 8192, 28672))
    t3 = unseen._estimate(bf16.variant("t3"), {"BM": 128, "BN": 128, "STAGES": 5, "GROUP_M": 4},
                          bf16.shape(128, 8192, 28672), modelled=True)
    # the llm suite ran this config there in 0.150 ms (H200, 2026-12-06): lent 1.36 uncapped, it was put at 0.126
    assert t3.efficiency <= max(1.0, *(r for r in _own_ratios(unseen, "t3", t3.shape)))
    assert t3.seconds > 0.14e-3


def test_gv_at_one_token_is_not_lent_the_efficiency_of_passes_counted_once():
    """gv at 4 to 16 rows in one-row blocks reads B once a row block from DRAM; counted as one pass it
    ran at 0.45 of its model, and the median of those runs put gv at 143 us at 1x8192x8192 knowing
    nothing there, where it ran 64.3 (H200, 2026-12-05). Its passes counted, the model alone puts it
    within 10% of that; on a fresh H100 it had picked sx there, which ran 1.46x gv's time (call 94)."""
    shape = SGEMM.shape(1, 8192, 8192)
    unseen = model_errors.Unseen(SGEMM, H200).selector(shape)
    gv = unseen._estimate(SGEMM.variant("gv"), {"BM": 1, "CT": 32, "KT": 8, "U": 8, "S": 16, "MINB": 2}, shape,
                          modelled=True)
    assert gv.seconds == pytest.approx(64.3e-6, rel=0.10)
    assert unseen.pick(shape).variant.name == "gv"


def test_configs_that_differ_only_in_a_param_idle_at_the_shape_are_weighed_as_one():
    """t4 with EDGE = 2 where no rows or columns lie past whole tiles runs the tiles of EDGE = 0: the
    model ties them. Its tune had recorded BN = 192 with EDGE = 2 at 1000x3000x777, and the model alone
    at 1024x6144x4096 (H200) picked that form, never timed there, where BN = 192 with EDGE = 0 ran
    72.3 us, the fastest gpulab row (the tie went to whichever the seeds listed first)."""
    bf16 = get_experiment("gemm_bf16")
    shape = bf16.shape(1024, 6144, 4096)
    unseen = model_errors.Unseen(bf16, H200).selector(shape)
    t4 = bf16.variant("t4")
    assert all(p["EDGE"] == 0 for p in unseen.configs(t4, shape))
    pick = unseen.pick(shape)
    assert (pick.variant.name, pick.params["BN"], pick.params["EDGE"]) == ("t4", 192, 0)


def test_gv_is_weighed_only_for_a_decode_batch():
    """gv's runs at 1 to 16 rows lent it an efficiency that put it at 3-5 us at 300x31x1000 and
    300x31x2048, where it ran 24-74 us in every row block and slice count tried and sx's 32-wide
    tiles 14.0 and 15.0 (an H100 as a fresh card, 2026-12-07, calls 96 and 98). Past 16 rows the
    best row's model leaves it out and says so; bench still runs it there."""
    chooser = best.selector(SGEMM, H200)
    gv = SGEMM.variant("gv")
    for m, n, k in ((300, 31, 1000), (300, 31, 2048)):
        shape = SGEMM.shape(m, n, k)
        assert chooser.configs(gv, shape) == [] and "16 rows" in chooser.refusal(gv, shape)
        assert chooser.pick(shape).variant.name == "sx"
    assert gv.constraints(gv.default_params(), SGEMM.shape(300, 31, 2048)) is None  # it still runs there
    assert chooser.configs(gv, SGEMM.shape(16, 5120, 5120)) and chooser.pick(SGEMM.shape(1, 8192, 8192)).variant.name == "gv"


def test_sk_waits_on_its_own_loads_every_k_step():
    """sk keeps one k tile in flight in registers and passes a barrier every tile, so at a launch of
    one block an SM each step costs about a load's latency. Without that floor the model put it at
    4.4 us at 1x31x1000 (its efficiency lent from 1x8192x8192) and picked it; on a fresh H100 it ran
    24.1 us there, gv 6.3 (2026-12-07, notebook/probes/alone-h100/call96/)."""
    shape = SGEMM.shape(1, 31, 1000)
    chooser = best.selector(SGEMM, H200)
    sk = chooser._estimate(SGEMM.variant("sk"), {"BM": 16, "BN": 4, "BK": 32, "TM": 2, "TN": 1, "KS": 2, "MINB": 2},
                           shape, modelled=True)
    assert sk.seconds > 10e-6 and "k-steps" in sk.efficiency_from
    assert chooser.pick(shape).variant.name == "gv"


def test_below_its_runs_a_kernel_still_pays_its_fixed_cost():
    """ks's three runs nearest 3x2000x1000 on the H200 were modelled at 8.2-12.1 us: too alike to fit
    a fixed cost, and their median ratio (0.47) put it at 2.8 us there. It ran 11.6, where d0 ran
    5.9 (2026-12-06, call 88). Below its runs the line fitted to more of them (its fourth, at 12.6 us,
    makes them span enough: 0.85x the model plus 11 us) stands; the median still does above them."""
    points = [(8.2e-6, 18.2e-6, 1.0), (12.1e-6, 21.4e-6, 1.0), (8.7e-6, 18.7e-6, 1.0), (12.6e-6, 22.1e-6, 1.0),
              (27.7e-6, 37.5e-6, 1.0), (31.6e-6, 40.6e-6, 1.0)]
    assert calibration.spanning(points, 3) == points[:4]  # 8.2 to 12.6 us: wide enough
    assert calibration.spanning(points[:3], 3) == points[:3]  # nothing more to add
    assert calibration.fixed_cost_fit(points[:3]) is None
    slope, fixed = calibration.fixed_cost_fit(calibration.spanning(points, 3))
    assert slope == pytest.approx(0.85, abs=0.01) and fixed == pytest.approx(11.2e-6, rel=0.01)
    cal = calibration.Calibration(0.47, "from there", below=(slope, fixed), least_s=8.2e-6)
    small, where = cal.at(1.3e-6)
    assert 1.3e-6 / small > 9e-6 and "below its runs" in where
    assert cal.at(20e-6) == (0.47, "from there")
    bf16 = get_experiment("gemm_bf16")
    chooser = best.selector(bf16, H200)
    shape = bf16.shape(3, 2000, 1000)
    ks = chooser._estimate(bf16.variant("ks"), bf16.variant("ks").default_params() | {"TN": 8}, shape, modelled=True)
    assert ks.seconds > 9e-6
    assert chooser.pick(shape).variant.name == "d0"


def test_a_variant_never_timed_on_the_kind_borrows_the_weakest_with_its_fixed_cost():
    """t1 was timed compute-bound only; at 3x2304x768 it borrows the lowest memory-bound efficiency
    of the variants that were, each at t1's modelled time, fixed cost counted. Their medians alone
    put it at 6.4 us and picked it; it ran 11.7 on an H100, d0 6.4 (2026-12-06, call 90)."""
    bf16 = get_experiment("gemm_bf16")
    chooser = best.selector(bf16, H200)
    shape, t1 = bf16.shape(3, 2304, 768), bf16.variant("t1")
    est = chooser._estimate(t1, t1.default_params() | {"BN": 64}, shape, modelled=True)
    assert "capped at the lowest memory-bound" in est.efficiency_from
    medians = [own.median for v in chooser.variants if v.name in chooser.runs and v.name != "t1"
               and (own := chooser._own_efficiency(v, shape, "memory"))]
    assert est.efficiency < min(medians)
    assert est.seconds > 9e-6
    assert chooser.pick(shape).variant.name == "d0"


def test_a_move_of_a_tile_param_is_weighed_where_the_grid_stays():
    """ks runs one persistent wave whatever its TN (the tokens a tile holds), so a move of TN left its
    grid and work units alike and was dropped: at 32 tokens the model weighed TN = 8, 16 and 128
    (those tuned somewhere), not 32, which ran fastest at 32x3584x18944 on an H100 (54.4 us against
    61.1 in TN = 128, 2026-12-06). TN is a tile param (Variant.tile_params): its moves are weighed."""
    bf16 = get_experiment("gemm_bf16")
    ks = bf16.variant("ks")
    assert ks.tile_params == ("TN",)
    shape = bf16.shape(32, 3584, 18944)
    seeds = [{"TN": 16, "STAGES": 6, "BPS": 1}]
    moves = candidates.one_param_moves(ks, seeds, shape, lambda p: p is not None and ks.constraints(p, shape) is None)
    assert {m["TN"] for m in moves if m["TN"] != 16} == {8, 32, 64, 128}
    # STAGES alone changes no work: not weighed (BPS does: it sizes the grid)
    assert [m for m in moves if m["TN"] == 16] == [{"TN": 16, "STAGES": 6, "BPS": 2}]
    chooser = best.selector(bf16, H200)
    assert {p["TN"] for p in chooser.configs(ks, shape)} >= {32, 64}


def test_a_split_whose_partials_the_access_model_cannot_say_still_stores_them():
    """sgemm's v13 at 300x3000x1000 cuts its 120 tiles 13 ways (1,560 blocks of 64 x 128). Its access
    model is too large to evaluate there and the sibling whose L2 bytes stand in (BK = 32) runs another
    plan, so the partials were unknown and counted nothing: modelled at 48 us, it ran 88.4 on an H100
    (cuBLAS FP32 59.5; 2026-12-06, call 90). Each block of a split now hands on a tile of FP32
    accumulators, written and read back at the copy ceiling; kc's cluster keeps its partials on chip."""
    shape, v13 = SGEMM.shape(300, 3000, 1000), SGEMM.variant("v13")
    params = v13.completed_params({"BM": 64, "BN": 128, "BK": 8, "WM": 32, "WN": 64, "WNITER": 2, "STAGES": 2,
                                   "MINB": 1, "GROUP_M": 8, "RESIDENT": 3, "S": 16})
    chooser = best.selector(SGEMM, H200)
    est = chooser._estimate(v13, params, shape, modelled=True)
    assert (est.blocks, est.tiles, est.split) == (1560, 120, True)
    assert est.traffic.workspace_bytes is None and "too large to evaluate here" in est.note
    partials = 1560 * 64 * 128 * cost.ACCUMULATOR_BYTES
    assert est.workspace_s == pytest.approx(2 * partials / (chooser.card.copy_gbps * 1e9))
    assert est.seconds > 70e-6
    assert "51.1 MB of partials (a tile of accumulators a block: its access model cannot say)" in est.reason()
    kc = get_experiment("gemm_bf16").variant("kc")
    assert cost.split_partials_bytes(kc, {"BM": 128, "BN": 128, "SPLIT": 2}, 256, True, cost.Traffic(1.0, None)) == 0
    assert cost.split_partials_bytes(v13, params, 1560, False, cost.Traffic(1.0, None)) == 0  # no split


def _own_ratios(chooser, variant: str, shape) -> list[float]:
    v = chooser.experiment.variant(variant)
    kind = chooser.shape_class(v, shape)
    return [chooser._ratio(v, run) for run in chooser._nearest_runs(v, shape, kind)[:best_efficiency.CALIBRATION_ROWS]]


def test_rounds_count_the_blocks_an_sm_runs_one_after_another():
    """t3 holds an SM alone in 128 x 128 tiles of 5 stages (160 KiB of shared memory): 224 tiles at
    128x28672x4096 are two rounds on the H200's 132 SMs, 80 at 128x10240x8192 one. d0 holds several
    blocks an SM: their starts and ends overlap, one round whatever its grid."""
    bf16, chooser = _bf16_chooser()
    t3, d0 = bf16.variant("t3"), bf16.variant("d0")
    params = {"BM": 128, "BN": 128, "STAGES": 5, "GROUP_M": 4}
    two = chooser._estimate(t3, params, bf16.shape(128, 28672, 4096), modelled=False)
    one = chooser._estimate(t3, params, bf16.shape(128, 10240, 8192), modelled=False)
    assert (two.resident, two.rounds, one.rounds) == (1, 2.0, 1.0)
    many = chooser._estimate(d0, d0.default_params(), bf16.shape(16, 57344, 8192), modelled=False)
    assert many.resident > 1 and many.blocks > 2 * chooser.card.sms and many.rounds == 1.0


def test_a_split_in_more_rounds_than_another_pays_for_each():
    """kc split six ways at 128x4096x14336 (192 blocks in clusters of six: two rounds) does the work
    of a split three ways (96 blocks: one round) per SM, and the model put the two alike (0.0388 ms)
    and picked six, knowing nothing at that shape; the llm suite ran six in 0.0486 ms and two ways
    in 64-wide tiles in 0.0369 (H200, 2026-12-06). Six now pays kc's fixed cost twice."""
    bf16, _ = _bf16_chooser()
    shape = bf16.shape(128, 4096, 14336)
    unseen = model_errors.Unseen(bf16, H200).selector(shape)
    kc = bf16.variant("kc")
    six, three = (unseen._estimate(kc, {"BM": 128, "BN": 128, "STAGES": 4, "SPLIT": s, "GROUP_M": 8}, shape,
                                   modelled=True) for s in (6, 3))
    assert (six.rounds, three.rounds) == (2.0, 1.0)
    factor = unseen.config_factor(kc, six.params, shape)[0]  # an untimed config: its variant's typical one
    eff, _ = unseen.efficiency(kc, shape, six.params, six.roof_s, rounds=1.0)
    once = unseen._estimate(kc, six.params, shape, modelled=True, efficiency=(eff * factor, ""))
    assert six.seconds > 1.1 * once.seconds
    pick = unseen.pick(shape)
    assert (pick.variant.name, pick.params["BN"], pick.params["SPLIT"]) == ("kc", 64, 2)


def test_a_config_timed_on_shapes_of_the_kind_is_modelled_where_an_untimed_one_leads():
    """At 128x8192x8192, with nothing known there, kc in 192-wide tiles (never timed) led on its
    bound, and kc's timed 128-wide config, 1% behind, was never modelled (its bound could not beat
    the best found), so prefer_measured, which sets the untimed lead aside, fell to t3: the llm suite
    ran t3 there in 0.0458 ms and kc in 0.0411 (H200, 2026-12-06). A config timed on shapes of the
    kind gets the same MEASURED_EDGE in the search as in the choice."""
    bf16, _ = _bf16_chooser()
    shape = bf16.shape(128, 8192, 8192)
    unseen = model_errors.Unseen(bf16, H200).selector(shape)
    pick = unseen.pick(shape)
    assert (pick.variant.name, pick.params["BN"], pick.params["SPLIT"]) == ("kc", 128, 2)


def test_memory_bound_runs_are_read_as_a_fixed_cost_plus_a_multiple_of_the_model():
    """d0's runs at 1 to 8 rows on the H200 (2026-12-04) fit 1.04x its model plus 9 us: its 0.69 of
    the model at 1x12288x4096 (34 us) was mostly the fixed part. At 1x57344x8192 that fit gives 0.92,
    and the llm suite measured d0 there at 0.241 ms (model 0.2197: 0.91). A compute-bound kernel is
    not fitted so: sgemm's compute-bound runs give 'fixed costs' of 0.1-0.4 ms, a curve, not a cost."""
    bf16, chooser = _bf16_chooser()
    est = [e for e in chooser.ranking(bf16.shape(1, 57344, 8192)) if e.variant.name == "d0"][0]
    assert 0.88 < est.efficiency < 0.95 and " us a round + " in est.efficiency_from, est.efficiency_from
    assert chooser.pick(bf16.shape(1, 57344, 8192)).variant.name in ("d0", "ks")  # ks since its tune there
    sgemm = best.selector(SGEMM, H200)
    for e in sgemm.ranking(SGEMM.shape(1024, 1024, 1024)):
        assert " us a round + " not in e.efficiency_from, e.efficiency_from


def test_each_variants_tuned_config_for_the_shape_is_always_modelled():
    """sgemm's v14 at 8192x57344x8192: its config tuned at 8192^3 (BN = 192, FLUSH = 4) comes out at
    61 ms in the model, but the guess's order had modelled three others (74 ms) and stopped; the llm
    suite ran the pick of those 6% slower than the tuned config (H200, 2026-12-04). The tuned config
    is now weighed every time, and is the pick."""
    chooser = best.selector(SGEMM, H200)
    shape = SGEMM.shape(8192, 57344, 8192)
    v14 = SGEMM.variant("v14")
    tuned = chooser.defaults(v14, shape)
    pick = chooser.pick(shape)
    assert pick.variant.name == "v14" and pick.params == tuned and tuned["BN"] == 192, pick.why


def test_a_cluster_tile_is_the_unit_of_t4s_work():
    """t4's cluster takes CLUSTER consecutive 128-row tiles of one Bt column; at M = 1 all but one of
    its blocks compute padding, and the rounds go over the clusters. At 1x57344x8192 in clusters of
    four (BN = 200): 287 cluster tiles over the 30 clusters the H200 runs at once, 10 rounds; it ran
    0.78 ms there (H200, 2026-12-04), where 3 rounds over 120 blocks had been modelled."""
    bf16 = get_experiment("gemm_bf16")
    t4 = bf16.variant("t4")
    params = t4.default_params() | {"BN": 200, "CLUSTER": 4, "EDGE": 2}
    shape = bf16.shape(1, 57344, 8192)
    blocks, tiles, padded = cost.work_units(t4, params, shape)
    assert (blocks, tiles) == (120, 4 * 287) and padded == pytest.approx(4 * 287 * 128 * 200 / 57344)
    # the busiest SM's share: 10 cluster tiles where an even share would be 1148 / 132 tiles
    assert cost.quantization(blocks, tiles, 132, False, False) == pytest.approx(10 * 132 / 1148)
    # clusters of one, and a shape of whole cluster tiles: the row tiles as before
    assert cost.work_units(t4, params | {"CLUSTER": 1}, shape)[1] == 287
    assert cost.work_units(t4, params, bf16.shape(4096, 4096, 4096))[1] == 32 * cdiv(4096, 200)


def test_a_config_timed_at_the_shape_is_judged_by_its_own_run():
    """coalesce's rows at 4096x4096 on the H200 (2026-12-04, the full main job): VEC=4 at 99% of the
    copy ceiling, VEC=1 at 63%. Both had been lent the variant's one efficiency (its fastest run's),
    tying them, and the best row ran VEC=1; each now carries its own, and VEC=4 is the pick. At
    stencil's 16777216, shfl PER=8 (timed there) stays the pick over PER=16 (never timed), which the
    model puts 1.7% ahead on an efficiency borrowed from another run."""
    coalesce = get_experiment("coalesce")
    chooser = best.selector(coalesce, H200)
    rows = coalesce.variant("rows")
    shape = coalesce.shape(4096, 4096)
    slow, fast = (chooser.measured_here(rows, {"VEC": vec}, shape) for vec in (1, 4))
    assert slow[0] < 0.7 < 0.9 < fast[0] and fast[1] == "measured for this config at 4096x4096"
    assert chooser.pick(shape).params == {"VEC": 4}
    stencil = get_experiment("stencil")
    pick = best.selector(stencil, H200).pick(stencil.shape(16777216))
    assert (pick.variant.name, pick.params["PER"]) == ("shfl", 8) and "measured for this config" in pick.why


# -- what a kernel's time is made of beyond its own loop ---------------------------------------------
STAGED = dataclasses.replace(WHOLE, name="staged", stage_bytes=lambda p, s: 3 * STANDIN.bytes_moved(s))


def test_a_stage_step_is_charged_its_bytes_at_the_copy_ceiling():
    """A variant whose stage step copies its operands first (sgemm's v14 splits A and B into TF32
    parts) pays that pass before its own time: here three times the problem's bytes at 4,000 GB/s,
    on top of WHOLE's roof, and said in chosen_by once it is a tenth of the time."""
    shape = STANDIN.shape(128, 30000, 8192)
    chooser = best.Selector(type("Staging", (StandIn,), {"variants": (WHOLE, STAGED)})(), {}, CARD)
    plain = chooser._estimate(WHOLE, WHOLE.default_params(), shape, modelled=True)
    staged = chooser._estimate(STAGED, STAGED.default_params(), shape, modelled=True)
    assert plain.staging_s == 0
    assert staged.staging_s == pytest.approx(3 * STANDIN.bytes_moved(shape) / 4000e9)
    assert staged.roof_s == pytest.approx(plain.roof_s + staged.staging_s)
    assert "staging" in staged.reason() and "staging" not in plain.reason()
    assert chooser.pick(shape).variant.name == "whole"


def test_v14_pays_its_split_and_reads_the_split_copies():
    """v14 at 128x57344x8192: the split reads A and B (1.9 GB) and writes three TF32 parts of each
    (5.6 GB), then the GEMM reads those parts, not the FP32 inputs. Modelled without either it came
    to 1.77 ms; it ran 4.0 ms (H200, 2026-12-04, the llm suite)."""
    v14 = SGEMM.variant("v14")
    shape = SGEMM.shape(128, 57344, 8192)
    params = v14.default_params()
    from gpulab.experiments.sgemm.tf32x3.tf32_split import split_bytes
    assert v14.stage_bytes(params, shape) == split_bytes(shape) == 4 * 4 * (128 + 57344) * 8192
    est = best.Selector(SGEMM, {}, CARD)._estimate(v14, params, shape, modelled=True)
    assert est.traffic.dram_bytes == pytest.approx(4 * 3 * (128 + 57344) * 8192 + 4 * 128 * 57344)
    assert est.ideal_s["DRAM"] == pytest.approx(est.traffic.dram_bytes / 4000e9)
    assert est.staging_s == pytest.approx(split_bytes(shape) / 4000e9)
    assert SGEMM.variant("v9").stage_bytes(V9, shape) == 0


def test_a_fixup_that_adds_the_slices_one_after_another_is_a_series_on_one_sm():
    """sgemm's v12 at 300x31x2048 in 64 x 64 tiles: 5 tiles shared among 4 x 132 blocks, so each
    tile's first block waits on about 105 later segments in turn and adds their 16 KiB partials one
    after another. Modelled without that series (2.5 us on the H200's runs) it was the best row
    there and ran 110 us on an H100, cuBLAS FP32 13.0 (2026-12-06, notebook/probes/fixup/). The
    series: the tile's partials at one SM's share of the L2 read ceiling, said in chosen_by where it
    weighs. sx's last block keeps its S loads in flight at once (no series); a launch that does not
    split has none; the cheap bound leaves it out, as it leaves out every partial."""
    shape = SGEMM.shape(300, 31, 2048)
    v12, sx = SGEMM.variant("v12"), SGEMM.variant("sx")
    params = v12.default_params() | {"BN": 64, "MINB": 4, "SK_ROUNDS": 99}
    chooser = best.Selector(SGEMM, {}, CARD)
    est = chooser._estimate(v12, params, shape, modelled=True)
    assert (est.blocks, est.tiles, est.split) == (4 * CARD.sms, 5, True)
    one_sm = CARD.l2_gbps * 1e9 / CARD.sms
    assert est.fixup_s == pytest.approx(4 * CARD.sms / 5 * 64 * 64 * 4 / one_sm)  # 21 us
    assert est.roof_s >= est.fixup_s and "partials added in series" in est.reason()
    assert chooser._estimate(v12, params, shape, modelled=False).fixup_s == 0
    parallel = chooser._estimate(sx, sx.default_params(), shape, modelled=True)
    assert parallel.split and parallel.fixup_s == 0
    whole = chooser._estimate(v12, params, SGEMM.shape(4096, 4096, 4096), modelled=True)
    assert not whole.split and whole.fixup_s == 0


def test_sgemm_at_five_tiles_is_not_given_to_a_hundred_partials_in_series():
    """The same shape on the H200's own runs and ceilings: v12 no longer comes first there."""
    chooser = best.selector(SGEMM, H200)
    shape = SGEMM.shape(300, 31, 2048)
    chosen = chooser.pick(shape)
    assert chosen.variant.name != "v12"
    v12 = [e for e in chooser.ranking(shape) if e.variant.name == "v12"]
    assert all(e.fixup_s > 0 and e.seconds > chosen.estimate.seconds for e in v12 if e.split)


def test_a_k_loop_that_waits_on_its_loads_takes_its_steps_one_after_another():
    """sgemm's v1 stages a TILE-deep slice of A and B, waits, computes, waits: at 7x3000x1000 in
    8-wide tiles its 375 blocks fit the SMs at once and each runs 125 such steps. On the H200 its
    fastest step was 0.34 us (8192x1x8192: 1024 steps, 344.5 us), so it takes 42 us at least; the
    model had it at 15 us and picked it there, and it ran 42.3 us on an H100, gv 22.9 (2026-12-06,
    notebook/probes/fixup/call81-h100/). A pipelined k-loop (v9) has no chain."""
    v1, shape = SGEMM.variant("v1"), SGEMM.shape(7, 3000, 1000)
    chooser = best.selector(SGEMM, H200)
    assert cost.k_chain(v1, {"TILE": 8}, shape, 132, "sm_90") == (1, 125)
    assert cost.k_chain(v1, {"TILE": 8}, SGEMM.shape(8192, 1, 8192), 132, "sm_90") == (1, 1024)
    assert cost.k_chain(SGEMM.variant("v9"), SGEMM.variant("v9").default_params(), shape, 132, "sm_90") is None
    step8, step4 = chooser.steps.least(v1, 8), chooser.steps.least(v1, 4)
    assert step8.params["TILE"] == 8 and step8.seconds == pytest.approx(344.5e-6 / 1024, rel=0.01)
    assert chooser.steps.least(v1, 16).seconds == step8.seconds  # a deeper step takes no less
    assert step4.seconds == pytest.approx(step8.seconds / 2)  # a shallower one at least its share
    est = chooser._estimate(v1, {"TILE": 8}, shape, modelled=True)
    assert est.seconds == pytest.approx(125 * step8.seconds) and "1 x 125 k-steps" in est.efficiency_from
    chosen = chooser.pick(shape)
    assert chosen.variant.name != "v1" and chosen.estimate.seconds < est.seconds


def test_a_timed_config_keeps_its_own_time_whatever_its_k_steps():
    """The chain is a least time for what the card has not timed: where the config was timed at
    the shape, its own efficiency stands (measured_here), and a measured time already holds its steps."""
    v1, shape = SGEMM.variant("v1"), SGEMM.shape(8192, 1, 8192)
    chooser = best.selector(SGEMM, H200)
    est = chooser._estimate(v1, {"TILE": 8}, shape, modelled=True)
    assert est.efficiency_from.startswith(best.MEASURED_HERE) and "k-steps" not in est.efficiency_from
    assert est.seconds == pytest.approx(344.5e-6, rel=0.02)


def _guarded_split_model(p, s):
    """SPLIT's launch, written as every block running the whole k loop with the trips outside its
    own slice guarded off (as sgemm's v13 and sx models have it)."""
    splits = p["S"]
    tiles = cdiv(s["M"], p["BM"]) * cdiv(s["N"], p["BN"])
    trips = cdiv(s["K"], 64)
    per_slice = cdiv(trips, splits)

    def mine(i):
        return i.k // per_slice == i.bx % splits
    loads = Instruction("ld panels", "global", "load", 16, address=lambda i: 16 * i.tid + 4096 * i.k, active=mine,
                        loops=(Loop("k", trips, every(trips)),), blocks={"x": every(tiles * splits)})
    steps = p["BM"] * p["BN"] // THREADS  # each block stores its whole BM x BN partial
    partial = Instruction("st partial", "global", "store", 4, address=lambda i: 4 * ((i.bx * steps + i.q) * THREADS + i.tid),
                          loops=(Loop("q", steps, every(steps)),), blocks={"x": every(tiles * splits)})
    return KernelAccess(grid=(tiles * splits, 1, 1), block=(THREADS, 1, 1), instructions=(loads, partial),
                        flops=2.0 * s["M"] * s["N"] * s["K"], dram_compulsory_bytes=STANDIN.bytes_moved(s))


def test_a_split_written_as_guarded_trips_is_not_read_as_idle_warps():
    """Each block loads on its own slice's trips only: a shorter loop, not warps that wait. Read as
    idle, 4 slices a tile showed a quarter of the warps loading, and 4x the memory time (v13 in 7
    slices at 128x10240x8192 was modelled at 0.99 ms and ran 0.48, H200 2026-12-04)."""
    guarded = dataclasses.replace(SPLIT, name="guarded", access=_guarded_split_model)
    shape = STANDIN.shape(256, 256, 4096)
    est = best.Selector(STANDIN, {}, CARD)._estimate(guarded, guarded.default_params(), shape, modelled=True)
    assert est.split and est.traffic.workspace_bytes > 0
    assert est.warps_loading == pytest.approx(1.0)


def test_a_split_whose_warps_really_idle_still_says_so():
    """The same split where only the first of every 8 warps loads: an eighth, as before."""
    def model(p, s):
        found = _guarded_split_model(p, s)
        loads = found.instructions[0]
        one_in_8 = dataclasses.replace(loads, active=lambda i, a=loads.active: a(i) & (i.tid // 32 == 0))
        return dataclasses.replace(found, instructions=(one_in_8, *found.instructions[1:]))
    idle = dataclasses.replace(SPLIT, name="idle", access=model)
    est = best.Selector(STANDIN, {}, CARD)._estimate(idle, idle.default_params(), STANDIN.shape(256, 256, 4096),
                                                        modelled=True)
    assert est.warps_loading == pytest.approx(1 / 8)


FMA_CARD = dataclasses.replace(CARD, compute={"fma_fp32": 60_000.0})


@pytest.mark.parametrize("threads, shape, hidden", [
    (128, (4096, 4096, 4096), 1.0),  # 1,024 tiles: 8 blocks of 4 warps an SM
    (128, (2048, 2048, 4096), (2 / 3.25) / (4 / 5.25)),  # 256 tiles: 2 blocks of 4 warps on the busiest SM
    (128, (1024, 1024, 4096), (1 / 2.25) / (4 / 5.25)),  # 64 tiles: one block of 4 warps, 1 a scheduler
    (256, (1024, 2048, 4096), (2 / 3.25) / (4 / 5.25)),  # 128 tiles: one block of 8 warps
    (512, (1024, 2048, 4096), 1.0),  # one block of 16 warps
])
def test_few_warps_a_scheduler_issue_below_its_rate(threads, shape, hidden):
    """A CUDA-core kernel whose SM holds one warp a scheduler waits on each dependent FMA and shared-
    memory load with nothing to fill the gap: sgemm's v6-v9, v11 and sx, with one warp a scheduler,
    reached 0.58-0.74 of what they reached with two or three (H200, 2026-12-04). Tensor-core kernels
    are left as they were."""
    v = _narrow(threads)
    s = STANDIN.shape(*shape)
    assert cost.latency_hidden(v, v.default_params(), s, 132, "sm_90", "fma_fp32") == pytest.approx(hidden)
    assert cost.latency_hidden(v, v.default_params(), s, 132, "sm_90", "tensor_bf16") == 1.0
    fma = type("Fma", (StandIn,), {"variants": (v,), "compute_ceiling": "fma_fp32"})()
    est = best.Selector(fma, {}, FMA_CARD)._estimate(v, v.default_params(), s, modelled=False)
    assert est.hidden == pytest.approx(hidden)
    ideal = est.quantization * est.padding * est.ideal_s["compute"] / est.schedulers
    assert est.limits_s["compute"] == pytest.approx(ideal / hidden)


def test_the_blocks_an_sm_runs_are_not_a_move_of_the_model():
    """v13's RESIDENT plans the grid for the blocks an SM runs at once, which the compiled kernel's
    registers decide (3 on the H200): the model keeps the tuned value and never moves it, since it
    cannot see registers (planned for 1, v13 ran 1.69x its time planned for 3 at 128x10240x8192)."""
    chooser = best.selector(SGEMM, H200)
    v13 = SGEMM.variant("v13")
    shape = SGEMM.shape(128, 10240, 8192)
    assert v13.resident_param == "RESIDENT"
    assert {p["RESIDENT"] for p in chooser.configs(v13, shape)} == {v13.default_params()["RESIDENT"]}


# -- how far the model's times held on the card -------------------------------------------------------
def test_the_models_times_hold_on_the_suites_rows_it_never_reads():
    """On the llm suite's rows timed on the H200 (call 10, 2026-12-04; the model never calibrates on
    a suite's rows), the model's calibrated time for each timed config against the time measured: a
    guard on the model, whose sgemm times were typically 27% off before split launches, v14's split
    pass and few warps a scheduler were modelled (13% after, over these and the unlisted shapes)."""
    found = {Path(r["file"]).name: r for exp in ("sgemm", "gemm_bf16")
             for r in api.model_error(exp, results=ROOT / "results", gpu="h200")}
    assert set(found) == {"sgemm-llm.csv", "gemm_bf16-llm.csv"}
    sgemm, bf16 = found["sgemm-llm.csv"], found["gemm_bf16-llm.csv"]
    assert sgemm["configs"] >= 100 and bf16["configs"] >= 150
    assert 1.0 < sgemm["typical_error"] <= 1.2 and 1.0 < bf16["typical_error"] <= 1.25
    assert sgemm["within_25pct"] >= 0.8 * sgemm["configs"]


def test_model_errors_are_the_estimate_over_the_fastest_time_of_each_config(tmp_path):
    """Two rows of one config at one shape: the faster counts once; a failed row and cuBLAS's none."""
    chooser = best.selector(SGEMM, H200)
    v9 = SGEMM.variant("v9")
    label = v9.params_label(V9)
    est = chooser._estimate(v9, V9, SGEMM.shape(2048, 2048, 2048), modelled=True)
    header = "experiment,variant,params,shape,correct,time_ms\n"
    (tmp_path / "runs.csv").write_text(header + f"sgemm,v9,{label},2048x2048x2048,true,0.5\n"
                                       f"sgemm,v9,{label},2048x2048x2048,true,0.4\n"
                                       f"sgemm,v9,{label},1024x1024x1024,false,0.01\n"
                                       "sgemm,cublas,,2048x2048x2048,true,0.3\n")
    found = model_errors.model_errors(chooser, tmp_path / "runs.csv")
    assert list(found) == ["v9"] and found["v9"] == [pytest.approx(est.seconds / 0.4e-3)]
    summary = model_errors.error_summary([2.0, 0.5, 1.05, 1 / 1.2])
    assert summary["configs"] == 4 and summary["typical_error"] == pytest.approx((2.0 * 2.0 * 1.05 * 1.2) ** 0.25)
    assert (summary["within_10pct"], summary["within_25pct"]) == (1, 2)


def test_a_damaged_suite_file_is_named_not_fatal(tmp_path):
    """`gpulab best` still answers when a suite's results on the card are damaged: that file's line
    says it was not read."""
    (tmp_path / "h200").mkdir()
    (tmp_path / "h200" / "sgemm-llm.csv").write_text("experiment,variant,params,shape,correct,time_ms\nsgemm,v9")
    rows = api.model_error("sgemm", results=tmp_path, gpu="h200")
    assert len(rows) == 1 and "cut off" in rows[0]["error"]
    from gpulab.report.tables import model_error_line
    assert model_error_line(rows[0]).startswith("the model against sgemm-llm.csv: not read (")


def _llm_rows_at(tmp_path, experiment: str, labels: set[str]) -> Path:
    """A copy of the H200's results folder (its tunes, runs and ceilings) whose llm suite file holds
    only the rows of `labels`: the model alone then answers at those shapes in a second or two."""
    import shutil

    folder = tmp_path / "h200"
    shutil.copytree(H200, folder, ignore=shutil.ignore_patterns("*-llm.csv", "*.png", "reports"))
    rows = [r for r in read_csv(H200 / f"{experiment}-llm.csv") if r["shape"] in labels]
    write_csv(folder / f"{experiment}-llm.csv", rows)
    return folder


def test_the_model_alone_knows_nothing_at_the_shape_and_is_judged_on_the_rows_timed_there(tmp_path):
    """On the H200's llm rows (2026-12-04 to 06): at 128x6144x4096 the best row runs kc as tuned there
    (96-wide tiles, 19.8 us); the model alone, without that tune or any run near it, picks kc in
    128-wide tiles and a ring of 7, which ran 21.5 us there, 1.09x the fastest: a miss. At
    1x57344x8192 its pick, ks in one block an SM, was the fastest row: a hit. At 1x4096x4096 it picks
    d0 in G=1 U=4 KW=8 MINB=1 (KW=4 before a last wave's idle slots counted, 1.08x); with its rows
    taken out of the suite file, the row d0's tune timed there judges it (12.54 us, the fastest);
    taken out of both, the pick's config was not timed: counted neither way, named with its variant's
    fastest there as a hint (that judgement had passed picks that ran 5-32% slower once timed)."""
    bf16 = get_experiment("gemm_bf16")
    folder = _llm_rows_at(tmp_path, "gemm_bf16", {"128x6144x4096", "1x57344x8192", "1x4096x4096"})
    shape = bf16.shape(128, 6144, 4096)
    assert best.selector(bf16, folder).pick(shape).why == "tuned here"
    alone = model_errors.Unseen(bf16, folder).pick(shape)
    assert alone.why.startswith("model:") and (alone.params["BN"], alone.params["STAGES"]) == (128, 7)
    suite, tune = folder / "gemm_bf16-llm.csv", tune_path(folder, "gemm_bf16", "d0")
    pick = "G=1 U=4 KW=8 S=0 MINB=1 DEPTH=1"
    assert bf16.variant("d0").params_label(model_errors.Unseen(bf16, folder).pick(bf16.shape(1, 4096, 4096)).params) == pick

    def without_the_pick(path: Path) -> None:
        write_csv(path, [r for r in read_csv(path) if not (r["shape"] == "1x4096x4096" and r["params"] == pick
                                                           and "d0" in (r["variant"], r.get("picked")))])

    without_the_pick(suite)
    found = model_errors.picks_alone(bf16, folder, suite)
    assert (found["shapes"], found["within_5pct"], found["timed"]) == (3, 2, 3)
    assert found["misses"] == ["128x6144x4096 kc 1.09x"]
    without_the_pick(tune)
    found = model_errors.picks_alone(bf16, folder, suite)
    assert (found["shapes"], found["within_5pct"], found["timed"]) == (3, 1, 2)
    assert found["misses"] == ["128x6144x4096 kc 1.09x"]
    assert found["untimed"] == [f"1x4096x4096 d0 {pick} (its variant's fastest there 1.00x)"]
    rows = api.model_alone("gemm_bf16", results=tmp_path, gpu="h200")
    assert len(rows) == 1 and rows[0]["misses"] == "128x6144x4096 kc 1.09x"
    from gpulab.report.tables import model_alone_line
    line = model_alone_line(rows[0])
    assert "within 5% of the fastest row timed there at 1 of 3;" in line
    assert "not counted where its config was not timed (`gpulab bench gemm_bf16 --suite llm --alone`" in line


def test_bench_alone_times_the_model_alone_pick_as_a_row_of_its_config(tmp_path):
    """`gpulab bench --suite S --alone`: at each shape the model-alone pick's config joins the plan as
    an ordinary row (so `gpulab best --alone` can judge it as timed), before the vendor row, and is
    not planned twice where the bench times that config there anyway."""
    bf16 = get_experiment("gemm_bf16")
    folder = _llm_rows_at(tmp_path, "gemm_bf16", {"128x6144x4096"})
    shape = bf16.shape(128, 6144, 4096)
    alone = model_errors.Unseen(bf16, folder).pick(shape)
    specs = bench_job.bench_plan(bf16, ["kc"], {}, [shape], folder, with_best=False)
    planned = bench_job.with_alone_picks(bf16, specs, [shape], folder)
    names = [(s.name, s.params) for s in planned]
    assert names == [("kc", specs[0].params), ("kc", alone.params), ("cublas", {})], names
    kc_alone = bench_job.bench_plan(bf16, ["kc"], {k: (v,) for k, v in alone.params.items()}, [shape], folder, False)
    assert len(bench_job.with_alone_picks(bf16, kc_alone, [shape], folder)) == len(kc_alone)
    as_best = {shape.label: dataclasses.replace(alone, why="model: the same config")}  # the best row runs it
    with_best = bench_job.bench_plan(bf16, [], {}, [shape], folder, True, picks=as_best)
    assert len(bench_job.with_alone_picks(bf16, with_best, [shape], folder)) == len(with_best)


def test_bench_alone_on_a_damaged_tune_file_stops_before_anything_runs(tmp_path):
    """A tune CSV cut off mid-line: `bench --alone` plans its model-alone rows (before the first run,
    so before the suite CSV is written) and stops there with the file named; the suite's rows stay."""
    bf16 = get_experiment("gemm_bf16")
    folder = _llm_rows_at(tmp_path, "gemm_bf16", {"128x6144x4096"})
    suite = (folder / "gemm_bf16-llm.csv").read_bytes()
    tune = folder / "tune-gemm_bf16-kc.csv"
    tune.write_text(tune.read_text()[:-40])
    shape = bf16.shape(128, 6144, 4096)
    specs = bench_job.bench_plan(bf16, ["kc"], {}, [shape], folder, with_best=False)
    with pytest.raises(DamagedFile, match="tune-gemm_bf16-kc.csv"):
        bench_job.with_alone_picks(bf16, specs, [shape], folder)
    assert (folder / "gemm_bf16-llm.csv").read_bytes() == suite


def test_tiny_model_times_are_written_out():
    """A 1000x37 transpose models at 7e-05 ms: the table writes 0.000070, two significant digits in
    fixed point, as it writes 0.0312 above a microsecond."""
    from rich.console import Console

    from gpulab.report.tables import best_table
    console = Console(width=200, record=True)
    console.print(best_table([{"shape": "1000x37", "variant": "tile", "params": "ROWS=8", "model_ms": 7e-05,
                               "chosen_by": "model"},
                              {"shape": "4096x4096", "variant": "tile", "params": "ROWS=8", "model_ms": 0.0312,
                               "chosen_by": "model"}], "transpose"))
    text = console.export_text()
    assert "0.000070" in text and "0.0312" in text and "e-05" not in text


# -- a card that has measured nothing yet --------------------------------------------------------------
def _new_card_beside_h200(tmp_path, h200_files=("sgemm.csv", "ceilings.csv", "tuned.json")):
    (tmp_path / "newcard").mkdir()
    (tmp_path / "h200").mkdir()
    for name in h200_files:
        (tmp_path / "h200" / name).write_bytes((H200 / name).read_bytes())
    return tmp_path


def test_a_card_with_no_runs_reads_efficiencies_from_another_cards(tmp_path):
    """A card with nothing measured yet: the bare model held every kernel to its roof and picked the
    ladder's first rungs (v1 at 16x4096x4096, v2 at 128x4096x4096). With the H200's runs beside it,
    each variant's efficiency is what it reached there, against the H200's ceilings, and chosen_by
    says whose runs they were; no config counts as timed on the new card."""
    tmp = _new_card_beside_h200(tmp_path)
    rows = api.best("sgemm", shapes=["16x4096x4096", "128x4096x4096"], results=tmp, gpu="newcard")
    for row in rows:
        assert row["variant"] not in ("v0", "v1", "v2", "v3", "v4", "v5"), row
        assert "(h200's runs: none on this card yet)" in row["chosen_by"]
        assert "measured for this config" not in row["chosen_by"]
    chooser = best.selector(SGEMM, tmp / "newcard")
    assert chooser.runs_from == "h200" and chooser.config_runs == {}
    assert chooser.runs_card.copy_gbps == cost.card_for(H200).copy_gbps
    # the new card has no ceilings measured either: the lending card's stand in (not the reference's)
    assert chooser.card == chooser.runs_card and chooser.card.source != cost.REFERENCE_SOURCE
    (tmp / "newcard" / "ceilings.csv").write_bytes((H200 / "ceilings.csv").read_bytes())  # its own, once measured
    assert best.selector(SGEMM, tmp / "newcard").card.source.endswith("newcard/ceilings.csv")


def test_the_model_alone_on_a_card_with_no_runs_reads_the_lent_ones_less_those_near_the_shape(tmp_path):
    """The model alone (Unseen) knows what best's selector knows, less what lies near the shape: on a
    card with no runs yet, the H200's. Built from the card's own files alone, it fell to the bare model
    on a fresh H100 and picked v1 and v2 at 128 tokens, 4.3-7.5x slower than the fastest row timed
    there (call 47, 2026-12-06). The lent tune's pick at 128x5120x5120 is left out there, kept at
    128x4096x4096."""
    tmp = _new_card_beside_h200(tmp_path)
    unseen = model_errors.Unseen(SGEMM, tmp / "newcard")
    for label in ("16x4096x4096", "128x4096x4096", "128x5120x5120"):
        chooser = unseen.selector(SGEMM.shape(*map(int, label.split("x"))))
        assert chooser.runs_from == "h200" and chooser.config_runs == {}
        chosen = chooser.pick(SGEMM.shape(*map(int, label.split("x"))))
        assert chosen.variant.name not in ("v0", "v1", "v2", "v3", "v4", "v5"), (label, chosen.variant.name)
        assert chosen.why.startswith("model:") and "(h200's runs: none on this card yet)" in chosen.why
    near = {run.shape for found in unseen.selector(SGEMM.shape(128, 5120, 5120)).runs.values() for run in found}
    far = {run.shape for found in unseen.selector(SGEMM.shape(128, 4096, 4096)).runs.values() for run in found}
    assert (128, 5120, 5120) in far and (128, 5120, 5120) not in near


# An H100 80GB HBM3's ceilings, measured by `gpulab ceilings` (notebook/device/device_call27.sh, 2026-12-05)
H100_CEILINGS = ROOT / "tests" / "fixtures" / "h100" / "ceilings.csv"


def _h100_beside_h200(tmp_path) -> Path:
    tmp = _new_card_beside_h200(tmp_path, ("gemm_bf16.csv", "ceilings.csv", "tuned.json"))
    shutil.copy(H100_CEILINGS, tmp / "newcard" / "ceilings.csv")
    return tmp


def test_a_config_the_lending_card_timed_at_the_shape_counts_as_measured_there(tmp_path):
    """The H200 timed sgemm's sx in 64 x 32 tiles at 2048x31x4096. A fresh H100 lent the H200's runs
    gave that config its variant's fastest efficiency times a config factor, put it behind v12 and
    ran v12 at 2.08x sx's time at 2049x31x4093 (call 55, 2026-12-06). The config's own measurement
    there now speaks for it, said to be the H200's; with it the H100 ran sx at 0.92x cuBLAS FP32
    (call 56). `--ranking` says whose timing it is."""
    tmp = _new_card_beside_h200(tmp_path)
    shutil.copy(H100_CEILINGS, tmp / "newcard" / "ceilings.csv")
    chooser = best.selector(SGEMM, tmp / "newcard")
    shape = SGEMM.shape(2049, 31, 4093)
    chosen = chooser.pick(shape)
    assert chosen.variant.name == "sx" and (chosen.params["BM"], chosen.params["BN"]) == (64, 32), chosen
    assert chosen.why.startswith("model:") and "(h200's runs: none on this card yet)" in chosen.why
    top = chooser.ranking(shape)[0]
    assert top.efficiency_from.startswith(best.MEASURED_HERE + "2048x31x4096")
    assert best_records.timed_where(chooser, top) == "at this shape on h200"
    assert not chooser.timed_somewhere(top)  # this card timed nothing: the pick still says so


def test_a_card_with_no_runs_tries_the_lending_cards_tuned_configs_but_never_picks_them_as_tuned(tmp_path):
    """A fresh H100 borrowed the H200's runs but tried only d0's declared configs and their moves:
    at 7x5120x3072 it ran d0 in G=4, U=1, a config no card had timed, at 0.52x cuBLAS BF16 (call 48,
    2026-12-06), where the H200's tune had found G=1, U=4 fastest at all eight decode shapes it
    tuned. The lending card's tuned configs are now candidates, and one it timed on shapes of the
    kind wins over an untimed one within MEASURED_EDGE (G=1, U=4 ran 0.99x cuBLAS there, call 53).
    Its tune is still never a pick: nothing is 'tuned here' on a card that tuned nothing."""
    tmp = _h100_beside_h200(tmp_path)
    shutil.copy(H200 / "tune-gemm_bf16-d0.csv", tmp / "h200")
    bf16 = get_experiment("gemm_bf16")
    chooser = best.selector(bf16, tmp / "newcard")
    assert chooser.runs_from == "h200" and chooser.table == {} and chooser.config_runs == {}
    chosen = chooser.pick(bf16.shape(7, 5120, 3072))
    assert (chosen.variant.name, chosen.params["G"], chosen.params["U"]) == ("d0", 1, 4), chosen
    assert chosen.why.startswith("model:") and "(h200's runs: none on this card yet)" in chosen.why
    tuned_there = bf16.shape(1, 4096, 4096)  # d0 tuned there on the H200
    assert chooser.tuned(tuned_there) is None
    assert chooser.pick(tuned_there).why.startswith("model:")
    # The model alone leaves out the lending card's tune near the judged shape, as it does its own.
    seeds = model_errors.Unseen(bf16, tmp / "newcard").selector(tuned_there).seed_table["d0"]["by_shape"]
    assert "1x4096x4096" not in seeds and "16x4096x4096" in seeds


@pytest.mark.parametrize("label", ["1x8192x28672", "16x28672x4096", "128x57344x8192", "8191x33x8193"])
def test_a_lent_run_counts_in_the_class_it_ran_in_on_the_card_that_ran_it(tmp_path, label):
    """On an H100 with the H200's runs lent, gemm_bf16's t0 was the pick at 11 of the 40 llm shapes
    and ran at 0.06-0.45x cuBLAS BF16 there (call 29), 0.21x at 8191x33x8193 (call 27): its run at
    1000x3000x777, compute-bound on the H200, was classed by the H100's ridge (1.4x higher) as
    memory-bound, and its efficiency there (1.32, the model overstating its L2 bytes at K odd) was
    lent to the decode shapes, up to 3.2x the copy ceiling. No estimate is below the card's floor."""
    bf16 = get_experiment("gemm_bf16")
    tmp = _h100_beside_h200(tmp_path)
    chooser = best.selector(bf16, tmp / "newcard")
    t0, run = bf16.variant("t0"), bf16.shape(1000, 3000, 777)
    assert chooser.shape_class(t0, run, chooser.runs_card) == "compute" != chooser.shape_class(t0, run)
    ranking = chooser.ranking(bf16.shape(*map(int, label.split("x"))))
    assert ranking and all(e.seconds >= e.floor_s for e in ranking)
    assert api.best("gemm_bf16", shapes=[label], results=tmp, gpu="newcard")[0]["variant"] != "t0"


def test_an_efficiency_past_the_cards_ceilings_is_held_to_them(tmp_path, monkeypatch):
    """An efficiency that would put a kernel under the card's floor (its FLOPs at the compute ceiling,
    its DRAM bytes at 1.1x the copy ceiling) holds it at the floor, and chosen_by says so: t0 was
    shown 'DRAM-bound at 316% of the copy ceiling' on an H100 (call 29)."""
    bf16 = get_experiment("gemm_bf16")
    chooser = best.selector(bf16, _h100_beside_h200(tmp_path) / "newcard")
    shape = bf16.shape(1, 8192, 28672)
    honest = {e.variant.name: e for e in chooser.ranking(shape)}["t0"]
    assert not honest.floored and "held to the card's ceilings" not in honest.reason()
    monkeypatch.setattr(chooser, "efficiency", lambda v, shape, params=None, roof_s=None, rounds=1.0: (50.0, "from 9x9x9"))
    monkeypatch.setattr(chooser.steps, "least_s", lambda *args: None)  # t0's k-steps would hold it above
    t0 = chooser._estimate(bf16.variant("t0"), honest.params, shape, modelled=True)
    assert t0.floored and t0.seconds == t0.floor_s > t0.roof_s / 50.0
    assert "held to the card's ceilings" in t0.reason() and "at 110% of the copy ceiling" in t0.reason()


def test_another_cards_runs_are_read_against_that_cards_ceilings():
    """The efficiency lent is the model's time on the card that ran over its measured time there: on
    a card with half the FMA rate, v9's efficiency from the H200's runs is the H200's, not half of it."""
    h200 = best.selector(SGEMM, H200)
    runs = [run for found in h200.runs.values() for run in found]
    half = dataclasses.replace(h200.card, compute={k: v / 2 for k, v in h200.card.compute.items()})
    lent = best.Selector(SGEMM, {}, half, runs, runs_card=h200.card, runs_from="h200")
    own = best.Selector(SGEMM, {}, h200.card, runs)
    shape = SGEMM.shape(3000, 3000, 3000)
    v9 = SGEMM.variant("v9")
    assert lent.efficiency(v9, shape)[0] == pytest.approx(own.efficiency(v9, shape)[0])
    assert lent.efficiency(v9, shape)[1] == own.efficiency(v9, shape)[1] + " (h200's runs: none on this card yet)"


def test_a_results_folder_outside_the_clone_borrows_the_labs_own_runs(tmp_path, monkeypatch):
    """A user who runs gpulab in a folder of their own starts with an empty results/: the runs this
    repository recorded (LAB_RESULTS, results/h200/) stand in, as another card's beside it would.
    Without them, the bare model holds every kernel to its roof and picked sgemm's v1 at
    300x4096x1000 and 512^3 (2026-12-05, found running `gpulab best` outside the clone)."""
    monkeypatch.setattr(calibration, "LAB_RESULTS", H200.parent)
    shapes = [SGEMM.shape(300, 4096, 1000), SGEMM.shape(512, 512, 512)]
    for folder in (tmp_path / "results" / "h200", None):  # a card named (its folder empty), or none at all
        chooser = best.selector(SGEMM, folder)
        assert chooser.runs_from == "h200" and chooser.config_runs == {}
        for shape in shapes:
            chosen = chooser.pick(shape)
            assert chosen.variant.name not in ("v0", "v1", "v2", "v3", "v4", "v5"), (folder, shape.label)
            assert "(h200's runs: none on this card yet)" in chosen.why
        assert chooser.basis().endswith(
            "efficiencies from h200's runs (none of this card's yet); candidate configs from its tunes too")
    monkeypatch.setattr(calibration, "LAB_RESULTS", tmp_path / "no-clone")  # an installed wheel: no such folder
    assert best.selector(SGEMM, None).runs_from == ""
    bare = best.selector(SGEMM, tmp_path / "results" / "h200")
    assert best.BARE_MODEL in bare.pick(shapes[0]).why
    assert cost.REFERENCE_SOURCE in bare.basis() and "the bare model" in bare.basis()


def test_with_no_gpu_and_no_results_here_best_answers_for_the_card_the_repository_recorded(tmp_path, monkeypatch):
    """`gpulab best` on a laptop, in a folder of the user's own (no GPU, no ./results): the card whose
    results gpulab's repository holds, its tune included, as from inside the clone; it chose from
    the H200's runs alone and missed every tuned pick (v14 'tuned here' at 4096^3), saying 'none on
    this card yet' where there was no card (2026-12-05, found running it outside the clone). A
    user's own ./results, where it holds one card, comes first."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(records, "probe", lambda: (None, "no GPU"))
    monkeypatch.setattr(records, "LAB_RESULTS", H200.parent)
    rows = api.best("sgemm", shapes=["4096x4096x4096"])
    assert rows[0]["chosen_by"] == "tuned here" and rows.note.endswith("efficiencies from this card's runs")
    assert str(H200 / "ceilings.csv") in rows.note
    # that card named, by best and by predict's roofline alike (best refused it: "no results under results/")
    assert api.best("sgemm", shapes=["4096x4096x4096"], gpu="h200")[0]["chosen_by"] == "tuned here"
    for gpu in ("h200", None):
        assert str(H200 / "ceilings.csv") in api.predict("sgemm", "v1", shape="256x256x256", gpu=gpu).ceilings_source
    mine = tmp_path / "results" / "mycard"
    mine.mkdir(parents=True)
    shutil.copy(H200 / "ceilings.csv", mine / "ceilings.csv")
    rows = api.best("sgemm", shapes=["4096x4096x4096"])
    assert "tuned" not in rows[0]["chosen_by"] and "results/mycard/ceilings.csv" in rows.note
    (tmp_path / "results" / "other").mkdir()  # two cards' results and no GPU to say which: asked, not guessed
    with pytest.raises(GpulabError, match=r"several cards \(mycard, other\).*--gpu"):
        api.best("sgemm", shapes=["4096x4096x4096"])
    assert "results/mycard/" in api.best("sgemm", shapes=["4096x4096x4096"], gpu="mycard").note
    monkeypatch.setattr(records, "LAB_RESULTS", tmp_path / "no-clone")  # an installed wheel, no results of its own
    shutil.rmtree(tmp_path / "results")
    assert records.results_folder(None, None) is None


def test_gpulab_best_says_which_cards_ceilings_and_runs_its_model_read():
    rows = api.best("sgemm", shapes=["300x4096x1000"], results=H200.parent, gpu="h200")
    assert rows.note == (f"the model's card: ceilings measured in {H200 / 'ceilings.csv'}, "
                         f"{cost.card_for(H200).sms} SMs; efficiencies from this card's runs")


def test_a_damaged_file_of_another_card_leaves_the_bare_model(tmp_path, monkeypatch):
    monkeypatch.setattr(calibration, "LAB_RESULTS", tmp_path / "no-clone")
    _new_card_beside_h200(tmp_path, ("ceilings.csv",))
    (tmp_path / "h200" / "sgemm.csv").write_text("experiment,variant\nsgemm")  # cut off
    chooser = best.selector(SGEMM, tmp_path / "newcard")
    assert chooser.runs_from == "" and chooser.runs == {}
    assert best.BARE_MODEL in chooser.pick(SGEMM.shape(16, 4096, 4096)).why


def test_a_config_never_timed_needs_more_than_the_models_noise_to_win():
    """sgemm at 128x8192x8192 on the H200's runs: v13 in 128-row tiles, never timed anywhere, comes
    out about 5% ahead of its 64-row tiles, timed on the card; under MEASURED_EDGE (8%, below the
    model's typical error on rows it did not see) the timed config is the pick."""
    chooser = best.selector(SGEMM, H200)
    shape = SGEMM.shape(128, 8192, 8192)
    modelled = sorted(chooser.estimates(shape), key=lambda e: e.seconds)
    untimed = [e for e in modelled if not chooser.timed_somewhere(e)]
    chosen = chooser.pick(shape)
    assert chosen.variant.name == "v13" and chosen.params["BM"] == 64 and chooser.timed_somewhere(chosen.estimate)
    assert (untimed[0].variant.name, untimed[0].params["BM"]) == ("v13", 128)
    assert untimed[0].seconds < chosen.estimate.seconds <= (1 + best.MEASURED_EDGE) * untimed[0].seconds


def test_configs_the_model_times_alike_count_once_among_a_variants_turns():
    """Before t4 declared its SCHEDULE (Variant.stream_k_param), the cheap bound counted its every
    persistent grid as stream-K, so at 1024x10240x8192 (320 tiles of 128x256 on 132 SMs) its
    configs in SCHEDULE=0 tied in the guess with its stream-K SCHEDULE=1. Once
    a tune at 1024x8192x8192 made SCHEDULE=0 the tuned config nearby, three SCHEDULE=0 configs, which
    the access model times alike (2.4 rounds), took all three of t4's turns, and kc was the pick; it
    ran 0.875x cuBLAS BF16 there (H200, 2026-12-05, call 22). With alike times counted once, SCHEDULE=1
    is weighed, and chosen: 0.967x in the suite's run on the H200 (2026-12-05, call 24). It also moved
    four picks to t4 in SCHEDULE=1, which ran there 0.970-1.016x (8192x4096x4096, 1024x28672x4096,
    1024x57344x8192, 1024x8192x28672; 0.984-1.051x before, in an earlier run)."""
    bf16 = get_experiment("gemm_bf16")
    chooser = best.selector(bf16, H200)
    shape = bf16.shape(1024, 10240, 8192)
    t4 = [e for e in chooser.estimates(shape) + chooser.ranking(shape) if e.variant.name == "t4"]
    assert {e.params["SCHEDULE"] for e in t4} == {0, 1}
    stream_k = min((e for e in t4 if e.params["SCHEDULE"] == 1), key=lambda e: e.seconds)
    assert stream_k.balanced and stream_k.quantization == pytest.approx(1.0)
    assert all(e.quantization > 1.2 for e in t4 if e.params["SCHEDULE"] == 0 and e.params["BN"] == 256)
    pick = chooser.pick(shape)
    assert (pick.variant.name, pick.params["SCHEDULE"]) == ("t4", 1)


def test_a_persistent_grid_whose_params_keep_its_tiles_whole_is_bounded_in_rounds():
    """t4 declares SCHEDULE (Variant.stream_k_param): at 0 its persistent grid hands out whole tiles,
    so its cheap bound (no access model) counts rounds; at 1, stream-K, an even share. Bounded as
    stream-K, its SCHEDULE=0 configs in 256-wide tiles came first in the guess at 1024x6144x4096
    (192 tiles on 132 SMs, 1.45 rounds), used up t4's turns, and the model alone picked stream-K in
    256-wide tiles, which ran 81.3 us on the H200; 192-wide tiles in SCHEDULE=0 (256 tiles, 1.94
    rounds), never weighed, ran 72.1-72.9 (2026-12-05). Now they are weighed, and picked."""
    bf16 = get_experiment("gemm_bf16")
    t4, shape = bf16.variant("t4"), bf16.shape(1024, 6144, 4096)
    chooser = best.Selector(bf16, {}, CARD)
    whole, shared = (chooser._estimate(t4, t4.completed_params({"BN": 256, "CLUSTER": 1, "SCHEDULE": s}), shape,
                                       modelled=False) for s in (0, 1))
    assert not whole.balanced and whole.quantization == pytest.approx(2 * CARD.sms / 192)
    assert shared.balanced and shared.quantization == pytest.approx(1.0)
    alone = model_errors.Unseen(bf16, H200).selector(shape)
    assert any(e.variant.name == "t4" and e.params["BN"] == 192 for e in alone.estimates(shape))
    pick = alone.pick(shape)
    assert (pick.variant.name, pick.params["BN"], pick.params["SCHEDULE"]) == ("t4", 192, 0), pick.why


def test_a_last_wave_that_leaves_block_slots_idle_costs_the_memory_bound_launch():
    """d0 in G=1 U=4 holds 2 blocks an SM at KW = 8 and 4 at KW = 4 (119 registers: the H200's rows),
    where threads alone would fit 8 and 16. At 16x6144x4096 its 384 blocks make 1.45 waves of KW = 8,
    the last leaving 144 of 264 slots idle, and 0.73 of KW = 4: KW = 4 ran 18.3 us, KW = 8 20.3 (H200,
    2026-12-04). The model had both at 20.0-20.3 and the model alone picked KW = 8; the idle slots now
    cost KW = 8's DRAM limit 0.15 x 144/384, and it picks KW = 4."""
    bf16 = get_experiment("gemm_bf16")
    shape, d0 = bf16.shape(16, 6144, 4096), bf16.variant("d0")
    chooser = best.selector(bf16, H200)
    kw8 = d0.completed_params({"G": 1, "U": 4, "KW": 8, "S": 0, "MINB": 1, "DEPTH": 1})
    kw4 = kw8 | {"KW": 4}
    assert chooser.compiled_resident[("d0", tuple(sorted(kw8.items())))] == 2
    eight, four = (chooser._estimate(d0, p, shape, modelled=True) for p in (kw8, kw4))
    assert (eight.slots, eight.units) == (264, 384) and eight.tail == pytest.approx(1 + cost.TAIL_IDLE_COST * 144 / 384)
    assert four.tail == 1.0  # one wave: its fill is what the calibration reads
    assert "1.5 waves of the 264 blocks the SMs hold at once, the last leaving 55% idle" in eight.reason()
    alone = model_errors.Unseen(bf16, H200).pick(shape)
    assert (alone.variant.name, alone.params["KW"]) == ("d0", 4)


def test_no_tail_where_the_card_never_ran_the_config_or_its_blocks_stay():
    """A config never run here has no count of the blocks an SM holds by its registers (threads alone
    would put most launches in one wave), and a persistent grid's blocks stay to the end: no tail."""
    bf16 = get_experiment("gemm_bf16")
    shape = bf16.shape(16, 6144, 4096)
    chooser = best.selector(bf16, H200)
    d0, t4 = bf16.variant("d0"), bf16.variant("t4")
    untimed = d0.completed_params({"G": 1, "U": 4, "KW": 8, "S": 0, "MINB": 1, "DEPTH": 2})
    assert ("d0", tuple(sorted(untimed.items()))) not in chooser.compiled_resident
    assert chooser._estimate(d0, untimed, shape, modelled=True).tail == 1.0
    stream_k = t4.completed_params({"BM": 128, "BN": 256, "STAGES": 4, "GROUP_M": 8, "CLUSTER": 2, "STORE": 1,
                                    "PINGPONG": 0, "SCHEDULE": 1, "EDGE": 0})
    persistent = chooser._estimate(t4, stream_k, bf16.shape(1024, 57344, 8192), modelled=True)
    assert persistent.blocks < persistent.tiles and persistent.compiled_resident and persistent.tail == 1.0


def test_a_results_row_carries_the_blocks_an_sm_held(tmp_path):
    """calibration.timed_runs reads theoretical_blocks_per_sm (registers counted) into Measured.resident;
    a row without it reads 0."""
    rows = read_csv(H200 / "gemm_bf16-llm.csv")
    d0 = [r for r in rows if r["variant"] == "d0" and r["params"].startswith("G=1 U=4 KW=8")][:1]
    bare = [dict(d0[0], theoretical_blocks_per_sm="", shape="16x4096x4096")]
    write_csv(tmp_path / "runs.csv", d0 + bare)
    found = calibration.timed_runs(get_experiment("gemm_bf16"), tmp_path / "runs.csv")
    assert [run.resident for run in found] == [2, 0]
