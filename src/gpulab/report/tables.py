"""Terminal tables (rich) built from records."""

from __future__ import annotations

import math

from rich.table import Table


def _num(value, fmt: str) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return format(value, fmt)


def _status(r: dict) -> str:
    if r.get("skip_reason") and not r.get("expected_wrong"):
        return f"[yellow]skipped[/]: {r['skip_reason']}"
    if r.get("expected_wrong"):
        return f"[magenta]expected wrong[/]: {r.get('wrong_count', '?')} wrong"
    if r.get("correct") is False:
        return "[red]WRONG[/]"
    if r.get("correct") is True:
        return f"[green]ok[/] {_num(r.get('max_rel_err'), '.1e')}"
    return ""


def bench_table(records: list[dict], title: str) -> Table:
    compute = any(r.get("gflops") for r in records)
    table = Table(title=title, title_justify="left")
    for col, justify in (("variant", "left"), ("params", "left"), ("shape", "left"), ("time ms", "right")):
        table.add_column(col, justify=justify)
    if compute:
        table.add_column("GFLOP/s", justify="right")
        table.add_column("% cuBLAS", justify="right")
    table.add_column("GB/s", justify="right")
    if any(r.get("pct_of_ceiling") is not None for r in records):
        table.add_column("% ceiling", justify="right")
    table.add_column("x base", justify="right")
    table.add_column("regs", justify="right")
    table.add_column("check")
    has_ceiling = any(r.get("pct_of_ceiling") is not None for r in records)
    for r in records:
        row = [r["variant"], r.get("params") or "", r["shape"], _num(r.get("time_ms"), ".4f")]
        if compute:
            row += [_num(r.get("gflops"), ",.0f"), _num(r.get("pct_of_cublas"), ".1f")]
        row.append(_num(r.get("gbps"), ",.1f"))
        if has_ceiling:
            row.append(_num(r.get("pct_of_ceiling"), ".1f"))
        row += [_num(r.get("speedup_vs_baseline"), ".2f"), _num(r.get("reg_per_thread"), "d"), _status(r)]
        table.add_row(*row)
    return table


def resources_table(records: list[dict], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for col in ("experiment", "variant", "params", "regs", "smem B", "spill st B", "spill ld B",
                "stack B", "barriers", "note"):
        table.add_column(col, justify="left" if col in ("experiment", "variant", "params", "note") else "right")
    for r in records:
        spills = r.get("spill_stores_bytes")
        table.add_row(
            r["experiment"], r["variant"], r.get("params") or "",
            _num(r.get("reg_per_thread"), "d"), _num(r.get("smem_static_bytes"), "d"),
            ("[red]" if spills else "") + _num(spills, "d"), _num(r.get("spill_loads_bytes"), "d"),
            _num(r.get("stack_frame_bytes"), "d"), _num(r.get("barriers"), "d"), r.get("skip_reason") or "",
        )
    return table


def best_per_shape(records: list[dict], libraries: tuple[str, ...] = ("cublas",)) -> list[dict]:
    """Seed 000's summary: for each shape, the fastest correct variant and its speedup over the
    baseline variant's best config. Library rows (cuBLAS) are reported beside, not as winners."""
    out = []
    shapes = list(dict.fromkeys(r["shape"] for r in records))
    for shape in shapes:
        rows = [r for r in records if r["shape"] == shape and r.get("time_ms") and r.get("correct")
                and not r.get("expected_wrong")]
        own = [r for r in rows if r["variant"] not in libraries]
        if not own:
            continue
        best = min(own, key=lambda r: r["time_ms"])
        out.append({
            "shape": shape,
            "best": f"{best['variant']} {best.get('params') or ''}".strip(),
            "time_ms": best["time_ms"],
            "speedup": best.get("speedup_vs_baseline"),
            "pct_of_cublas": best.get("pct_of_cublas"),
        })
    return out


def summary_table(records: list[dict], baseline: str, title: str,
                  libraries: tuple[str, ...] = ("cublas",)) -> Table | None:
    rows = best_per_shape(records, libraries)
    if not rows:
        return None
    table = Table(title=title, title_justify="left")
    for col in ("shape", "best variant", "time ms", f"speedup vs {baseline}", "% cuBLAS"):
        table.add_column(col, justify="left" if col in ("shape", "best variant") else "right")
    for r in rows:
        table.add_row(r["shape"], r["best"], _num(r["time_ms"], ".4f"), _num(r["speedup"], ".2f") + "x"
                      if r["speedup"] else "", _num(r["pct_of_cublas"], ".1f"))
    return table
