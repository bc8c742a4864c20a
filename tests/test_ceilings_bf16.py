"""The tensor-core ceilings with no GPU: which rows a file needs, how an older file gets them, which
ceiling gemm_bf16 records (and sgemm's 3xTF32 v14) are shown against, and the kernels' compiles."""

from __future__ import annotations

import numpy as np
import pytest

from gpulab.errors import GpulabError
from gpulab.jobs import ceilings as measuring
from gpulab.records import ceilings as table
from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16.bf16 import from_bf16_bits
from gpulab.gpu.compile import compile_kernel


class _Card:
    def __init__(self, name="NVIDIA H200", cc=(9, 0)):
        self.name, self.compute_capability = name, cc


def _rows(gpu="NVIDIA H200", bf16=True, instruction="wgmma m64n256k16", tf32=True):
    """A ceilings file; `tf32`: with the TF32 wgmma row a Hopper card's file holds (where bf16 and the
    instruction is wgmma)."""
    env = {"gpu": gpu, "date": "2026-12-01T05:00:00+00:00"}
    rows = [{"ceiling": n, "gflops": 50_000.0, "gbps": 4000.0, "time_ms": 1.0, **env} for n in table.names()]
    if bf16:
        tensor = {"instruction": instruction} if instruction else {}  # None: a file from before the column
        rows += [{"ceiling": "tensor_bf16", "gflops": 600_000.0, "datasheet_gflops": 989_400.0, "time_ms": 30.0,
                  **tensor, **env},
                 {"ceiling": "cublas_bf16_4096", "gflops": 670_000.0, "time_ms": 0.2, **env},
                 {"ceiling": "cublas_bf16_8192", "gflops": 720_000.0, "time_ms": 1.5, **env}]
        if tf32 and instruction == table.WGMMA:
            rows.append({"ceiling": "tensor_tf32", "gflops": 300_000.0, "instruction": table.WGMMA_TF32, **env})
    return rows


def _tensor_rows():
    """What measure_tensor returns on a Hopper card (its mma.sync row aside)."""
    return [r for r in _rows() if r["ceiling"] in table.tensor_names(_Card())]


def test_a_file_without_bf16_rows_is_still_complete():
    assert not set(table.bf16_names()) & set(table.names())


def test_ensure_adds_only_the_bf16_rows_to_an_older_file(tmp_path, monkeypatch):
    table.save(table.ceilings_path(tmp_path), _rows(bf16=False))
    calls = []
    monkeypatch.setattr(measuring, "measure", lambda *a, **k: pytest.fail("measured everything again"))
    monkeypatch.setattr(measuring, "measure_tensor", lambda device, **k: calls.append(device.name) or _tensor_rows())
    got = measuring.ensure(_Card(), tmp_path)
    assert got.measured and calls == ["NVIDIA H200"]
    assert [r["ceiling"] for r in got.rows] == list(table.names()) + list(table.bf16_names()) + ["tensor_tf32"]
    again = measuring.ensure(_Card(), tmp_path)  # now complete: read back, nothing measured
    assert not again.measured and calls == ["NVIDIA H200"]
    assert again.row("tensor_bf16")["gflops"] == pytest.approx(600_000.0)


def test_a_hopper_file_whose_tensor_row_is_mma_sync_gets_the_bf16_rows_measured_again(tmp_path, monkeypatch):
    # The file on main before the wgmma kernel: tensor_bf16 by mma.sync (631 TFLOP/s on the H200), no
    # instruction column; GEMMs reaching 718-758 read 114% of it.
    table.save(table.ceilings_path(tmp_path), _rows(instruction=None))
    monkeypatch.setattr(measuring, "measure", lambda *a, **k: pytest.fail("measured everything again"))
    fresh = _tensor_rows() + [{"ceiling": "tensor_bf16_mma_sync", "gflops": 631_000.0,
                               "instruction": "mma.sync m16n8k16", "gpu": "NVIDIA H200"}]
    monkeypatch.setattr(measuring, "measure_tensor", lambda device, **k: fresh)
    got = measuring.ensure(_Card(), tmp_path)
    assert got.measured
    assert [r["ceiling"] for r in got.rows].count("tensor_bf16") == 1
    assert got.row("tensor_bf16")["instruction"] == "wgmma m64n256k16"
    assert got.row("tensor_bf16_mma_sync")["gflops"] == pytest.approx(631_000.0)
    assert not measuring.ensure(_Card(), tmp_path).measured  # read back: current now


def test_a_hopper_file_from_before_the_tf32_row_gets_the_tensor_rows_measured_again(tmp_path, monkeypatch):
    # results/h200/ceilings.csv before tensor_tf32: BF16 by wgmma, no TF32 rate for v14 to be held to.
    table.save(table.ceilings_path(tmp_path), _rows(tf32=False))
    monkeypatch.setattr(measuring, "measure", lambda *a, **k: pytest.fail("measured everything again"))
    monkeypatch.setattr(measuring, "measure_tensor", lambda device, **k: _tensor_rows())
    got = measuring.ensure(_Card(), tmp_path)
    assert got.measured and got.gflops("tensor_tf32") == pytest.approx(300_000.0)
    assert [r["ceiling"] for r in got.rows].count("tensor_bf16") == 1
    assert not measuring.ensure(_Card(), tmp_path).measured


def test_an_ampere_file_measured_by_mma_sync_is_current(tmp_path, monkeypatch):
    # No TF32 row either: the TF32 ceiling is wgmma's, measured on sm_90 alone.
    table.save(table.ceilings_path(tmp_path), _rows("NVIDIA A100-SXM4-80GB", instruction=None))
    monkeypatch.setattr(measuring, "measure_tensor", lambda *a, **k: pytest.fail("mma.sync is an A100's fastest"))
    assert not measuring.ensure(_Card("NVIDIA A100-SXM4-80GB", (8, 0)), tmp_path).measured
    assert table.tensor_names(_Card("NVIDIA A100-SXM4-80GB", (8, 0))) == table.bf16_names()


@pytest.mark.parametrize("tf32", [False, True])
def test_the_wgmma_kernel_compiles_for_sm90a_with_its_accumulators_in_registers(tf32):
    compiled = compile_kernel(measuring.KERNEL_DIR / "wgmma_peak.cu", "wgmma_peak", {"WGMMA_TF32": 1} if tf32 else {},
                              "sm_90a")
    res = compiled.resources
    assert res.spill_stores_bytes == 0 and res.stack_frame_bytes == 0
    assert 128 < res.registers <= 168  # 128 accumulators; 3 blocks of 128 threads fit an SM's 65,536
    assert measuring.WGMMA_BLOCKS_PER_SM * measuring.WGMMA_THREADS * ((res.registers + 7) // 8 * 8) <= 65536
    assert "C7508" not in compiled.log and "serialized" not in compiled.log  # wgmma kept asynchronous
    if tf32:  # the define reaches the instruction: another cubin than BF16's
        bf16 = compile_kernel(measuring.KERNEL_DIR / "wgmma_peak.cu", "wgmma_peak", {}, "sm_90a")
        assert compiled.cubin_path.read_bytes() != bf16.cubin_path.read_bytes()


def test_the_tf32_operand_is_a_power_of_two_exact_in_tf32():
    from gpulab.experiments.sgemm.tf32x3.tf32_split import tf32_rna

    x = np.array([measuring.TF32_OPERAND], dtype=np.uint32).view(np.float32)
    assert x[0] == 2.0**-10 and tf32_rna(x)[0] == x[0]
    # 8 products of 2^-20 per wgmma, 4 wgmma a step: the sums the host checks stay exact below 2^24.
    assert 4 * measuring.WGMMA_ITERS * 8 < 1 << 24


def test_a_card_without_bf16_tensor_cores_keeps_the_older_file(tmp_path, monkeypatch):
    table.save(table.ceilings_path(tmp_path), _rows("NVIDIA T4", bf16=False))
    monkeypatch.setattr(measuring, "measure_tensor", lambda *a, **k: pytest.fail("a T4 has no BF16 mma.sync"))
    assert not measuring.ensure(_Card("NVIDIA T4", (7, 5)), tmp_path).measured


def test_gemm_bf16_records_are_shown_against_the_tensor_ceiling_never_the_fma_rate():
    gemm = get_experiment("gemm_bf16")
    rows = [{"variant": "t1", "gflops": 300_000.0, "time_ms": 0.5}]
    table.attach(rows, gemm, table.Ceilings(_rows()))
    assert rows[0]["ceiling"] == "tensor_bf16" and rows[0]["pct_of_ceiling"] == pytest.approx(50.0)
    older = [{"variant": "t1", "gflops": 300_000.0, "time_ms": 0.5}]
    table.attach(older, gemm, table.Ceilings(_rows(bf16=False)))
    assert "pct_of_ceiling" not in older[0] and "ceiling" not in older[0]


def test_sgemm_v14_is_held_to_a_third_of_the_tf32_rate_and_the_ffma_rungs_to_the_fma_rate():
    sgemm = get_experiment("sgemm")
    rows = [{"variant": "v14", "gflops": 50_000.0, "time_ms": 1.0},
            {"variant": "v13", "gflops": 40_000.0, "time_ms": 1.0},
            {"variant": "cublas", "gflops": 25_000.0, "time_ms": 1.0},
            {"variant": "best", "picked": "v14 (tuned at 4096x4096x4096)", "gflops": 50_000.0, "time_ms": 1.0}]
    table.attach(rows, sgemm, table.Ceilings(_rows()))  # tensor_tf32 300,000: 100,000 in FP32 FLOPs
    assert [r["ceiling"] for r in rows] == ["tensor_tf32/3", "fma_fp32", "fma_fp32", "tensor_tf32/3"]
    assert [r["pct_of_ceiling"] for r in rows] == pytest.approx([50.0, 80.0, 50.0, 50.0])
    assert rows[0]["ceiling_gflops"] == pytest.approx(100_000.0)
    older = [{"variant": "v14", "gflops": 50_000.0, "time_ms": 1.0}]  # a file without the TF32 row
    table.attach(older, sgemm, table.Ceilings(_rows(tf32=False)))
    assert "pct_of_ceiling" not in older[0], "never the FMA rate in the TF32 rate's place"


@pytest.mark.parametrize("name, rate", [("NVIDIA H200", 989_400.0), ("NVIDIA H100 80GB HBM3", 989_400.0),
                                        ("NVIDIA H100 PCIe", 756_000.0), ("NVIDIA A100-SXM4-80GB", 312_000.0),
                                        ("NVIDIA GeForce RTX 4090", None)])
def test_datasheet_rates(name, rate):
    assert table.datasheet_bf16_gflops(name) == rate


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_mma_kernel_compiles_without_spills(arch):
    res = compile_kernel(measuring.KERNEL_DIR / "mma_bf16.cu", "mma_bf16_peak", {"CHAINS": measuring.MMA_CHAINS}, arch).resources
    assert res.spill_stores_bytes == 0 and res.stack_frame_bytes == 0
    # Every accumulator lives in registers: CHAINS x 4 floats, plus the operands.
    assert 4 * measuring.MMA_CHAINS < res.registers <= 255


def test_the_mma_operand_is_two_bf16_powers_of_two():
    halves = np.array([measuring.MMA_OPERAND & 0xFFFF, measuring.MMA_OPERAND >> 16], dtype=np.uint16)
    assert list(from_bf16_bits(halves)) == [2.0**-10, 2.0**-10]
    # 16 products of 2^-20 per step: the sums the host checks stay exact below 2^24 steps.
    assert measuring.MMA_ITERS < 1 << 24


def test_the_roofline_draws_the_bf16_roof_where_measured():
    from gpulab.report.roofline import roofs

    with_bf16 = [r.name for r in roofs(table.Ceilings(_rows()))]
    assert any(label.startswith("BF16 tensor (wgmma) 600 TFLOP/s") for label in with_bf16)
    older = [r.name for r in roofs(table.Ceilings(_rows(instruction=None)))]  # before the instruction column
    assert any(label.startswith("BF16 tensor (mma.sync) 600 TFLOP/s") for label in older)
    assert not any("BF16" in r.name for r in roofs(table.Ceilings(_rows(bf16=False))))


def test_the_roofline_floor_of_a_prediction_uses_the_experiments_compute_ceiling(tmp_path):
    table.save(table.ceilings_path(tmp_path / "h200"), _rows())
    rate, copy, source = table.ceilings_for_roofline("h200", tmp_path, compute="tensor_bf16")
    assert rate == 600_000.0 and copy == 4000.0 and "measured on NVIDIA H200" in source
    assert table.ceilings_for_roofline("h200", tmp_path)[0] == 50_000.0  # the FMA rate by default
    table.save(table.ceilings_path(tmp_path / "h200"), _rows(bf16=False))  # a file from before the BF16 rows
    rate, copy, source = table.ceilings_for_roofline("h200", tmp_path, compute="tensor_bf16")
    assert rate == table.H200_REFERENCE_CEILINGS["tensor_bf16"] and copy == 4000.0 and "REFERENCE" in source


def test_the_roofline_floor_of_3xtf32_is_a_third_of_the_tf32_rate(tmp_path):
    table.save(table.ceilings_path(tmp_path / "h200"), _rows())
    rate, _, source = table.ceilings_for_roofline("h200", tmp_path, compute="tensor_tf32", ops=3)
    assert rate == pytest.approx(100_000.0) and "tensor_tf32 / 3" in source
    table.save(table.ceilings_path(tmp_path / "h200"), _rows(tf32=False))
    rate, _, source = table.ceilings_for_roofline("h200", tmp_path, compute="tensor_tf32", ops=3)
    assert rate == pytest.approx(table.H200_REFERENCE_CEILINGS["tensor_tf32"] / 3) and "REFERENCE" in source


def test_a_table_of_rows_held_to_different_ceilings_says_which_is_which():
    from rich.console import Console

    from gpulab.report.html import records_table
    from gpulab.report.tables import bench_table

    sgemm = get_experiment("sgemm")
    rows = [{"experiment": "sgemm", "variant": v, "params": "", "shape": "4096x4096x4096", "correct": True,
             "gflops": rate, "time_ms": 1.0} for v, rate in (("v13", 50_000.0), ("v14", 110_000.0), ("cublas", 51_000.0))]
    table.attach(rows, sgemm, table.Ceilings(_rows()))
    console = Console(record=True, width=300)
    console.print(bench_table(rows, "t"))
    lines = {line.split()[1]: line for line in console.export_text().splitlines() if line.split()[1:2] in (["v13"], ["v14"])}
    assert "110.0 of tensor_tf32/3" in lines["v14"] and " of " not in lines["v13"]
    assert "110.0 of tensor_tf32/3</td>" in records_table(rows)
    same = [r for r in rows if r["variant"] != "v14"]  # one ceiling: no names added
    assert " of " not in records_table(same)


def test_with_no_gpu_and_several_cards_the_roofline_says_which_to_name(tmp_path, monkeypatch):
    import gpulab.records

    monkeypatch.setattr(gpulab.records, "probe", lambda: (None, "no GPU"))  # where the card is asked for
    table.save(table.ceilings_path(tmp_path / "h200"), _rows())
    assert "measured on" in table.ceilings_for_roofline(None, tmp_path)[2]  # one card: its own ceilings
    table.save(table.ceilings_path(tmp_path / "h100-80gb-hbm3"), _rows())
    rate, copy, source = table.ceilings_for_roofline(None, tmp_path)
    assert (rate, copy) == (table.H200_REFERENCE_CEILINGS["fma_gflops"], table.H200_REFERENCE_CEILINGS["copy_gb_per_s"])
    assert "REFERENCE" in source and "h100-80gb-hbm3, h200 with --gpu" in source


def test_a_card_named_without_complete_ceilings_is_an_error_not_a_fallback(tmp_path):
    (tmp_path / "mycard").mkdir()
    with pytest.raises(GpulabError, match=r"no complete ceilings in .*mycard/ceilings.csv; measure them"):
        table.ceilings_for_roofline("mycard", tmp_path)
    with pytest.raises(GpulabError, match=r"no results for card 'other' under .*; there are: mycard"):
        table.ceilings_for_roofline("other", tmp_path)
