"""The checker itself, on synthetic arrays: NaN never passes, unwritten elements are caught, the
first mismatch is reported by its coordinates, and fp32 rounding passes while TF32-sized errors fail."""

import numpy as np

from gpulab.check import FP32_TOLERANCE, compare_exact, compare_float


def test_identical_passes():
    ref = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert compare_float(ref.astype(np.float32), ref, np).ok


def test_fp32_rounding_passes_and_tf32_sized_error_fails():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 256))
    b = rng.uniform(-1, 1, (256, 64))
    ref = a @ b
    fp32 = (a.astype(np.float32) @ b.astype(np.float32))
    assert compare_float(fp32, ref, np).ok
    # TF32 keeps 10 mantissa bits: emulate by rounding the inputs.
    def tf32(x):
        bits = x.astype(np.float32).view(np.uint32)
        return ((bits + 0x1000) & 0xFFFFE000).view(np.float32)
    tf = tf32(a) @ tf32(b)
    result = compare_float(tf.astype(np.float32), ref, np)
    assert not result.ok and result.max_rel_err > FP32_TOLERANCE


def test_nan_never_passes_and_is_reported_as_unwritten():
    ref = np.ones((4, 5))
    out = np.ones((4, 5), dtype=np.float32)
    out[2, 3] = np.nan
    r = compare_float(out, ref, np)
    assert not r.ok and r.wrong_count == 1 and r.first_wrong == (2, 3)
    assert "never written" in r.detail
    assert r.as_record()["first_wrong"] == "2,3"


def test_all_unwritten_fails():
    out = np.full((3, 3), np.nan, dtype=np.float32)
    r = compare_float(out, np.zeros((3, 3)), np)
    assert not r.ok and r.wrong_count == 9


def test_exact_reports_first_mismatch_row_and_col():
    ref = np.arange(20, dtype=np.float64).reshape(4, 5)
    out = ref.astype(np.float32)
    out[1, 4] += 1
    out[3, 0] -= 2
    r = compare_exact(out, ref, np)
    assert not r.ok and r.wrong_count == 2 and r.first_wrong == (1, 4)
    assert "row 1, col 4" in r.describe()


def test_exact_integers():
    ref = np.array([[1, 2], [3, 4]], dtype=np.uint8)
    assert compare_exact(ref.copy(), ref, np).ok
    bad = ref.copy()
    bad[0, 1] = 9
    assert compare_exact(bad, ref, np).first_wrong == (0, 1)
