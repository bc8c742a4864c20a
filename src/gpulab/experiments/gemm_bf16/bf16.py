"""BF16 on the host: numbers held as their 16 bits in uint16 arrays, and the check's tolerance.

NumPy and CuPy have no bfloat16 dtype, so a BF16 matrix is a uint16 array of the top 16 bits of
the float32 it rounds from (bfloat16 is float32 with the low 16 mantissa bits dropped: 1 sign,
8 exponent, 7 mantissa bits). The functions take the array module `xp` (numpy or cupy) so inputs
can be converted on either side; they use nothing but integer ops both have.
"""

from __future__ import annotations

import numpy as np

# The unit roundoff of FP32 (24-bit significand): one rounding changes a value by at most this
# relative amount.
FP32_UNIT_ROUNDOFF = 2.0**-24
# The floor of the tolerance: what sgemm allows (gpulab.check.FP32_TOLERANCE), for small K.
TOLERANCE_FLOOR = 2e-5


def to_bf16_bits(x, xp=np):
    """float32 array -> uint16 BF16 bits, rounded to nearest, ties to even (what the hardware's
    cvt.rn.bf16.f32 and PyTorch's .to(bfloat16) do). NaN stays a (quiet) NaN; values past the BF16
    range round to +-inf, as the hardware does."""
    bits = xp.ascontiguousarray(x, dtype=xp.float32).view(xp.uint32)
    # Add 0x7FFF plus the lowest kept bit, then drop the low half: ties (low half exactly 0x8000)
    # round up only when the kept part is odd, i.e. to even.
    lsb = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + lsb) >> 16).astype(xp.uint16)
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    return xp.where(nan, xp.uint16(0x7FC0), rounded)


def from_bf16_bits(bits, xp=np):
    """uint16 BF16 bits -> float32 (exact: every BF16 value is a float32)."""
    return (xp.asarray(bits).astype(xp.uint32) << 16).view(xp.float32)


def tolerance(k: int) -> float:
    """The max-norm relative error (|out - ref| / max|ref|, gpulab.check.compare_float) allowed
    for a BF16 x BF16 -> FP32 GEMM of depth K against the float64 product of the same BF16 values.

    Why this bound: each product of two BF16 values (8-bit significands) has at most 16 significant
    bits, so it is exact in FP32; the inputs were rounded before the reference saw them, so the only
    error left is the FP32 accumulation. A sum of K terms makes K additions, each of which changes
    the running partial sum by at most one FP32 ulp: half an ulp (u = 2^-24 relative) when it rounds
    to nearest, up to a whole one (2u) when it truncates, as the tensor cores' internal adders are
    measured to do (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores",
    PeerJ Computer Science 2021). With random signs the partial sums of an element stay within a few
    standard deviations of the final values, so below max|ref|; the error is then at most
    K * 2u * max|ref| (the classical K*u bound, Higham, "Accuracy and Stability of Numerical
    Algorithms", ch. 3, with truncation's factor 2), and a factor 2 of margin gives 4*K*u.
    Truncation errors all lean one way, so they add up linearly rather than as a random walk: the
    bound is not loose by sqrt(K). At K = 4096 it is 9.8e-4, while dropping a single 16-deep slice of
    K moves elements by ~1e-2 of max|ref| and summing in BF16 by ~4e-3 per addition: both fail.
    Below K = 84 the floor of sgemm's FP32 tolerance applies."""
    return max(TOLERANCE_FLOOR, 4.0 * k * FP32_UNIT_ROUNDOFF)
