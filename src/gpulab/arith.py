"""Integer arithmetic the launch geometry, the access models and the ceilings share."""

import numbers


def cdiv(a: int, b: int) -> int:
    """Ceiling division for positive b: how many tiles of b cover a (cdiv(10, 4) == 3)."""
    return -(-a // b)


def whole(value) -> int | None:
    """`value` as a Python int where it is a whole number of any integer type (numpy's int64 from an
    array, say), else None; True and False are not numbers here."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)
