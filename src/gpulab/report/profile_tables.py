"""Terminal tables for `gpulab profile` and `gpulab compare`: predicted | measured | ratio for every
counted quantity, the headline metrics with their readings, the top stalls, and two profiles side
by side. Built from gpulab.jobs.profile.Profile objects; the readings come from report/readings.py."""

from __future__ import annotations

import math

from rich.table import Table

from gpulab import quantities as Q
from gpulab.report import readings


def header_line(prof) -> str:
    """The run, the card and the ncu version, and which launch was captured, as the profiled
    program reported its launches (rich markup: the label in bold)."""
    dev = prof.info.get("device", {})
    n = prof.info.get("launches", {})
    last = n.get("captured", 0) + 1 if "captured" in n else "?"
    what = "call" if prof.spec.variant is None else "launch"
    return (f"[bold]{prof.spec.label}[/] on {dev.get('name', '?')} ({dev.get('arch', '?')}), "
            f"ncu {prof.ncu_version or '?'}: {what} {last} of {last} captured "
            f"({n.get('check', '?')} checked, {n.get('warmup', '?')} warm-up), clocks unlocked, caches flushed per pass")


def library_lines(prof) -> list[str]:
    """What a vendor library's call ran, which gpulab learns only from the capture: the kernel it spent
    its time in (grid, block, registers, shared memory), then any other kernel of the call."""
    if prof.spec.variant is not None:
        return []
    launch, res = prof.info.get("launch", {}), prof.info.get("resources", {})
    smem = (res.get("smem_static_bytes") or 0) + (launch.get("smem_dynamic_bytes") or 0)
    grid = "x".join(map(str, launch.get("grid") or ["?"]))
    block = "x".join(map(str, launch.get("block") or ["?"]))
    lines = [f"{prof.spec.library} ran {prof.kernel or '?'}: grid {grid}, block {block}, "
             f"{res.get('reg_per_thread', '?')} registers, {smem:,} B shared memory"]
    for name, ns in prof.other_kernels:
        lines.append(f"  then {name} ({fmt(ns, 'ns')} under ncu)")
    if prof.other_kernels:
        lines.append(f"  counts, bytes and duration below add up the call's {prof.kernels} kernels "
                     f"({fmt(prof.measured.get('duration_ns'), 'ns')} under ncu in all); rates, clock, "
                     "stalls and occupancy are the first kernel's")
    return lines


def fmt(value, kind: str = "count") -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    if kind == "pct":
        return f"{value:.1f}%"
    if kind in ("ratio", "per"):
        return f"{value:.2f}"
    if kind == "ns":
        return f"{value / 1e3:,.1f} us"
    if kind == "hz":
        return f"{value / 1e6:,.0f} MHz"
    return f"{value:,.0f}"


def _ratio(measured, predicted) -> str:
    if predicted is None or measured is None or (isinstance(measured, float) and math.isnan(measured)):
        return ""
    if predicted == 0:
        return "=" if measured == 0 else "inf"
    return f"{measured / predicted:.3f}"


def counted_reading(prof, key: str) -> str | None:
    m = prof.measured
    if key.endswith("_sectors_per_request"):
        op = key.split("_")[1]
        return readings.sectors_per_request(m.get(key)) if m.get(f"gmem_{op}_requests") else None
    if key in ("smem_load_bank_conflicts", "smem_store_bank_conflicts"):
        op = key.split("_")[1]
        return readings.bank_conflicts(m.get(key), m.get(f"smem_{op}_requests"), m.get(f"smem_{op}_wavefronts"))
    if key == "dram_bytes":
        return readings.dram_vs_floor(m.get(key), prof.prediction(key), prof.info.get("device", {}).get("l2_bytes"))
    return readings.agreement(m.get(key), prof.prediction(key))


def counted_table(prof) -> Table:
    title = "Counted quantities: the model's prediction, then the hardware's count"
    if not prof.predicted:
        title += f"  [dim](no prediction: {prof.predicted_note})[/]"
    t = Table(title=title, title_justify="left")
    for col, just in (("quantity", "left"), ("predicted", "right"), ("measured", "right"),
                      ("measured/predicted", "right"), ("reading", "left")):
        t.add_column(col, justify=just)
    for q in Q.COUNTED:
        measured, predicted = prof.measured.get(q.key), prof.prediction(q.key)
        t.add_row(q.label, fmt(predicted, q.kind), fmt(measured, q.kind), _ratio(measured, predicted),
                  counted_reading(prof, q.key) or "")
    return t


def headline_reading(prof, key: str) -> str | None:
    m = prof.measured
    occ = prof.info.get("occupancy", {})
    return {
        "dram_throughput_pct": lambda: readings.dram_throughput(m.get(key)),
        "l1_hit_rate_pct": lambda: readings.l1_hit_rate(m.get(key)),
        "l2_hit_rate_pct": lambda: readings.l2_hit_rate(m.get(key)),
        "achieved_occupancy_pct": lambda: readings.occupancy(
            m.get(key), m.get("theoretical_occupancy_pct"), occ.get("occupancy_limiter")),
        "theoretical_occupancy_pct": lambda: (
            f"{occ['blocks_per_sm']} blocks of {occ['warps_per_block']} warps per SM, set by "
            f"{occ['occupancy_limiter']}" if occ.get("blocks_per_sm") is not None else None),
        "eligible_warps_per_scheduler": lambda: readings.eligible_warps(m.get(key)),
        "issue_slots_busy_pct": lambda: readings.issue_slots_busy(m.get(key)),
        "duration_ns": lambda: "serialized and replayed with caches flushed; quote `gpulab bench` for time",
    }.get(key, lambda: None)()


def headline_table(prof) -> Table:
    t = Table(title="Headline metrics", title_justify="left")
    for col, just in (("metric", "left"), ("value", "right"), ("reading", "left")):
        t.add_column(col, justify=just)
    for q in Q.HEADLINE:
        t.add_row(q.label, fmt(prof.measured.get(q.key), q.kind), headline_reading(prof, q.key) or "")
    return t


def stalls_table(prof, n: int = 3) -> Table:
    t = Table(title="Top warp stalls (cycles a warp spends in the state per instruction it issues)",
              title_justify="left")
    for col, just in (("stall", "left"), ("cycles/inst", "right"), ("share", "right"),
                      ("what the warp waits for", "left")):
        t.add_column(col, justify=just)
    for reason, value, share in Q.top_stalls(prof.stalls(), n):
        s = Q.STALL_REASONS.get(reason)
        t.add_row(Q.stall_label(reason), f"{value:.2f}", f"{share * 100:.0f}%", s.meaning if s else "")
    return t


def top_stall_line(prof) -> str:
    top = Q.top_stalls(prof.stalls(), 1)
    return readings.stall_reading(top[0][0]) if top else ""


def _moved_counts(a, b) -> list[str]:
    """The counted quantities outside COMPARE_KEYS that either kernel has and that changed (cp.async,
    ldmatrix, TMA and wgmma counts, stores): what a rung that moved to another instruction changed.
    The hardware twins (hw_*) and the intermediates of derived counts are left out."""
    def value(profile, key):
        v = profile.measured.get(key)
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    out = []
    for q in Q.COUNTED:
        if q.key in Q.COMPARE_KEYS or q.key.startswith("hw_") or not q.fidelity:
            continue
        x, y = value(a, q.key), value(b, q.key)
        if x is not None and y is not None and x != y:
            out.append(q.key)
    return out


def compare_table(a, b) -> Table:
    """Two profiles side by side: each key metric, its change (arrow and size) and whether that is
    better; the top stall of each last."""
    t = Table(title=f"{a.spec.experiment.name} {a.spec.shape.label}: {a.name} -> {b.name}", title_justify="left")
    for col, just in (("metric", "left"), (a.name, "right"), (b.name, "right"), ("change", "left"), ("", "left")):
        t.add_column(col, justify=just)
    for key in (*Q.COMPARE_KEYS, *_moved_counts(a, b)):
        q = Q.BY_KEY[key]
        x, y = a.measured.get(key), b.measured.get(key)
        arrow, size = readings.change(x, y)
        if q.kind == "pct" and arrow in ("↑", "↓") and x is not None and y is not None:
            size = f"{size} ({y - x:+.1f} pts)".strip()
        v = readings.verdict(x, y, q.better)
        colour = {"better": "green", "worse": "red"}.get(v, "")
        t.add_row(q.label.strip(), fmt(x, q.kind), fmt(y, q.kind), f"{arrow} {size}".strip(),
                  f"[{colour}]{v}[/]" if colour else "")
    sa, sb = a.measured.get("top_stall"), b.measured.get("top_stall")
    t.add_row("top stall", Q.stall_label(sa) if sa else "", Q.stall_label(sb) if sb else "",
              "=" if sa == sb else "changed", "")
    return t


def compare_story(a, b) -> list[str]:
    return readings.compare_story(a.measured, b.measured, a.name, b.name)
