"""Integer arithmetic the launch geometry, the access models and the ceilings share."""


def cdiv(a: int, b: int) -> int:
    """Ceiling division for positive b: how many tiles of b cover a (cdiv(10, 4) == 3)."""
    return -(-a // b)
