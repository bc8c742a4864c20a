"""Is the output right? Comparisons against a float64 reference, written once for every experiment.

Outputs are poisoned (NaN for floats) before each launch, so an element the kernel never wrote
stays NaN and fails like any other wrong element: NaN never passes. Floats are compared by the
max-norm relative error |out - ref| / max|ref|; `exact` mode (small-integer inputs, every product
and sum exactly representable) demands equality, so any mismatch is an indexing bug and the first
one is reported by its coordinates.
"""

from __future__ import annotations

import dataclasses
from typing import Any

# fp32 accumulation over K <= ~10^4 terms lands near 1e-6 in this norm; TF32 inputs land near 3e-4.
# 2e-5 separates the two with a wide margin on both sides.
FP32_TOLERANCE = 2e-5


@dataclasses.dataclass(frozen=True)
class CheckResult:
    ok: bool
    max_rel_err: float
    wrong_count: int
    first_wrong: tuple[int, ...] | None = None
    detail: str = ""

    def as_record(self) -> dict[str, Any]:
        return {
            "correct": self.ok,
            "max_rel_err": self.max_rel_err,
            "wrong_count": self.wrong_count,
            "first_wrong": "" if self.first_wrong is None else ",".join(map(str, self.first_wrong)),
        }

    def describe(self, dim_names: tuple[str, ...] = ("row", "col")) -> str:
        if self.ok:
            return "correct"
        where = ""
        if self.first_wrong is not None:
            names = dim_names if len(dim_names) == len(self.first_wrong) else ("index",) * len(self.first_wrong)
            where = " first at " + ", ".join(f"{n} {i}" for n, i in zip(names, self.first_wrong))
        extra = f" ({self.detail})" if self.detail else ""
        return f"{self.wrong_count} wrong elements{where}, max rel err {self.max_rel_err:.3g}{extra}"


def _first_index(mask, xp) -> tuple[int, ...] | None:
    flat = int(xp.argmax(mask.ravel()))
    if not bool(mask.ravel()[flat]):
        return None
    return tuple(int(i) for i in _unravel(flat, mask.shape))


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for dim in reversed(shape):
        out.append(flat % dim)
        flat //= dim
    return tuple(reversed(out))


def compare_float(out, ref, xp, tolerance: float = FP32_TOLERANCE) -> CheckResult:
    """Max-norm relative error of `out` (any float dtype) against a float64 `ref` of the same shape."""
    if out.shape != ref.shape:
        raise ValueError(f"output shape {out.shape} differs from reference {ref.shape}")
    diff = xp.abs(out.astype(xp.float64) - ref)
    scale = float(xp.max(xp.abs(ref))) if ref.size else 0.0
    scale = scale if scale > 0 else 1.0
    # NaN compares False with everything, so `~(diff <= bound)` counts NaN (unwritten) as wrong.
    bad = ~(diff <= tolerance * scale)
    wrong = int(xp.count_nonzero(bad))
    nan_count = int(xp.count_nonzero(xp.isnan(out)))
    finite = diff[~xp.isnan(diff)]
    max_err = float(xp.max(finite)) / scale if finite.size else float("nan")
    if nan_count:
        max_err = float("nan")
    detail = f"{nan_count} NaN or never written" if nan_count else ""
    return CheckResult(wrong == 0, max_err, wrong, _first_index(bad, xp) if wrong else None, detail)


def compare_exact(out, ref, xp) -> CheckResult:
    """Element-for-element equality (ints, or floats from exact small-integer inputs)."""
    if out.shape != ref.shape:
        raise ValueError(f"output shape {out.shape} differs from reference {ref.shape}")
    if out.dtype.kind == "f":
        bad = ~(out.astype(xp.float64) == ref.astype(xp.float64))  # NaN != anything
        nan_count = int(xp.count_nonzero(xp.isnan(out)))
    else:
        bad = out != ref
        nan_count = 0
    wrong = int(xp.count_nonzero(bad))
    if wrong:
        d = xp.abs(out.astype(xp.float64) - ref.astype(xp.float64))
        scale = float(xp.max(xp.abs(ref.astype(xp.float64)))) or 1.0
        max_err = float("nan") if nan_count else float(xp.max(d)) / scale
    else:
        max_err = 0.0
    detail = f"{nan_count} NaN or never written" if nan_count else ""
    return CheckResult(wrong == 0, max_err, wrong, _first_index(bad, xp) if wrong else None, detail)
