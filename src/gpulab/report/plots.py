"""Plots (PNG, matplotlib with no display) drawn from the CSV rows, never from printed text.

Compute-bound experiments: GFLOP/s against N for the square shapes, one line per variant config,
the vendor library dashed, the card's FMA ceiling as a horizontal line when it is known.
Memory-bound experiments: GB/s per shape as grouped bars, the copy ceiling as a horizontal line.
"""

from __future__ import annotations

from pathlib import Path


def _label(r: dict) -> str:
    return f"{r['variant']} {r['params']}" if r.get("params") else str(r["variant"])


def _ok(r: dict) -> bool:
    return bool(r.get("time_ms")) and (r.get("correct") is True or r.get("expected_wrong") is True)


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_compute(records: list[dict], title: str, path: Path, ceiling_gflops: float | None = None,
                 libraries: tuple[str, ...] = ("cublas",)) -> Path:
    """GFLOP/s against N over the square shapes (M = N = K)."""
    plt = _figure()
    square = [r for r in records if _ok(r) and r.get("m") == r.get("n") == r.get("k")]
    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=120)
    for label in dict.fromkeys(_label(r) for r in square):
        rows = sorted((r for r in square if _label(r) == label), key=lambda r: r["m"])
        lib = rows[0]["variant"] in libraries
        ax.plot([r["m"] for r in rows], [r["gflops"] for r in rows], marker="o", label=label,
                linestyle="--" if lib else "-", color="black" if lib else None, linewidth=2 if lib else 1.4)
    if ceiling_gflops:
        ax.axhline(ceiling_gflops, color="red", linestyle=":", label=f"FMA ceiling {ceiling_gflops:,.0f}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N (M = N = K)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    return _save(fig, plt, path)


def plot_memory(records: list[dict], title: str, path: Path, ceiling_gbps: float | None = None) -> Path:
    """GB/s per shape, one bar per variant config."""
    import numpy as np

    plt = _figure()
    rows = [r for r in records if _ok(r)]
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    labels = list(dict.fromkeys(_label(r) for r in rows))
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(shapes) * max(1, len(labels)) / 3), 5.5), dpi=120)
    width = 0.8 / max(1, len(labels))
    x = np.arange(len(shapes))
    for i, label in enumerate(labels):
        values = [next((r["gbps"] for r in rows if r["shape"] == s and _label(r) == label), 0) for s in shapes]
        ax.bar(x + i * width - 0.4 + width / 2, values, width, label=label)
    if ceiling_gbps:
        ax.axhline(ceiling_gbps, color="red", linestyle=":", label=f"copy ceiling {ceiling_gbps:,.0f}")
    ax.set_xticks(x, shapes, rotation=20, fontsize=8)
    ax.set_ylabel("GB/s")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return _save(fig, plt, path)


def _save(fig, plt, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.tight_layout()
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(path)
    return path
