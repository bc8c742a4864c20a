"""What the access model cannot see of a config it declines, read off the card's runs beside its
sibling (gpulab.jobs.siblings, Selector.unseen_cost)."""

from pathlib import Path

import pytest

from gpulab.experiments import get_experiment
from gpulab.jobs import best, cost
from gpulab.jobs.calibration import Measured
from gpulab.jobs.model_errors import Unseen
from gpulab.jobs.siblings import PAIR_SHAPES, unseen_seconds

H200 = Path(__file__).resolve().parents[1] / "results" / "h200"
US = 1e-6


def _runs(rows: dict) -> dict:
    """{shape: [Measured]} from {shape: [(S, microseconds)]}: one config (P=1) per S."""
    return {shape: [Measured("x", {"P": 1, "S": s}, shape, t * US) for s, t in found] for shape, found in rows.items()}


def test_the_unseen_time_is_the_median_over_the_nearest_shapes_where_a_pair_ran():
    """At each shape, the declined config's time less its sibling's scaled by their two models; the
    median over the PAIR_SHAPES nearest with a pair (a shape with one config alone is passed over),
    never below 0, and where from."""
    model = {((1, 1, 1), 1): 10.0, ((1, 1, 1), 0): 10.0, ((2, 2, 2), 1): 9.0, ((2, 2, 2), 0): 10.0,
             ((4, 4, 4), 1): 20.0, ((4, 4, 4), 0): 20.0, ((8, 8, 8), 1): 10.0, ((8, 8, 8), 0): 10.0}
    rows = {(1, 1, 1): [(1, 15), (0, 10)],    # 5 us over its sibling, the models alike
            (2, 2, 2): [(1, 12), (0, 10)],    # the model puts it at 0.9 of the sibling: 12 - 9 = 3
            (3, 3, 3): [(1, 99)],             # no sibling ran here: passed over
            (4, 4, 4): [(1, 28), (0, 20)],    # 8
            (8, 8, 8): [(1, 110), (0, 10)]}   # beyond PAIR_SHAPES: never read
    runs = _runs(rows)
    found = unseen_seconds("S", 1, 0, (1, 1, 1), runs, lambda s: runs[s],
                           lambda run: model[(run.shape, run.params["S"])] * US)
    assert PAIR_SHAPES == 3
    assert found[0] == pytest.approx(5 * US)
    assert found[1] == "+5 us that S=1 took beside S=0 (at 1x1x1, 2x2x2, 4x4x4)"
    faster = _runs({(1, 1, 1): [(1, 8), (0, 10)]})
    assert unseen_seconds("S", 1, 0, (1, 1, 1), faster, lambda s: faster[s],
                          lambda run: 10 * US)[0] == 0.0  # ran faster than its sibling: nothing added
    alone = _runs({(1, 1, 1): [(1, 8)]})
    assert unseen_seconds("S", 1, 0, (1, 1, 1), alone, lambda s: alone[s], lambda run: 10 * US) is None


def test_each_shape_is_one_vote_however_many_pairs_ran_there():
    """Five pairs at the nearest shape, 1 us over each, against one pair at each of the next two, 10
    us over: the median of the shapes' medians (10), not of the seven pairs (1)."""
    rows = {(1, 1, 1): [(1, 11), (0, 10)], (2, 2, 2): [(1, 20), (0, 10)], (4, 4, 4): [(1, 20), (0, 10)]}
    runs = _runs(rows)
    many = [Measured("x", {"P": p, "S": s}, (1, 1, 1), t * US) for p in range(5) for s, t in ((1, 11), (0, 10))]
    runs[(1, 1, 1)] = many
    found = unseen_seconds("S", 1, 0, (1, 1, 1), runs, lambda s: runs[s], lambda run: 10 * US)
    assert found[0] == pytest.approx(10 * US)


def test_t4s_stream_k_pays_what_its_runs_took_beside_its_whole_tiles():
    """t4 in stream-K (SCHEDULE=1) is declined by its access model and takes SCHEDULE=0's bytes and a
    perfectly even share: on the H200's rows, with nothing near 1024x8192x8192 left in, the model
    alone put it first there (171 us) and it ran 188.6 us, 1.06x the tune's SCHEDULE=0 (177.8). With
    what its runs took beside SCHEDULE=0 at the nearest shapes added, SCHEDULE=0 is the pick."""
    bf16 = get_experiment("gemm_bf16")
    t4 = bf16.variant("t4")
    shape = bf16.shape(1024, 8192, 8192)
    chooser = Unseen(bf16, H200).selector(shape)
    stream_k = t4.default_params() | {"BM": 128, "BN": 256, "STAGES": 4, "GROUP_M": 8, "CLUSTER": 2, "STORE": 1,
                                      "PINGPONG": 0, "SCHEDULE": 1, "EDGE": 0}
    est = chooser._estimate(t4, stream_k, shape, modelled=True)
    assert cost.DECLINED in est.note
    assert "that SCHEDULE=1 took beside SCHEDULE=0 (at " in est.efficiency_from
    unseen, _ = chooser.unseen_cost(t4, stream_k, stream_k | {"SCHEDULE": 0}, shape)
    assert unseen > 1 * US and est.seconds == pytest.approx(est.roof_s / est.efficiency)
    pick = chooser.pick(shape)
    assert (pick.variant.name, pick.params["SCHEDULE"]) == ("t4", 0), pick.why


def test_a_config_only_too_large_to_model_here_pays_nothing_unseen():
    """sgemm's v14 with STORE=0 is too large for the access model at 1024x4096x4096 (LANE_BUDGET), not
    declined: STORE=1's bytes stand in, and its runs beside STORE=1 (a median of 37 us more at
    4096^3, 4097^3 and 1000x3000x777, a cost that grows with the output) are not added (added, v14
    moved to STORE=1 there and ran 1.05x slower on an H100, 2026-12-06, call 63)."""
    sgemm = get_experiment("sgemm")
    v14 = sgemm.variant("v14")
    chooser = best.selector(sgemm, H200)
    store0 = {"BM": 128, "BN": 128, "STAGES": 5, "GROUP_M": 8, "CLUSTER": 1, "STORE": 0, "SCHEDULE": 0, "FLUSH": 8}
    est = chooser._estimate(v14, store0, sgemm.shape(1024, 4096, 4096), modelled=True)
    assert "too large to evaluate" in est.note and "took beside" not in est.efficiency_from
