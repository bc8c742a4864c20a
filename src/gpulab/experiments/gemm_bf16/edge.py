"""t4's edge (its EDGE param): which rows and columns of C its tiles cover, and which the producer
warpgroup's idle warps compute instead, on CUDA cores (t4_persistent_cluster.cu, edge_dots).

Where M is one or two rows past whole cluster tiles (CLUSTER x 128 rows), or N one or two columns past
whole BN tiles, a ragged tile row or column would hold those few rows at the cost of a whole round of
tiles (4097^3: 17 x 17 cluster tiles where 4096^3 has 16 x 16). With EDGE the tiles cover the whole
part alone and the edge goes to the producer's warps, which only wait on the TMA thread otherwise.
The launch (tma_rungs: the tile count, the kernel's m_main and n_main) and the access model read it
here."""

from __future__ import annotations

from gpulab.experiments.base import Params, Shape


def whole_part(extent: int, tile: int, edge: int) -> int:
    """What t4's tiles cover of one extent: all of it, or its whole tiles where at most `edge` rows
    (columns) are left past them and there is at least one whole tile."""
    rest = extent % tile
    return extent - rest if 0 < rest <= edge and extent > tile else extent


def t4_main_dims(p: Params, s: Shape) -> tuple[int, int]:
    """(m_main, n_main): the rows and columns of C t4's tiles cover. With EDGE (up to EDGE rows or
    columns past whole cluster tiles), only the whole tiles; else all of M and N, ragged tiles masked."""
    edge = p.get("EDGE", 0)
    return whole_part(s["M"], p["BM"] * p["CLUSTER"], edge), whole_part(s["N"], p["BN"], edge)


def t4_canonical(p: Params, s: Shape) -> Params:
    """EDGE = 0 where EDGE takes no rows or columns at `s` (its tiles cover all of C either way; only
    its register split differs): in the H200's tune of t4, 108 pairs of configs alike but for EDGE at
    shapes with no such edge ran EDGE = 2 at 1.001x EDGE = 0's time (geometric mean, 0.96-1.06x),
    and the 15 pairs with one at 0.92x (2026-12-04 to 12-06, results/h200/tune-gemm_bf16-t4.csv)."""
    if p.get("EDGE", 0) and t4_main_dims(p, s) == (s["M"], s["N"]):
        return p | {"EDGE": 0}
    return p
