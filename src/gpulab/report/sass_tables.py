"""Tables of `gpulab profile --sass`: ncu's counters per SASS instruction, summed by kind of memory
instruction and set beside the access model's numbers where both count the same thing, and the
instructions where the warps stalled most."""

from __future__ import annotations

from collections import defaultdict

from rich.table import Table

# Kinds of memory instruction, by opcode, as the access model names them (space, kind).
KINDS = (("LDGSTS", ("global", "ldgsts")), ("LDG", ("global", "load")), ("STG", ("global", "store")),
         ("LDS", ("shared", "load")), ("STS", ("shared", "store")))


def kind_of(opcode: str) -> tuple[str, str] | None:
    if opcode.startswith("LDGDEPBAR"):  # a barrier on earlier LDGSTS, no access of its own
        return None
    for prefix, kind in KINDS:
        if opcode.startswith(prefix):
            return kind
    return None


def _fmt(x) -> str:
    return "" if x is None else f"{x:,.0f}"


def model_by_kind(instruction_rows: list[dict], widths: dict[str, int]) -> dict[tuple[str, str], dict]:
    """The access model's per-instruction counts (gpulab.model.predict.instruction_counts rows)
    summed by (space, kind): active lanes (bytes requested / bytes per lane, shared and plain
    global only: an LDGSTS lane that zero-fills reads nothing), global sectors and shared wavefronts."""
    out: dict[tuple[str, str], dict] = defaultdict(lambda: {"lanes": 0, "sectors": 0, "wavefronts": 0})
    for r in instruction_rows:
        key = (r["space"], r["kind"])
        if r["kind"] != "ldgsts":
            out[key]["lanes"] += r["bytes_requested"] // widths[r["name"]]
        if r["space"] == "shared":
            out[key]["wavefronts"] += r["wavefronts"]
        else:
            out[key]["sectors"] += r["sectors"]
    return dict(out)


def kinds_table(rows, model: dict[tuple[str, str], dict] | None, title: str) -> Table:
    """Per kind of memory instruction: SASS sites, warp-level executions, threads predicated on,
    global requests and L2 sectors, shared wavefronts; the model's lanes and wavefronts beside."""
    sums: dict[tuple[str, str], dict] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        kind = kind_of(r.opcode)
        if kind is None or r["executed"] == 0:
            continue
        s = sums[kind]
        s["sites"] += 1
        for key in ("executed", "predicated_on_threads", "global_requests", "l2_sectors", "l2_sectors_ideal",
                    "shared_wavefronts", "shared_wavefronts_ideal"):
            s[key] += r[key]
    table = Table(title=title, title_justify="left")
    for col in ("kind", "SASS sites", "warp executions", "threads on", "model lanes", "global requests",
                "L2 sectors (ideal)", "model sectors", "shared wavefronts (ideal)", "model wavefronts"):
        table.add_column(col, justify="left" if col == "kind" else "right")
    for kind, s in sums.items():
        m = (model or {}).get(kind)
        lanes = m["lanes"] if m and kind[1] != "ldgsts" else None
        waves = m["wavefronts"] if m and kind[0] == "shared" else None
        sectors = m["sectors"] if m and kind[0] == "global" else None
        mark = lambda mine, theirs: ("" if theirs is None or mine == theirs else "[red]") + _fmt(mine)  # noqa: E731
        table.add_row(
            f"{kind[0]} {kind[1]}", _fmt(s["sites"]), _fmt(s["executed"]),
            mark(s["predicated_on_threads"], lanes), _fmt(lanes),
            _fmt(s["global_requests"]) if kind[0] == "global" else "",
            f"{mark(s['l2_sectors'], sectors)} ({_fmt(s['l2_sectors_ideal'])})" if kind[0] == "global" else "",
            _fmt(sectors),
            f"{mark(s['shared_wavefronts'], waves)} ({_fmt(s['shared_wavefronts_ideal'])})"
            if kind[0] == "shared" or kind[1] == "ldgsts" else "",
            _fmt(waves),
        )
    return table


def hot_table(rows, n: int = 12) -> Table:
    """The instructions where the sampled warps stalled most, with the reason they stalled most for."""
    total = sum(r["stall_samples"] for r in rows) or 1
    hot = sorted((r for r in rows if r["stall_samples"] > 0), key=lambda r: -r["stall_samples"])[:n]
    table = Table(title=f"where the warps stalled: the {len(hot)} hottest instructions of {len(rows)}",
                  title_justify="left")
    for col in ("address", "instruction", "samples", "share", "top stall"):
        table.add_column(col, justify="right" if col in ("samples", "share") else "left")
    for r in hot:
        reason = max(r.stalls, key=r.stalls.get) if r.stalls else ""
        table.add_row(r.address[-5:], r.source, _fmt(r["stall_samples"]), f"{r['stall_samples'] / total:.1%}", reason)
    return table
