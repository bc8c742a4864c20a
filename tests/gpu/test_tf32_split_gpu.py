"""sgemm v14's split (tf32_split.cu) on the card, bit for bit against its numpy model: A3 = [lo | hi |
hi] and Bt3 = [hi | lo | hi] (B transposed), rounded as cvt.rna.tf32 rounds, the pad zero. Where it
goes wrong, the first bad row and column say how (v14's results: tests/gpu/test_sgemm_gpu.py)."""

import numpy as np
import pytest

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.tf32x3 import tf32_split
from gpulab.experiments.sgemm.tf32x3.tf32_split import split_parts as split
from gpulab.gpu.launch import synchronize
from gpulab.gpu.seam import cupy


# K % 4 of each kind (the pad), B tiles cut at both edges, one row or column, a tall and a wide one.
@pytest.mark.parametrize("m, n, k", [(300, 131, 777), (1, 1, 1), (33, 65, 4), (7, 40, 130), (129, 3, 1029),
                                     (2, 300, 31)], ids=str)
def test_split_writes_every_part_in_place_and_zeroes_the_pad(lab, m, n, k):
    cp = cupy()
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, size=(m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(k, n)).astype(np.float32)
    staged = tf32_split.split_tf32({"A": cp.asarray(a), "B": cp.asarray(b)}, SGEMM.shape(m, n, k), {}, lab.arch,
                                   dependent_launch=False)
    for name in ("A", "B"):
        staged.inputs[name].fill(0xFFFF)  # poison (NaN as FP32): the split must write the pad as well
    staged.copy()
    synchronize("split_tf32")
    kp = tf32_split.padded_k(k)
    (ah, al), (bh, bl) = split(a), split(np.ascontiguousarray(b.T))
    for name, parts, rows in (("A", (al, ah, ah), m), ("B", (bh, bl, bh), n)):
        got = staged.inputs[name].get().view(np.float32)
        want = np.zeros((rows, 3 * kp), dtype=np.float32)
        for i, part in enumerate(parts):
            want[:, i * kp:i * kp + k] = part
        bad = np.argwhere(got.view(np.uint32) != want.view(np.uint32))
        assert got.shape == want.shape and bad.size == 0, f"{name}3: first wrong [row, col] {bad[:1].tolist()}"
    assert staged.moved_bytes == tf32_split.split_bytes(SGEMM.shape(m, n, k))


def test_split_of_the_values_at_fp32s_edges_follows_the_model(lab):
    """What v14 makes of inputs FP32 GEMM takes but 3xTF32 does not (docs/results/sgemm.md, v14):
    infinities (hi = inf, lo = inf - inf = NaN), finite values within 2^-11 of FLT_MAX (hi rounds up
    to inf), subnormals, signed zeros, rounding ties; bit for bit where the model is a number, NaN
    where it is NaN (the card may return another NaN's bits)."""
    cp = cupy()
    big = np.float32(np.finfo(np.float32).max)
    edge = np.array([np.inf, -np.inf, big, -big, np.float32(3.4e38), np.float32(2.0**127 * (2 - 2.0**-10)),
                     np.finfo(np.float32).tiny, np.float32(1e-40), np.float32(1.4e-45), -0.0, 0.0,
                     np.float32(1 + 2.0**-11), np.float32(-(1 + 3 * 2.0**-11)), np.nan, 1.0, -1.0],
                    dtype=np.float32)
    m, n, k = 2, 3, edge.size
    a = np.stack([edge, edge[::-1]]).astype(np.float32)
    b = np.stack([edge] * n, axis=1).astype(np.float32)  # k x n: every column the edge values
    staged = tf32_split.split_tf32({"A": cp.asarray(a), "B": cp.asarray(b)}, SGEMM.shape(m, n, k), {}, lab.arch,
                                   dependent_launch=False)
    staged.copy()
    synchronize("split_tf32")
    kp = tf32_split.padded_k(k)
    hi, lo = split(a)
    got = staged.inputs["A"].get().view(np.float32)
    for i, part in enumerate((lo, hi, hi)):
        seen, want = got[:, i * kp:i * kp + k], part
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(seen), nan), f"part {i}: NaN where the model has none, or none where it has"
        assert np.array_equal(seen[~nan].view(np.uint32), want[~nan].view(np.uint32)), f"part {i}: bits differ"
