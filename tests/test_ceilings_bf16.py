"""The BF16 tensor-core ceilings with no GPU: which rows a file needs, how an older file gets them,
which ceiling gemm_bf16 records are shown against, and the mma.sync kernel's compile."""

from __future__ import annotations

import numpy as np
import pytest

import gpulab.ceilings as ceil
from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16.bf16 import from_bf16_bits
from gpulab.gpu.compile import compile_kernel


class _Card:
    def __init__(self, name="NVIDIA H200", cc=(9, 0)):
        self.name, self.compute_capability = name, cc


def _rows(gpu="NVIDIA H200", bf16=True):
    env = {"gpu": gpu, "date": "2026-12-01T05:00:00+00:00"}
    rows = [{"ceiling": n, "gflops": 50_000.0, "gbps": 4000.0, "time_ms": 1.0, **env} for n in ceil.names()]
    if bf16:
        rows += [{"ceiling": "tensor_bf16", "gflops": 600_000.0, "datasheet_gflops": 989_400.0, "time_ms": 30.0, **env},
                 {"ceiling": "cublas_bf16_4096", "gflops": 670_000.0, "time_ms": 0.2, **env},
                 {"ceiling": "cublas_bf16_8192", "gflops": 720_000.0, "time_ms": 1.5, **env}]
    return rows


def test_a_file_without_bf16_rows_is_still_complete():
    assert not set(ceil.bf16_names()) & set(ceil.names())


def test_ensure_adds_only_the_bf16_rows_to_an_older_file(tmp_path, monkeypatch):
    ceil.save(ceil.ceilings_path(tmp_path), _rows(bf16=False))
    calls = []
    monkeypatch.setattr(ceil, "measure", lambda *a, **k: pytest.fail("measured everything again"))
    monkeypatch.setattr(ceil, "measure_bf16", lambda device, **k: calls.append(device.name) or _rows()[-3:])
    got = ceil.ensure(_Card(), tmp_path)
    assert got.measured and calls == ["NVIDIA H200"]
    assert [r["ceiling"] for r in got.rows] == list(ceil.names()) + list(ceil.bf16_names())
    again = ceil.ensure(_Card(), tmp_path)  # now complete: read back, nothing measured
    assert not again.measured and calls == ["NVIDIA H200"]
    assert again.row("tensor_bf16")["gflops"] == pytest.approx(600_000.0)


def test_a_card_without_bf16_tensor_cores_keeps_the_older_file(tmp_path, monkeypatch):
    ceil.save(ceil.ceilings_path(tmp_path), _rows("NVIDIA T4", bf16=False))
    monkeypatch.setattr(ceil, "measure_bf16", lambda *a, **k: pytest.fail("a T4 has no BF16 mma.sync"))
    assert not ceil.ensure(_Card("NVIDIA T4", (7, 5)), tmp_path).measured


def test_gemm_bf16_records_are_shown_against_the_tensor_ceiling_never_the_fma_rate():
    gemm = get_experiment("gemm_bf16")
    rows = [{"variant": "t1", "gflops": 300_000.0, "time_ms": 0.5}]
    ceil.attach(rows, gemm, ceil.Ceilings(_rows()))
    assert rows[0]["ceiling"] == "tensor_bf16" and rows[0]["pct_of_ceiling"] == pytest.approx(50.0)
    older = [{"variant": "t1", "gflops": 300_000.0, "time_ms": 0.5}]
    ceil.attach(older, gemm, ceil.Ceilings(_rows(bf16=False)))
    assert "pct_of_ceiling" not in older[0] and "ceiling" not in older[0]


@pytest.mark.parametrize("name, rate", [("NVIDIA H200", 989_400.0), ("NVIDIA H100 80GB HBM3", 989_400.0),
                                        ("NVIDIA H100 PCIe", 756_000.0), ("NVIDIA A100-SXM4-80GB", 312_000.0),
                                        ("NVIDIA GeForce RTX 4090", None)])
def test_datasheet_rates(name, rate):
    assert ceil.datasheet_bf16_gflops(name) == rate


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_the_mma_kernel_compiles_without_spills(arch):
    res = compile_kernel(ceil.KERNEL_DIR / "mma_bf16.cu", "mma_bf16_peak", {"CHAINS": ceil.MMA_CHAINS}, arch).resources
    assert res.spill_stores_bytes == 0 and res.stack_frame_bytes == 0
    # Every accumulator lives in registers: CHAINS x 4 floats, plus the operands.
    assert 4 * ceil.MMA_CHAINS < res.registers <= 255


def test_the_mma_operand_is_two_bf16_powers_of_two():
    halves = np.array([ceil.MMA_OPERAND & 0xFFFF, ceil.MMA_OPERAND >> 16], dtype=np.uint16)
    assert list(from_bf16_bits(halves)) == [2.0**-10, 2.0**-10]
    # 16 products of 2^-20 per step: the sums the host checks stay exact below 2^24 steps.
    assert ceil.MMA_ITERS < 1 << 24


def test_the_roofline_draws_the_bf16_roof_where_measured():
    from gpulab.report.roofline import roofs

    with_bf16 = [r.name for r in roofs(ceil.Ceilings(_rows()))]
    assert any(label.startswith("BF16 tensor (mma.sync) 600 TFLOP/s") for label in with_bf16)
    assert not any("BF16" in r.name for r in roofs(ceil.Ceilings(_rows(bf16=False))))


def test_the_roofline_floor_of_a_prediction_uses_the_experiments_compute_ceiling(tmp_path):
    ceil.save(ceil.ceilings_path(tmp_path / "h200"), _rows())
    rate, copy, source = ceil.ceilings_for_roofline("h200", tmp_path, compute="tensor_bf16")
    assert rate == 600_000.0 and copy == 4000.0 and "measured on NVIDIA H200" in source
    assert ceil.ceilings_for_roofline("h200", tmp_path)[0] == 50_000.0  # the FMA rate by default
    ceil.save(ceil.ceilings_path(tmp_path / "h200"), _rows(bf16=False))  # a file from before the BF16 rows
    rate, copy, source = ceil.ceilings_for_roofline("h200", tmp_path, compute="tensor_bf16")
    assert rate == ceil.H200_REFERENCE_CEILINGS["tensor_bf16"] and copy == 4000.0 and "REFERENCE" in source
