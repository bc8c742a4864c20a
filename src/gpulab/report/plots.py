"""Plots (PNG, matplotlib with no display) drawn from the CSV rows, never from printed text.

Each picture is built by a `*_figure` function that returns the matplotlib Figure (what the tests
inspect: its series, labels, colours and markers) and written by `save` through the one atomic
writer of records.py.

A ladder (an experiment with a headline shape: sgemm) gets two pictures:
  ladder_bars_figure   one bar per rung at the headline shape, as % of the vendor library, each bar
                       labelled with its TFLOP/s; the vendor library at 100% and the compute ceiling marked;
  ladder_lines_figure  GFLOP/s against N, one colour AND one marker per rung, the legend outside the
                       axes; the square power-of-two shapes as lines, the ragged shapes (4000^3, 4097^3,
                       1000x3000x777) in a panel of their own, one column of markers each.
Where a rung ran with several params (v1 TILE=8/16/32, a tuned rung's per-shape best), its point is
its fastest correct config at that shape: the rung's best, as the ladder table of docs/results/ reads it.
Memory-bound experiments: GB/s per shape as grouped bars, the copy ceiling as a horizontal line.
A suite (gpulab.experiments.suites): suite_figure, the best row's % of the vendor library against the
dimension the suite varies (M, the tokens), one line per group of its shapes (a model's layer).
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: PNGs only
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

from gpulab.files import write_atomic  # noqa: E402

# Ten colours that stay distinct on a screen and in grey print, each paired with its own marker:
# series i gets colour i % 10 and marker i % 7, so no two of the first 70 series look alike.
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LIBRARY_STYLE = {"color": "black", "marker": "*", "linestyle": "--", "linewidth": 2.2, "markersize": 10}
CEILING_COLOUR = "#c00000"
DPI = 110
# A ceiling a ladder is drawn against: (its name in the legend, GFLOP/s), e.g. ("FMA ceiling", 65924.0);
# a tensor-core ladder passes its tensor rate instead.
Ceiling = tuple[str, float]


def series_style(i: int) -> dict:
    """The i-th series' colour and marker (see COLOURS)."""
    return {"color": COLOURS[i % len(COLOURS)], "marker": MARKERS[i % len(MARKERS)]}


def _ok(r: dict) -> bool:
    return bool(r.get("time_ms")) and (r.get("correct") is True or r.get("expected_wrong") is True)


def _label(r: dict) -> str:
    return f"{r['variant']} {r['params']}" if r.get("params") else str(r["variant"])


def best_per_rung(records: list[dict], shape: str) -> dict[str, dict]:
    """{variant: its fastest correct record at `shape`}, in the CSV's order."""
    out: dict[str, dict] = {}
    for r in records:
        if r.get("shape") != shape or not (r.get("correct") is True and r.get("time_ms")):
            continue
        best = out.get(r["variant"])
        if best is None or (r.get("gflops") or 0) > (best.get("gflops") or 0):
            out[r["variant"]] = r
    return out


def is_ragged(r: dict) -> bool:
    """A shape off the square power-of-two sweep: not square, or N not a power of two."""
    m, n, k = (r.get(d) for d in ("m", "n", "k"))
    return not (m == n == k and isinstance(m, int) and m > 0 and m & (m - 1) == 0)


# -- the ladder ------------------------------------------------------------------------------------
def ladder_bars_figure(records: list[dict], rungs: list[str], shape: str, library: str,
                       ceiling: Ceiling | None, title: str):
    """One bar per rung at `shape`: its GFLOP/s as % of `library`'s, labelled with its TFLOP/s;
    `ceiling` (name, GFLOP/s) marked as a line at its own %."""
    best = best_per_rung(records, shape)
    lib = best.get(library)
    if lib is None or not lib.get("gflops"):
        raise ValueError(f"no {library} row at {shape}: the bars are drawn against it")
    names = [v for v in rungs if v in best]
    pct = [100.0 * best[v]["gflops"] / lib["gflops"] for v in names]
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=DPI)
    x = np.arange(len(names))
    bars = ax.bar(x, pct, color=[series_style(i)["color"] for i in range(len(names))], edgecolor="black",
                  linewidth=0.5, label="rungs (fastest config at this shape)")
    for i, rect in enumerate(bars):  # past the palette, a hatch keeps every rung's bar distinct
        rect.set_hatch(_bar_hatch(i))
    for rect, v in zip(bars, names):
        ax.annotate(f"{best[v]['gflops'] / 1e3:.1f}", (rect.get_x() + rect.get_width() / 2, rect.get_height()),
                    xytext=(0, 2), textcoords="offset points", ha="center", va="bottom", fontsize=8,
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    ax.axhline(100.0, color="black", linestyle="--", linewidth=1.5,
               label=f"{library} {lib['gflops'] / 1e3:.1f} TFLOP/s = 100%")
    top = max(pct + [100.0])
    if ceiling:
        name, gflops = ceiling
        pct_line = 100.0 * gflops / lib["gflops"]
        ax.axhline(pct_line, color=CEILING_COLOUR, linestyle=":", linewidth=1.8,
                   label=f"{name} {gflops / 1e3:.1f} TFLOP/s = {pct_line:.0f}%")
        top = max(top, pct_line)
    ax.set_ylim(0, top * 1.12)
    ax.set_xticks(x, names)
    ax.set_xlabel(f"rung (bar labels: TFLOP/s at {shape})")
    ax.set_ylabel(f"% of {library}")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig


def _bar_hatch(i: int) -> str:
    """The i-th bar's hatch: none for the first len(COLOURS), then one per further round."""
    return ("", "//", "..", "xx")[(i // len(COLOURS)) % 4]


def ladder_rungs(experiment, records: list[dict], headline: str) -> list[str]:
    """The experiment's rungs (Variant.rung), in order, that have a correct, timed row at the headline shape."""
    ran = {r["variant"] for r in records if r.get("shape") == headline and _ok(r) and r.get("gflops")}
    return [v.name for v in experiment.variants if v.rung and v.name in ran]


def ladder_lines_figure(records: list[dict], rungs: list[str], library: str, ceiling: Ceiling | None,
                        title: str):
    """GFLOP/s against N: the square power-of-two shapes as lines (left), the ragged shapes as
    markers in a panel of their own (right); one colour and marker per rung, the library black."""
    ok = [r for r in records if _ok(r) and r.get("gflops")]
    # The ladder's own shapes: those at least half its rungs ran. The slowest rungs skip some (gemm_bf16's
    # t0 runs no ragged shape), and a few rungs benched beside other kernels (sgemm's v9 and v11 at the
    # skinny shapes) are not the ladder's story.
    rungs_at = {}
    for r in ok:
        if r["variant"] in rungs:
            rungs_at.setdefault(r["shape"], set()).add(r["variant"])
    ran = [r for r in ok if 2 * len(rungs_at.get(r["shape"], ())) >= len(rungs)]
    sweep = list(dict.fromkeys(r["shape"] for r in ran if not is_ragged(r)))
    ragged = list(dict.fromkeys(r["shape"] for r in ran if is_ragged(r)))
    series = [v for v in rungs if any(r["variant"] == v for r in ok)] + [library]
    best = {s: best_per_rung(ok, s) for s in sweep + ragged}
    widths = (3, max(1, len(ragged))) if ragged else (1,)
    fig, axes = plt.subplots(1, len(widths), figsize=(11, 5.2), dpi=DPI, sharey=True, squeeze=False,
                             gridspec_kw={"width_ratios": widths})
    main = axes[0][0]
    for i, v in enumerate(series):
        style = LIBRARY_STYLE if v == library else {**series_style(i), "linewidth": 1.4}
        # by size, not by CSV order: a size benched later (2048^3 in a full run) would zig-zag the line
        points = sorted((best[s][v]["m"], best[s][v]["gflops"]) for s in sweep if v in best[s])
        if points:
            main.plot(*zip(*points), label=v, **style)
    if ceiling:
        main.axhline(ceiling[1], color=CEILING_COLOUR, linestyle=":", linewidth=1.8,
                     label=f"{ceiling[0]} {ceiling[1]:,.0f}")
    main.set_xscale("log", base=2)
    main.set_xlabel("N (M = N = K)")
    main.set_ylabel("GFLOP/s (fastest config per rung)")
    main.set_title(title, fontsize=11)
    main.grid(True, alpha=0.3)
    if ragged:
        side = axes[0][1]
        offsets = np.linspace(-0.3, 0.3, len(series))
        for i, v in enumerate(series):
            style = dict(LIBRARY_STYLE if v == library else series_style(i))
            style.update(linestyle="none", markeredgecolor="black", markeredgewidth=0.4)
            points = [(j + offsets[i], best[s][v]["gflops"]) for j, s in enumerate(ragged) if v in best[s]]
            if points:
                side.plot(*zip(*points), **style)
        if ceiling:
            side.axhline(ceiling[1], color=CEILING_COLOUR, linestyle=":", linewidth=1.8)
        side.set_xticks(range(len(ragged)), ragged, rotation=25, fontsize=8, ha="right")
        side.set_xlim(-0.6, len(ragged) - 0.4)
        side.set_title("ragged and skinny shapes", fontsize=10)
        side.grid(True, axis="y", alpha=0.3)
    main.set_ylim(bottom=0)
    fig.legend(*main.get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(0.86, 0.93), fontsize=8,
               title="rung", title_fontsize=8)
    fig.tight_layout(rect=(0, 0, 0.85, 1))
    return fig


# -- memory-bound experiments ------------------------------------------------------------------------
def memory_figure(records: list[dict], title: str, ceiling_gbps: float | None = None):
    """GB/s per shape, one bar per variant config, each config its own colour and hatch-free edge."""
    rows = [r for r in records if _ok(r)]
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    labels = list(dict.fromkeys(_label(r) for r in rows))
    fig, ax = plt.subplots(figsize=(max(8, 0.45 * len(shapes) * max(1, len(labels))), 4.8), dpi=DPI)
    width = 0.8 / max(1, len(labels))
    x = np.arange(len(shapes))
    for i, label in enumerate(labels):
        values = [next((r["gbps"] for r in rows if r["shape"] == s and _label(r) == label), 0) for s in shapes]
        ax.bar(x + i * width - 0.4 + width / 2, values, width, label=label, color=series_style(i)["color"],
               edgecolor="black", linewidth=0.4, hatch=_bar_hatch(i))
    if ceiling_gbps:
        ax.axhline(ceiling_gbps, color=CEILING_COLOUR, linestyle=":", linewidth=1.8,
                   label=f"copy ceiling {ceiling_gbps:,.0f}")
    ax.set_xticks(x, shapes, fontsize=9)
    ax.set_ylabel("GB/s")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig


# -- a suite's shapes ---------------------------------------------------------------------------------
def suite_figure(records: list[dict], points: list[tuple[str, str, int]], x_name: str, library: str, title: str):
    """The best row's % of `library` at each shape of a suite: `points` are (group, shape label, x)
    in the suite's order (group: a layer, x: the value of the dimension `x_name` it varies, M); one
    line per group, x on a log2 axis, 100% (the library) marked. A shape whose best row did not run
    correctly has no point."""
    best = {r["shape"]: r for r in records if r.get("variant") == "best" and r.get("correct") is True
            and r.get("pct_of_cublas")}
    groups = list(dict.fromkeys(g for g, _, _ in points))
    fig, ax = plt.subplots(figsize=(8.5, 4.8), dpi=DPI)
    for i, group in enumerate(groups):
        mine = [(x, best[label]["pct_of_cublas"]) for g, label, x in points if g == group and label in best]
        if mine:
            xs, ys = zip(*mine)
            ax.plot(xs, ys, label=group, linewidth=1.6, **series_style(i))
    ax.axhline(100.0, label=f"{library} (100%)", **{k: v for k, v in LIBRARY_STYLE.items() if k != "marker"})
    ax.set_xscale("log", base=2)
    ax.set_xlabel(x_name)
    ax.set_ylabel(f"% of {library}")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig


# -- writing -----------------------------------------------------------------------------------------
def png_bytes(fig) -> bytes:
    """The figure as PNG bytes (closed afterwards)."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", bbox_inches="tight")
    finally:
        plt.close(fig)
    return buf.getvalue()


def save(fig, path: Path) -> Path:
    """Write the figure to `path` whole or not at all (files.write_atomic)."""
    path = Path(path)
    write_atomic(path, png_bytes(fig))
    return path


def styles_of(fig) -> list[tuple[str, str, str]]:
    """(label, colour, marker) of every labelled line of every axes: what a reader tells apart."""
    out = []
    for ax in fig.axes:
        for line in ax.get_lines():
            label = line.get_label()
            if label and not label.startswith("_"):
                out.append((label, matplotlib.colors.to_hex(line.get_color()), str(line.get_marker())))
    return out


__all__ = ["COLOURS", "MARKERS", "best_per_rung", "is_ragged", "ladder_bars_figure", "ladder_lines_figure", "ladder_rungs",
           "memory_figure", "png_bytes", "save", "series_style", "styles_of", "suite_figure"]
