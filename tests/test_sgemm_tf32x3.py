"""sgemm's v14 (3xTF32 on gemm_bf16's t4) without a GPU: the split's arithmetic in numpy, its
layout's sizes and grid, the k extent the .cu gives t4's ring, and the compiles (the GPU tests,
tests/gpu/test_sgemm_gpu.py and test_tf32_split_gpu.py, check the results on the card)."""

import re
from pathlib import Path

import numpy as np
import pytest

from gpulab.errors import NotModelled
from gpulab.experiments.base import Shape
from gpulab.experiments.gemm_bf16 import tma_rungs
from gpulab.experiments.gemm_bf16.tma_rungs import t4_launch
from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.tf32x3 import tf32_split
from gpulab.experiments.sgemm.tf32x3.tf32_split import split_parts as split, tf32_rna
from gpulab.gpu.compile import _headers, compile_kernel

V14 = SGEMM.variant("v14")


def shape(m, n, k):
    return Shape(("M", "N", "K"), (m, n, k))


def test_rna_rounds_to_ten_mantissa_bits_half_away_from_zero():
    one_ulp = np.float32(2.0**-10)
    x = np.array([1 + one_ulp / 2, -(1 + one_ulp / 2), 1 + one_ulp / 2 - 2.0**-23, 3.0], dtype=np.float32)
    assert tf32_rna(x).tolist() == [1 + one_ulp, -(1 + one_ulp), 1.0, 3.0]


def test_three_tf32_products_hold_fp32_accuracy_where_one_does_not():
    # The idea v14 rests on, in exact (float64) arithmetic: hi + lo holds x to ~2^-22, and dropping
    # lo*lo costs less than FP32 accumulation does; hi alone misses by ~2^-11.
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, size=(64, 512)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(512, 48)).astype(np.float32)
    (ah, al), (bh, bl) = split(a), split(b)
    assert np.max(np.abs((ah.astype(np.float64) + al) - a) / np.abs(a)) < 2.0**-21
    exact = a.astype(np.float64) @ b.astype(np.float64)
    f64 = np.float64
    three = al.astype(f64) @ bh.astype(f64) + ah.astype(f64) @ bl.astype(f64) + ah.astype(f64) @ bh.astype(f64)
    one = ah.astype(f64) @ bh.astype(f64)
    scale = np.max(np.abs(exact))
    assert np.max(np.abs(three - exact)) / scale < 1e-6  # the check's tolerance is 2e-5
    assert np.max(np.abs(one - exact)) / scale > 1e-4


def test_split_sizes_and_grid_cover_every_element():
    s = shape(1000, 3000, 777)
    assert tf32_split.padded_k(777) == 780 and tf32_split.padded_k(776) == 776 and tf32_split.padded_k(1) == 4
    assert tf32_split.split_bytes(s) == 4 * (4000 * 777 + 3 * 4000 * 780)
    blocks_a, blocks = tf32_split.split_grid(s)
    quads = 1000 * 780 // 4  # A: a thread per 4 k of a row
    assert (blocks_a - 1) * tf32_split.THREADS < quads <= blocks_a * tf32_split.THREADS
    assert blocks - blocks_a == -(-780 // 32) * -(-3000 // 32)  # B: 32 x 32 tiles over KP x N


def test_the_ring_walks_the_three_parts_in_16_bit_elements():
    # v14's .cu tells t4 the k extent of the staged operands, as t4's tensor maps count it: 3 parts
    # of KP FP32, two 16-bit elements each. It must agree with what tf32_split.py allocates.
    text = SGEMM.source(V14).read_text()
    expr = re.search(r"#define RING_K\(K\) (.+?)\s*//", text).group(1)
    for k in (1, 3, 4, 5, 777, 4096, 4097):
        ring_k = eval(expr.replace("/", "//"), {"K": k})  # C integer division on positive ints
        assert ring_k == 2 * tf32_split.PARTS * tf32_split.padded_k(k), k


def test_the_split_kernel_compiles_with_no_spills_and_lets_the_gemm_launch_behind_it():
    r = compile_kernel(tf32_split.SOURCE, tf32_split.ENTRY, {}, "sm_90").resources
    assert r.spill_stores_bytes == 0 and r.stack_frame_bytes == 0 and r.registers <= 40
    assert "griddepcontrol.launch_dependents" in tf32_split.SOURCE.read_text()


def test_v14_is_t4_compiled_for_tf32_under_sgemms_entry():
    text = SGEMM.source(V14).read_text()
    assert text.index("#define WGMMA_TF32") < text.index('#include "gemm_bf16/hopper.cuh"')
    assert "#define T4_ENTRY sgemm" in text
    assert V14.arch_label == "sm_90a" and V14.arch_reason("sm_80") and V14.arch_reason("sm_90") is None
    compiled = compile_kernel(SGEMM.source(V14), SGEMM.entry, V14.default_params(), V14.compile_arch("sm_90"))
    assert compiled.resources.spill_stores_bytes == 0 and compiled.resources.stack_frame_bytes == 0


@pytest.mark.parametrize("k", [1, 777, 4096])
def test_v14_counts_the_split_in_the_device_memory_it_needs(k):
    # The staged A3 and Bt3 are three times A and B (padded): a shape too big for them is refused
    # before anything is allocated, as for every other variant.
    s = SGEMM.shape(1000, 3000, k)
    assert SGEMM.device_bytes(s) >= 4 * (1000 * k + k * 3000 + 1000 * 3000) + 4 * 3 * 4000 * tf32_split.padded_k(k)


def test_the_t4_file_v14_includes_is_part_of_its_compile_cache_key():
    # An edit of t4 must recompile v14, though t4 is a .cu and not a shared header.
    assert "gemm_bf16/t4_persistent_cluster.cu" in _headers(SGEMM.source(V14))
    assert "gemm_bf16/t4_persistent_cluster.cu" not in _headers(SGEMM.source(SGEMM.variant("v13")))


def test_v14_model_is_t4s_over_the_staged_rows_with_the_problems_flops(tma_sms):
    # v14's t4 reads A3 and Bt3, whose rows its tensor maps count as 2 x 3 x KP 16-bit elements: the
    # model is t4's over that K; only the work is the problem's, 2 M N K.
    p = V14.default_params()
    for m, n, k in ((4096, 4096, 4096), (1000, 3000, 777), (17, 33, 65)):
        s = shape(m, n, k)
        got = V14.access(p, s)
        t4 = tma_rungs.t4_access(p, shape(m, n, 6 * tf32_split.padded_k(k)), t4_launch(p, s).grid[0])
        assert got.bulk == t4.bulk and got.grid == t4.grid == t4_launch(p, s).grid
        assert [i.name for i in got.instructions] == [i.name for i in t4.instructions]
        assert got.flops == 2.0 * m * n * k and got.dram_compulsory_bytes == t4.dram_compulsory_bytes
    # At 4096^3 a 128-byte k-tile holds 32 TF32 where it held 64 BF16, over three parts: six times the
    # TMA boxes, bytes and wgmma of the same tiles in BF16.
    bf16 = tma_rungs.t4_access(p, shape(4096, 4096, 4096), 132).bulk
    tf32 = V14.access(p, shape(4096, 4096, 4096)).bulk
    assert tf32["gmma_requests"] == 6 * bf16["gmma_requests"]
    assert tf32["tma_load_bytes"] == 6 * bf16["tma_load_bytes"]


def test_v14_declines_the_stream_k_schedule_as_t4_does():
    with pytest.raises(NotModelled, match="SCHEDULE=1 is not modelled"):
        V14.access(V14.default_params() | {"SCHEDULE": 1}, shape(4096, 4096, 4096))


def test_v14_model_gives_the_counts_nsight_compute_recorded_at_4096_cubed(tma_sms):
    """results/h200/profile.csv: v14 at 4096^3 beside v13 (gpulab compare, H200, 2026-12-02), before
    the model counted the box rows past N (the last column of 192-row tiles holds 64): every counted
    quantity, the TMA bytes included, as the current model predicts them."""
    from gpulab.model.predict import predict
    from gpulab.params import parse_params_label
    from gpulab.records import read_csv

    row = next(r for r in read_csv(Path(__file__).parents[1] / "results" / "h200" / "profile.csv")
               if r["variant"] == "v14" and r["shape"] == "4096x4096x4096")
    got = predict(V14.access(parse_params_label(row["params"]), shape(4096, 4096, 4096)))
    keys = ("tma_load_requests", "tma_load_bytes", "gmma_requests", "smem_load_requests", "smem_store_requests",
            "smem_store_wavefronts", "gmem_load_requests", "gmem_store_requests")
    assert {k: got[k] for k in keys} == {k: int(row[f"ncu_{k}"]) for k in keys}


def test_the_split_leaves_fp32s_edges_out_of_its_domain():
    # What docs/results/sgemm.md says v14 does not take: an infinity splits into inf and NaN, and a finite value
    # within 2^-11 of FLT_MAX rounds up to an infinite hi; below that, and at the smallest normal,
    # hi + lo is x again.
    hi, lo = split(np.array([np.inf, np.finfo(np.float32).max, 2.0**127 * (2 - 2.0**-10)], dtype=np.float32))
    assert np.isinf(hi[0]) and np.isnan(lo[0])
    assert np.isinf(hi[1])
    assert np.isfinite(hi[2]) and hi[2] + lo[2] == np.float32(2.0**127 * (2 - 2.0**-10))
    tiny = np.array([np.finfo(np.float32).tiny], dtype=np.float32)
    assert (split(tiny)[0] + split(tiny)[1])[0] == tiny[0]
