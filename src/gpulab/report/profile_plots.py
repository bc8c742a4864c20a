"""Nsight Compute's view of each profiled run (results/<gpu>/profile.csv), side by side:
  left   speed of light: SM, memory, L1TEX, L2 and DRAM throughput as % of their peaks, one group of
         bars per run (ncu's *_throughput_pct columns, pct_of_peak_sustained);
  right  where the warps wait: cycles per issued instruction in each stall reason, stacked; the reasons
         that are largest anywhere shown by name, the rest summed as 'other' ('selected' is the issue
         itself, not a stall, and is left out).
"""

from __future__ import annotations

import numpy as np

from gpulab.quantities import NOT_A_STALL, STALL_REASONS, stall_key, stall_label
from gpulab.report.plots import COLOURS, DPI, plt, series_style

# (profile.csv column, label): ncu's speed-of-light section, top to bottom.
SPEED_OF_LIGHT = (
    ("ncu_sm_throughput_pct", "SM"), ("ncu_memory_throughput_pct", "memory"),
    ("ncu_l1tex_throughput_pct", "L1TEX"), ("ncu_l2_throughput_pct", "L2"), ("ncu_dram_throughput_pct", "DRAM"),
)
TOP_STALLS = 6  # named in the stack; the rest are 'other'
# The named stalls' colours: none grey, so 'other' (light grey) stands apart.
STALL_COLOURS = tuple(COLOURS[j] for j in (5, 6, 8, 9, 3, 0))


def run_label(r: dict, rows: list[dict]) -> str:
    """'sgemm v9 4096x4096x4096', with the params where two profiled runs would read the same."""
    short = f"{r['experiment']} {r['variant']}\n{r['shape']}"
    twins = [o for o in rows if (o["experiment"], o["variant"], o["shape"]) == (r["experiment"], r["variant"], r["shape"])]
    return short + (f"\n{r['params']}" if len(twins) > 1 and r.get("params") else "")


def stall_columns(rows: list[dict]) -> list[str]:
    """The stall reasons to name: the TOP_STALLS largest in any run, in order of their largest value."""
    peak = {reason: max((r.get(f"ncu_{stall_key(reason)}") or 0.0) for r in rows)
            for reason in STALL_REASONS if reason not in NOT_A_STALL}
    return [r for r, v in sorted(peak.items(), key=lambda kv: -kv[1]) if v > 0][:TOP_STALLS]


def profile_figure(rows: list[dict], title: str):
    """Speed-of-light bars and the stall stack of every profiled run."""
    labels = [run_label(r, rows) for r in rows]
    y = np.arange(len(rows))
    fig, (sol, stall) = plt.subplots(1, 2, figsize=(12, 1.0 + 1.1 * len(rows) + 1.2), dpi=DPI, sharey=True)
    height = 0.8 / len(SPEED_OF_LIGHT)
    for i, (col, name) in enumerate(SPEED_OF_LIGHT):
        values = [r.get(col) or 0.0 for r in rows]
        offset = (i - (len(SPEED_OF_LIGHT) - 1) / 2) * height
        bars = sol.barh(y + offset, values, height, label=name, color=series_style(i)["color"], edgecolor="black",
                        linewidth=0.3)
        for rect, v in zip(bars, values):
            sol.annotate(f"{v:.0f}", (rect.get_width(), rect.get_y() + rect.get_height() / 2), xytext=(2, 0),
                         textcoords="offset points", va="center", fontsize=6)
    sol.set_yticks(y, labels, fontsize=8)
    sol.invert_yaxis()
    sol.set_xlim(0, 110)
    sol.set_xlabel("% of peak (ncu speed of light)")
    sol.set_title("speed of light", fontsize=10)
    sol.grid(True, axis="x", alpha=0.3)
    sol.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / len(rows)), ncol=5)

    named = stall_columns(rows)
    left = np.zeros(len(rows))
    stack = [(reason, stall_label(reason)) for reason in named] + [("other", "other")]
    for i, (reason, name) in enumerate(stack):
        if reason == "other":
            values = np.array([sum(r.get(f"ncu_{stall_key(s)}") or 0.0 for s in STALL_REASONS
                                   if s not in named and s not in NOT_A_STALL) for r in rows])
            colour = "#d0d0d0"
        else:
            values = np.array([r.get(f"ncu_{stall_key(reason)}") or 0.0 for r in rows])
            colour = STALL_COLOURS[i % len(STALL_COLOURS)]
        stall.barh(y, values, 0.6, left=left, label=name, color=colour, edgecolor="black", linewidth=0.3)
        left += values
    for yi, total in zip(y, left):
        stall.annotate(f"{total:.1f}", (total, yi), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    stall.set_xlim(0, max(left.max(), 1e-9) * 1.15)
    stall.set_xlabel("stall cycles per issued instruction")
    stall.set_title("where the warps wait", fontsize=10)
    stall.grid(True, axis="x", alpha=0.3)
    stall.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / len(rows)), ncol=4)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
