"""The one-line readings of profiler numbers (report/readings.py)."""

import math

import pytest

from gpulab import quantities as Q
from gpulab.quantities import STALL_REASONS
from gpulab.report import readings as rd


def test_every_stall_reason_has_a_reading():
    for reason in STALL_REASONS:
        assert STALL_REASONS[reason].label and STALL_REASONS[reason].meaning
        assert rd.stall_reading(reason).startswith(f"top stall {Q.stall_label(reason)}")


def test_mio_throttle_reading():
    text = rd.stall_reading("mio_throttle")
    assert text.startswith("top stall MIO throttle: the MIO instruction queue is full")
    assert "shared-memory" in text


def test_top_stalls_rank_and_skip_selected():
    stalls = {"selected": 1.0, "long_scoreboard": 7.75, "mio_throttle": 6.29, "barrier": 4.19,
              "gmma": math.nan, "wait": 0.0}
    top = Q.top_stalls(stalls, 3)
    assert [r for r, _, _ in top] == ["long_scoreboard", "mio_throttle", "barrier"]
    assert sum(s for _, _, s in Q.top_stalls(stalls, 10)) == pytest.approx(1.0)
    assert Q.top_stalls({"selected": 1.0}) == []


@pytest.mark.parametrize("spr, words", [
    (32.0, "each lane reads its own sector, the access is not coalesced"),
    (24.0, "poorly coalesced"),
    (4.0, "coalesced (the ideal for 4-byte lanes)"),
    (16.0, "the ideal for 16-byte lanes"),
    (2.0, "broadcast"),
    (6.0, "between coalesced"),
])
def test_sectors_per_request(spr, words):
    assert words in rd.sectors_per_request(spr)


def test_sectors_per_request_none_for_nothing():
    assert rd.sectors_per_request(0.0) is None and rd.sectors_per_request(math.nan) is None


@pytest.mark.parametrize("conflicts, requests, words", [
    (0, 100, "no bank conflicts"),
    (3_100, 100, "32-way"),
    (100, 100, "2-way"),
    (3_292, 5_242_880, "a few instructions conflict"),
])
def test_bank_conflicts(conflicts, requests, words):
    assert words in rd.bank_conflicts(conflicts, requests, 6_294_748)


@pytest.mark.parametrize("measured, predicted, words", [
    (524_288, 524_288, "exact"), (0, 0, "exact"), (1_000_001, 1_000_000, "within"),
    (600_000, 524_288, "14.4% more than the model"), (400_000, 524_288, "fewer than the model"),
    (8_388_608, 524_288, "16x the model's count"), (10, 0, "none was predicted"),
])
def test_agreement(measured, predicted, words):
    assert words in rd.agreement(measured, predicted)


def test_agreement_without_prediction_is_silent():
    assert rd.agreement(5, None) is None


@pytest.mark.parametrize("measured, words", [
    (2_101_504, "below the floor"), (3_200_000, "about once"), (30_000_000, "re-reads reach DRAM"),
])
def test_dram_vs_floor(measured, words):
    assert words in rd.dram_vs_floor(measured, 3 * 512 * 512 * 4, 62_914_560)


def test_headline_readings_fire_only_at_their_thresholds():
    assert "idle" in rd.dram_throughput(1.0) and rd.dram_throughput(30) is None and "busy" in rd.dram_throughput(85)
    assert "hit L1" in rd.l1_hit_rate(88.6) and "never hit" in rd.l1_hit_rate(3.2) and rd.l1_hit_rate(50) is None
    assert "fits in L2" in rd.l2_hit_rate(96.8) and "DRAM" in rd.l2_hit_rate(20)
    assert "latency is exposed" in rd.eligible_warps(0.73) and rd.eligible_warps(1.5) is None
    assert "mostly wait" in rd.issue_slots_busy(17.8) and "instruction-bound" in rd.issue_slots_busy(90)
    assert "tail effect" in rd.occupancy(50, 100) and rd.occupancy(95, 100) is None
    assert "limited by registers" in rd.occupancy(30, 37.5, "registers")


@pytest.mark.parametrize("a, b, arrow, size", [
    (100, 50, "↓", "2x"), (50, 100, "↑", "2x"), (100, 101, "≈", ""), (0, 5, "↑", "from 0"),
    (5, 0, "↓", "to 0"), (8_388_608, 524_288, "↓", "16x"), (None, 1, "", ""),
])
def test_change(a, b, arrow, size):
    assert rd.change(a, b) == (arrow, size)


def test_verdict():
    assert rd.verdict(100, 50, "lower") == "better"
    assert rd.verdict(100, 50, "higher") == "worse"
    assert rd.verdict(100, 50, None) == ""
    assert rd.verdict(100, 100.5, "lower") == ""


def test_compare_story_tells_the_wiki_pages_v0_v1_story():
    v0 = {"duration_ns": 58_592, "gmem_load_requests": 8_388_608, "smem_load_requests": 0,
          "dram_throughput_pct": 18.1, "top_stall": "long_scoreboard"}
    v1 = {"duration_ns": 44_256, "gmem_load_requests": 524_288, "smem_load_requests": 5_242_880,
          "smem_load_bank_conflicts": 0, "dram_throughput_pct": 9.6, "top_stall": "mio_throttle"}
    story = " ".join(rd.compare_story(v0, v1, "v0", "v1"))
    assert "Global load requests fell 16x" in story
    assert "shared load instructions where v0 had none" in story
    assert "DRAM throughput dropped" in story
    assert "top stall moved from long scoreboard to MIO throttle" in story
    assert "faster" in story


def test_compare_story_names_the_instructions_a_tensor_core_rung_changed():
    """gemm_bf16 at 4096^3 on the H200 (2026-12-01): t1 -> t2 trades cp.async and ldmatrix for TMA
    and wgmma; t3 -> t4's shared loads (its tile grid, read per tile) are not operand traffic."""
    t1 = {"gmem_load_requests": 4_194_304, "gmem_ldgsts_requests": 4_194_304, "smem_ldsm_requests": 12_582_912,
          "tma_load_requests": 0, "gmma_requests": 0, "smem_load_requests": 0}
    t2 = {"gmem_load_requests": 0, "gmem_ldgsts_requests": 0, "smem_ldsm_requests": 0,
          "tma_load_requests": 65_536, "gmma_requests": 1_048_576, "smem_load_requests": 0}
    story = " ".join(rd.compare_story(t1, t2, "t1", "t2"))
    assert "t2 issues TMA copies (65,536) where t1 issued none" in story
    assert "t2 issues wgmma instructions (per warp) (1,048,576)" in story
    assert "t2 issues no ldmatrix loads (t1 issued 12,582,912)" in story and "no cp.async copies" in story
    t3 = dict(t2)
    t4 = dict(t2, tma_load_requests=81_920, smem_load_requests=9_216)
    story = " ".join(rd.compare_story(t3, t4, "t3", "t4"))
    assert "operand traffic" not in story and "TMA" not in story


def test_compare_story_same_stall():
    story = rd.compare_story({"top_stall": "mio_throttle"}, {"top_stall": "mio_throttle"}, "a", "b")
    assert story == ["Both stall most on MIO throttle: " + STALL_REASONS["mio_throttle"].meaning + "."]


def test_arbitration_in_the_hardware_counters_does_not_reach_the_judged_wavefronts_and_conflicts():
    """v9 at 4096^3 on the H200 (2026-12-01): the hardware counted 548,860 store wavefronts against
    the model's 524,288, with 24,572 bank conflicts where the model has none (arbitration between
    warps). Judged by the instrumented wavefronts, the run reads exact; the hardware rows keep the
    noise, shown, not judged."""
    from types import SimpleNamespace

    from gpulab.report.profile_tables import counted_reading

    metrics = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 548_860.0,
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": 24_572.0,
               "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 524_288.0,
               "smsp__sass_inst_executed_op_shared_st.sum": 131_072.0}
    measured = Q.measure(metrics)
    assert measured["smem_store_ideal_wavefronts"] == 524_288 and measured["smem_store_bank_conflicts"] == 0
    predicted = {"smem_store_wavefronts": 524_288, "smem_store_bank_conflicts": 0, "smem_store_requests": 131_072,
                 "smem_store_ideal_wavefronts": 524_288}
    prof = SimpleNamespace(measured=measured, prediction=lambda k: predicted.get(k.removeprefix("hw_")), info={})
    assert counted_reading(prof, "smem_store_wavefronts") == "exact"
    assert counted_reading(prof, "smem_store_bank_conflicts") == "no bank conflicts"
    assert "more than the model" in counted_reading(prof, "hw_smem_store_wavefronts")
    # A real conflict the model missed: the instrumented wavefronts are over, and so are the conflicts.
    metrics["sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] += 131_072
    prof.measured = Q.measure(metrics)
    assert "its accounting of this kernel is off" in counted_reading(prof, "smem_store_wavefronts")
    assert "about a 2-way bank conflict" in counted_reading(prof, "smem_store_bank_conflicts")


def test_a_negative_conflict_count_is_read_as_no_count_at_all():
    """t4 and cuBLAS BF16 at 4096^3 on the H200 (gpulab compare gemm_bf16 t4 cublas): the derived shared-load
    conflicts came out -2,779 and -751,120; neither is a conflict count, so no reading of one and no verdict."""
    assert rd.bank_conflicts(-2779.0, 9216.0, 9216.0) == rd.NOT_A_CONFLICT_COUNT
    assert rd.verdict(-2779.0, -751120.0, "lower") == ""
    assert rd.verdict(0.0, -315.0, "lower") == ""
    assert rd.verdict(10.0, 2.0, "lower") == "better"  # counts as ever


def test_the_story_says_when_the_same_work_is_issued_better():
    """sgemm v13 (S=8) against cuBLAS at 2048^3 on the H200 (results/h200/profile.csv): the same
    instructions, the issue slots busier in cuBLAS; and t4 against cuBLAS BF16 at 4097^3: a clock apart."""
    v13 = {"warp_instructions": 301_297_984.0, "issue_slots_busy_pct": 81.3, "sm_clock_hz": 1.957e9}
    cublas = {"warp_instructions": 301_505_536.0, "issue_slots_busy_pct": 88.5, "sm_clock_hz": 1.962e9}
    story = " ".join(rd.compare_story(v13, cublas, "v13", "cublas"))
    assert "Both executed the same warp instructions (within 0.1%); cublas kept its issue slots busier" in story
    assert "88.5% against 81.3%" in story and "MHz" not in story  # 0.3% apart: not worth a line
    t4 = {"warp_instructions": 45_108_583.0, "issue_slots_busy_pct": 30.0, "sm_clock_hz": 1.646e9}
    lib = {"warp_instructions": 260_346_660.0, "issue_slots_busy_pct": 60.0, "sm_clock_hz": 1.797e9}
    story = " ".join(rd.compare_story(t4, lib, "t4", "cublas"))
    assert "cublas executed 5.77x the warp instructions of t4" in story and "same warp instructions" not in story
    assert "cublas ran at 1,797 MHz against 1,646" in story
