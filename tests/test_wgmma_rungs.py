"""The Hopper rungs of gemm_bf16 without a GPU: their constraints, and that they compile for sm_90a
through the harness with no spills (tests/gpu/test_wgmma_gpu.py checks their results)."""

from pathlib import Path

import pytest

from gpulab.errors import GpulabError, NotModelled
from gpulab.experiments.base import Shape, no_staging
from gpulab.experiments.gemm_bf16 import tma_rungs
from gpulab.experiments.gemm_bf16.tma_rungs import (
    SMEM_BLOCK_OPTIN_MAX, T2, T3, T4, bt_box_rows, ring_smem_bytes, t2_launch, t3_launch, t4_cluster_tiles,
    t4_launch, t4_main_dims, t4_smem_bytes, t4_tensor_maps, tensor_maps,
)
from gpulab.gpu.compile import compile_kernel
from gpulab.jobs.profile import access_model, predicted_counters
from gpulab.run.args import make_spec

FOLDER = Path(tma_rungs.__file__).parent


def shape(m, n, k):
    return Shape(("M", "N", "K"), (m, n, k))


def test_the_rungs_take_any_shape_and_stage_padded_rows_where_tma_cannot_describe_them():
    for v in (T2, T3):
        for s in ((4097, 4097, 4097), (1000, 3000, 777), (1000, 3001, 776), (1, 1, 1)):
            assert v.constraints(v.default_params(), shape(*s)) is None
    for v in (T2, T3, T4):  # staging.pad_k behind each (tests/test_staging.py: which launch follows it)
        assert v.stage is not no_staging
        # K a multiple of 8: the inputs are read as they are, nothing is staged (no GPU needed to say so).
        assert v.stage({}, shape(1000, 3001, 776), v.default_params(), "sm_90") is None
    # K = 777 unstaged: rows of 1554 bytes, which no tensor map describes; refused in one line.
    unstaged = {"A": _FakeDeviceArray(64, 777), "Bt": _FakeDeviceArray(64, 777)}
    with pytest.raises(GpulabError, match="multiple of 8"):
        tensor_maps(unstaged, None, shape(64, 64, 777), T2.default_params())


class _FakeDeviceArray:
    """What tensor_maps reads of a CuPy array: its shape and its device pointer."""

    def __init__(self, rows, cols, ptr=1 << 20):
        self.shape = (rows, cols)
        self.data = type("Memory", (), {"ptr": ptr})()


def test_t2_states_shared_memory_and_register_limits_up_front():
    assert "shared memory" in T2.constraints(T2.default_params() | {"STAGES": 5}, None)
    assert ring_smem_bytes(T2.default_params()) <= SMEM_BLOCK_OPTIN_MAX
    # 4 warpgroups (512 threads) leave 128 registers: no room for 128 accumulators.
    assert "registers" in T2.constraints({"BM": 256, "BN": 256, "STAGES": 2, "GROUP_M": 8}, None)


def test_t2_launch_covers_every_tile_once():
    launch = t2_launch(T2.default_params(), shape(1000, 3000, 776))
    assert launch.grid == (8 * 12, 1, 1) and launch.block == (256, 1, 1)


@pytest.mark.parametrize("params", [
    T2.default_params(),
    {"BM": 64, "BN": 128, "STAGES": 2, "GROUP_M": 1},
    {"BM": 256, "BN": 128, "STAGES": 3, "GROUP_M": 8},
])
def test_t2_compiles_for_sm90a_with_no_spills(params):
    assert T2.constraints(params, None) is None
    compiled = compile_kernel(FOLDER / T2.file, "gemm_bf16", params, arch=T2.compile_arch("sm_90"))
    r = compiled.resources
    assert compiled.arch == "sm_90a"
    assert r.spill_stores_bytes == 0 and r.spill_loads_bytes == 0 and r.stack_frame_bytes == 0
    assert r.registers <= 255 and r.registers <= params["BN"] // 2 + tma_rungs.T2_REGS_OVER_ACC
    assert "C7508" not in compiled.log and "serialized" not in compiled.log  # ptxas kept wgmma asynchronous


def test_t3_is_a_producer_and_two_consumers():
    p = T3.default_params()
    assert t3_launch(p, shape(4096, 4096, 4096)).block == (384, 1, 1)
    assert "shared memory" in T3.constraints(p | {"STAGES": 5}, None)
    assert T3.constraints(p | {"BN": 128, "STAGES": 6}, shape(1, 1, 8)) is None


@pytest.mark.parametrize("variant, params", [
    (T3, T3.default_params()),
    (T3, T3.default_params() | {"BN": 128, "STAGES": 6}),
    (T4, T4.default_params()),
    (T4, T4.default_params() | {"CLUSTER": 1, "STORE": 0}),
    (T4, T4.default_params() | {"BN": 128, "STAGES": 6, "GROUP_M": 1}),
    (T4, T4.default_params() | {"BN": 128, "STAGES": 6, "PINGPONG": 1}),
    (T4, T4.default_params() | {"BN": 128, "STAGES": 4, "PINGPONG": 1, "CLUSTER": 1, "STORE": 0}),
    (T4, T4.default_params() | {"SCHEDULE": 1}),
    (T4, T4.default_params() | {"SCHEDULE": 1, "CLUSTER": 1, "STORE": 0}),
    (T4, T4.default_params() | {"SCHEDULE": 1, "BN": 128, "STAGES": 6}),
    (T4, T4.default_params() | {"EDGE": 2}),
    (T4, T4.default_params() | {"EDGE": 2, "BN": 128, "PINGPONG": 1}),
    (T4, T4.default_params() | {"EDGE": 2, "SCHEDULE": 1, "BN": 192, "CLUSTER": 1}),
], ids=lambda x: getattr(x, "name", None))
def test_warp_specialized_rungs_compile_for_sm90a_with_no_spills_and_ptxas_honours_setmaxnreg(variant, params):
    assert variant.constraints(params, None) is None
    compiled = compile_kernel(FOLDER / variant.file, "gemm_bf16", params, arch=variant.compile_arch("sm_90"))
    r = compiled.resources
    assert r.spill_stores_bytes == 0 and r.spill_loads_bytes == 0 and r.stack_frame_bytes == 0
    # The entry cap of __launch_bounds__(384, 1); setmaxnreg raises the consumers past it at run time.
    assert r.registers == 168
    assert "C7508" not in compiled.log and "serialized" not in compiled.log


def test_t4_launches_whole_clusters_on_a_persistent_grid_never_more_than_its_tiles(tma_sms):
    p = T4.default_params()
    assert t4_launch(p, shape(4096, 4096, 4096)).grid == (132, 1, 1)  # 256 cluster tiles for 66 clusters
    assert t4_launch(p, shape(2048, 2048, 2048)).grid == (128, 1, 1)  # 64 cluster tiles
    assert t4_launch(p, shape(1, 1, 1)).grid == (2, 1, 1)  # one cluster: the peer's rows lie past M
    assert t4_launch(p | {"CLUSTER": 1}, shape(4096, 4096, 4096)).grid == (132, 1, 1)
    # Clusters of four: the 30 the H200 holds at once (120 SMs), not 132 / 4.
    assert t4_launch(p | {"CLUSTER": 4}, shape(4096, 4096, 4096)).grid == (120, 1, 1)
    assert t4_launch(p | {"CLUSTER": 4, "BN": 200}, shape(1000, 3000, 776)).grid == (120, 1, 1)  # 2 x 15 tiles
    tma_sms(133)  # an odd SM count
    assert t4_launch(p, shape(8192, 8192, 8192)).grid == (132, 1, 1)


def test_t4_states_its_limits_and_splits_bt_between_the_cluster_blocks():
    p = T4.default_params()
    assert p["CLUSTER"] == 2 and bt_box_rows(p) == 128 and bt_box_rows(T3.default_params()) == 256
    assert "shared memory" in T4.constraints(p | {"STAGES": 5}, None)
    assert T4.constraints(p | {"BN": 128, "STAGES": 6}, shape(1, 1, 8)) is None
    # The tune space: a config fits or is refused for shared memory, before anything compiles.
    space = T4.param_grid({q.name: q.choices for q in T4.params})
    reasons = [T4.constraints(c, None) for c in space]
    assert all(r is None or "shared memory" in r or "PINGPONG=1 needs BN=128" in r or "SCHEDULE=1 needs PINGPONG=0" in r
               for r in reasons)
    # BN 256 fits 2-4 stages, BN 128 2-6, with or without the epilogue's 32 KiB; BN 192 and 200 2-5
    # without it, 2-4 with it; times 4 group sizes, 3 cluster sizes and 2 schedules; pingpong
    # consumers only with BN 128 and schedule 0; each with or without the edge on the producer's warps.
    assert sum(r is None for r in reasons) == ((2 * (3 + 5) + 2 * (4 + 3)) * 4 * 3 * 2 + 5 * 4 * 3 * 2) * 2
    assert "shared memory" in T4.constraints(p | {"BN": 192, "STAGES": 5}, None)
    assert T4.constraints(p | {"BN": 192, "STAGES": 5, "STORE": 0}, None) is None
    assert "BN=128" in T4.constraints(p | {"PINGPONG": 1}, None)
    assert t4_smem_bytes(p) == ring_smem_bytes(p) + 32768 <= SMEM_BLOCK_OPTIN_MAX


def test_t4_tiles_leave_an_edge_of_up_to_2_rows_and_columns_to_the_producer_warps(tma_sms):
    p = T4.default_params() | {"EDGE": 2}
    # 4097 = 16 cluster tiles of 256 rows (16 tiles of 256 columns) + 1: the tiles are 4096^3's.
    assert t4_main_dims(p, shape(4097, 4097, 4097)) == (4096, 4096)
    assert t4_cluster_tiles(p, shape(4097, 4097, 4097)) == 256 == t4_cluster_tiles(p, shape(4096, 4096, 4096))
    assert t4_cluster_tiles(p | {"EDGE": 0}, shape(4097, 4097, 4097)) == 17 * 17
    assert t4_main_dims(p, shape(4098, 4099, 64)) == (4096, 4099)  # 2 rows past: the edge; 3 columns: a tile
    assert t4_main_dims(p | {"CLUSTER": 1}, shape(4226, 4097, 64)) == (4224, 4096)  # clusters of one: 128 rows
    assert t4_main_dims(p | {"BN": 192}, shape(4097, 3842, 64)) == (4096, 3840)  # 20 x 192 + 2
    assert t4_main_dims(p, shape(4096, 4096, 64)) == (4096, 4096)  # nothing past whole tiles
    assert t4_main_dims(p, shape(257, 130, 64)) == (256, 130)  # no whole tile of columns: ragged tiles
    assert t4_main_dims(p, shape(1, 2, 64)) == (1, 2)
    assert t4_main_dims(T4.default_params(), shape(4097, 4097, 64)) == (4097, 4097)  # EDGE = 0 by default


def test_t4_canonical_config_drops_an_edge_that_takes_nothing():
    p = T4.default_params() | {"EDGE": 2}
    assert T4.canonical(p, shape(1024, 6144, 4096)) == p | {"EDGE": 0}  # whole tiles: EDGE does nothing
    assert T4.canonical(p | {"BN": 192}, shape(1000, 3000, 777)) == p | {"BN": 192, "EDGE": 0}  # 104, 120 past
    assert T4.canonical(p, shape(4097, 4097, 4097)) == p  # 1 row and 1 column past whole tiles: the edge's
    assert T4.canonical(p, shape(257, 130, 64)) == p  # the edge takes the 257th row
    assert T4.canonical(T4.default_params(), shape(4097, 4097, 64)) == T4.default_params()


def test_t4_passes_no_c_map_where_tma_cannot_store_c(monkeypatch):
    zeros = bytes(128)
    # A's and Bt's maps are t2/t3's (staged rows where K % 8 != 0, encoded by the driver: not here).
    monkeypatch.setattr(tma_rungs, "tensor_maps", lambda inputs, out, shape, params: ("A map", "Bt map"))
    # N = 3001: FP32 rows of 12004 bytes, not a multiple of 16: no C map.
    maps = t4_tensor_maps({}, None, shape(64, 3001, 777), T4.default_params())
    assert maps[:2] == ("A map", "Bt map") and maps[2].tobytes() == zeros
    maps = t4_tensor_maps({}, None, shape(64, 3000, 777), T4.default_params() | {"STORE": 0})
    assert maps[:2] == ("A map", "Bt map") and maps[2].tobytes() == zeros


# -- SCHEDULE = 1: the stream-K tail ----------------------------------------------------------------
def _units(cluster_id, clusters, tiles, sk_tiles, k_tiles):
    """The kernel's WorkList (t4_persistent_cluster.cu) restated: one cluster's (tile, kb, ke) in order."""
    dp_tiles = tiles - sk_tiles
    units = [(t, 0, k_tiles) for t in range(cluster_id, dp_tiles, clusters)]
    total = sk_tiles * k_tiles
    g, g_end = total * cluster_id // clusters, total * (cluster_id + 1) // clusters
    while g < g_end:
        kb = g % k_tiles
        ke = min(k_tiles, kb + g_end - g)
        units.append((dp_tiles + g // k_tiles, kb, ke))
        g += ke - kb
    return units


@pytest.mark.parametrize("dims", [(4096, 4096, 4096), (8192, 8192, 8192), (4097, 4097, 4097), (4096, 4096, 128),
                                  (3000, 5000, 264), (4096, 2304, 776), (4096, 4096, 4096, 1), (8192, 1024, 8192)],
                         ids=lambda d: "x".join(map(str, d)))
def test_t4_stream_k_covers_every_k_tile_once_and_splits_a_tile_between_two_neighbouring_clusters(tma_sms, dims):
    m, n, k, *cluster = dims
    p = T4.default_params() | {"SCHEDULE": 1, "CLUSTER": cluster[0] if cluster else 2}
    s = shape(m, n, k)
    clusters = t4_launch(p, s).grid[0] // p["CLUSTER"]
    tiles, k_tiles = tma_rungs.t4_cluster_tiles(p, s), -(-k // 64)
    sk = tma_rungs.t4_stream_k_tiles(p, s, clusters)
    assert sk and clusters <= sk <= tiles and tiles - sk == (tiles // clusters - 1) * clusters
    seen = {}
    for c in range(clusters):
        units = _units(c, clusters, tiles, sk, k_tiles)
        for i, (t, kb, ke) in enumerate(units):
            assert kb < ke
            for kt in range(kb, ke):
                assert (t, kt) not in seen
                seen[(t, kt)] = c
            # What the kernel's fixup assumes: a tile's end (kb > 0) opens a range, its start closes
            # one, and the next cluster holds the rest.
            if kb > 0:
                assert all(u[1:] == (0, k_tiles) for u in units[:i]), "a split tile's end after a partial unit"
                assert ke == k_tiles and _units(c - 1, clusters, tiles, sk, k_tiles)[-1] == (t, 0, kb)
            if ke < k_tiles:
                assert i == len(units) - 1 and kb == 0
    assert len(seen) == tiles * k_tiles
    owners = {}
    for (t, _), c in seen.items():
        owners.setdefault(t, set()).add(c)
    assert max(len(o) for o in owners.values()) == 2  # some tiles split, none over three clusters


def test_t4_stream_k_tiles_are_the_last_partial_round_and_one_full_round(tma_sms):
    p = T4.default_params() | {"SCHEDULE": 1}
    # 4096^3: 256 cluster tiles for 66 clusters, 3 rounds + 58: the last 58 + 66 split.
    assert tma_rungs.t4_stream_k_tiles(p, shape(4096, 4096, 4096), 66) == 124
    assert tma_rungs.t4_stream_k_tiles(p, shape(8192, 8192, 8192), 66) == 1024 % 66 + 66
    assert tma_rungs.t4_stream_k_tiles(p, shape(4097, 4097, 4097), 66) == 17 * 17 % 66 + 66
    # None: SCHEDULE 0, one k-tile, whole rounds, fewer tiles than clusters (2048^3: 64 clusters launched).
    assert tma_rungs.t4_stream_k_tiles(T4.default_params(), shape(4096, 4096, 4096), 66) == 0
    assert tma_rungs.t4_stream_k_tiles(p, shape(4096, 4096, 64), 66) == 0
    assert tma_rungs.t4_stream_k_tiles(p, shape(66 * 256, 256, 4096), 66) == 0
    assert tma_rungs.t4_stream_k_tiles(p, shape(2048, 2048, 2048), 64) == 0


def test_t4_workspace_holds_one_partial_and_one_flag_per_consumer_of_every_block(tma_sms):
    p = T4.default_params() | {"SCHEDULE": 1}
    assert tma_rungs.t4_workspace_sizes(p, shape(4096, 4096, 4096)) == (132 * 128 * 256, 132 * 2)  # 17.3 MB
    assert tma_rungs.t4_workspace_sizes(p | {"CLUSTER": 1, "BN": 128, "STAGES": 6},
                                        shape(4096, 4096, 4096)) == (132 * 128 * 128, 132 * 2)
    assert tma_rungs.t4_workspace_sizes(T4.default_params(), shape(4096, 4096, 4096)) == (1, 1)
    assert tma_rungs.t4_workspace_sizes(p, shape(2048, 2048, 2048)) == (1, 1)


def test_t4_stream_k_refuses_pingpong_consumers():
    p = T4.default_params() | {"BN": 128, "STAGES": 6, "SCHEDULE": 1}
    assert T4.constraints(p, None) is None
    assert "PINGPONG=0" in T4.constraints(p | {"PINGPONG": 1}, None)


def test_t4_model_gives_the_counts_nsight_compute_recorded_at_4096_cubed(tma_sms):
    """results/h200/profile.csv, t4 at 4096^3 (H200, 2026-12-01): every counted quantity but the
    shared store wavefronts, which the epilogue's store order changed since (fidelity.csv has them)."""
    from gpulab.model.predict import predict
    got = predict(T4.access(T4.default_params(), shape(4096, 4096, 4096)))
    recorded = {"smem_load_requests": 9216, "smem_store_requests": 262276,
                "gmem_store_requests": 0, "tma_load_requests": 81920, "tma_load_bytes": 1610612736,
                "gmma_requests": 1048576}
    assert {k: got[k] for k in recorded} == recorded


def test_t4_model_declines_the_stream_k_schedule_in_one_line():
    with pytest.raises(NotModelled, match="SCHEDULE=1 is not modelled"):
        T4.access(T4.default_params() | {"SCHEDULE": 1}, shape(4096, 4096, 4096))


def test_t4_model_counts_the_edge_loads_and_stores_and_nothing_where_there_is_none(tma_sms):
    from gpulab.model.predict import instruction_table, predict
    p = T4.default_params() | {"EDGE": 2}
    for dims in ((300, 388, 200), (4096, 4096, 4096)):  # no edge: EDGE=0's predictions
        assert predict(T4.access(p, shape(*dims))) == predict(T4.access(T4.default_params(), shape(*dims)))
    # 258 x 514 x 72: 2 rows and 2 columns past 256 x 512; 514 + 256 items, each one warp load of its
    # row (9 chunks of 16 bytes: one iteration), two of the edge rows, and one store (lanes 0, 1).
    def edge(dims):
        rows = instruction_table(T4.access(p, shape(*dims)))
        return {r["name"].split(" (")[0]: (r["requests"], r["sectors"]) for r in rows if "edge" in r["name"]}

    # 144-byte rows at 16-byte offsets: 5 sectors each; the sums of lanes 0 and 1 in one sector where
    # they share a row of C (the right edge's), two where they are rows apart (the bottom's: 514 of 770)
    assert edge((258, 514, 72)) == {"ldg.128 edge item row": (770, 770 * 5), "ldg.128 edge rows": (1540, 1540 * 5),
                                    "stg edge sums": (770, 514 * 2 + 256)}
    assert predict(T4.access(p, shape(258, 514, 72)))["gmma_requests"] == \
        predict(T4.access(T4.default_params(), shape(256, 512, 72)))["gmma_requests"]  # the same tiles
    # 4097^3 (one row and column, two chunks in flight a lane): 8,193 items of 513 chunks, 17 warp
    # loads of each row (9 iterations of two, the last load with no lane left makes no request)
    counts = edge((4097, 4097, 4097))
    assert counts["ldg.128 edge item row"][0] == counts["ldg.128 edge rows"][0] == 8193 * 17
    assert counts["stg edge sums"] == (8193, 8193)


@pytest.mark.parametrize("dims, changes", [((258, 514, 72), {}), ((129, 257, 65), {"CLUSTER": 1}),
                                           ((4098, 2049, 1000), {"BN": 128, "PINGPONG": 1}),
                                           ((2050, 1921, 776), {"BN": 192, "STORE": 0})], ids=str)
def test_t4_edge_model_classes_are_exact(tma_sms, dims, changes):
    tma_sms(8)
    from gpulab.model.predict import predict
    p = T4.default_params() | {"EDGE": 2} | changes
    assert t4_main_dims(p, shape(*dims)) != dims[:2]
    model = T4.access(p, shape(*dims))
    assert model.grid[0] <= 8  # the 8 SMs the fixture set (a round or several, by the tiles)
    assert predict(model) == predict(model, exhaustive=True)


def test_a_config_the_model_declines_is_still_profiled_with_its_reason():
    """profile --sass and the record take the measured counts alone where the model declines a config
    (before, profile --sass of t4 SCHEDULE=1 captured, then stopped on the model's error)."""
    declined = make_spec("gemm_bf16", "t4", {"SCHEDULE": 1}, "4096x4096x4096")
    model, why = access_model(declined)
    assert model is None and "SCHEDULE=1 is not modelled" in why
    assert predicted_counters(declined) == (None, why)
    model, why = access_model(make_spec("gemm_bf16", "t4", {"SCHEDULE": 0}, "4096x4096x4096"))
    assert model is not None and why == ""
