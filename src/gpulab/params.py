"""A run's params as one text label, the `params` column of every record ('BM=128 BN=64'), and
back: the writer and the parser side by side, so the two cannot drift apart."""

from __future__ import annotations

from typing import Mapping


def params_label(params: Mapping[str, int]) -> str:
    """{'BM': 128, 'BN': 64} -> 'BM=128 BN=64' (in the params' own order); {} -> ''."""
    return " ".join(f"{k}={v}" for k, v in params.items())


def parse_params_label(label: str | None) -> dict[str, int]:
    """'BM=128 BN=64' -> {'BM': 128, 'BN': 64}; '' or None -> {}."""
    out = {}
    for item in str(label or "").split():
        k, _, v = item.partition("=")
        out[k] = int(v)
    return out
