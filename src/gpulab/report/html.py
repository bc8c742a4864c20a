"""One self-contained HTML page per card: every experiment's table, plot and best-per-shape lines,
built from the CSVs in results/<gpu>/ (plots embedded as PNG data, so the file travels alone)."""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; font-size: 13px; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f0f0f0; } td.l, th.l { text-align: left; }
.wrong { color: #b00; } .expected { color: #80a; } .skip { color: #a60; } .noise { color: #777; }
img { max-width: 100%; } .prov { color: #666; font-size: 12px; }
"""

COLUMNS = (  # (column, header, format)
    ("variant", "variant", None), ("params", "params", None), ("shape", "shape", None),
    ("time_ms", "time ms", ".4f"), ("gflops", "GFLOP/s", ",.0f"), ("pct_of_cublas", "% cuBLAS", ".1f"),
    ("gbps", "GB/s", ",.1f"), ("pct_of_ceiling", "% ceiling", ".1f"), ("speedup_vs_baseline", "x base", ".2f"),
    ("reg_per_thread", "regs", "d"), ("max_rel_err", "max rel err", ".1e"),
)


def _cell(value, fmt):
    if value is None or value == "":
        return ""
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    try:
        return format(value, fmt) if fmt else html.escape(str(value))
    except (TypeError, ValueError):
        return html.escape(str(value))


def _status(r: dict) -> str:
    if r.get("expected_wrong"):
        return f'<span class="expected">expected wrong: {r.get("wrong_count")} wrong</span>'
    if r.get("skip_reason"):
        return f'<span class="skip">skipped: {html.escape(str(r["skip_reason"]))}</span>'
    if r.get("correct") is False:
        return '<span class="wrong">WRONG</span>'
    return "ok" if r.get("correct") else ""


def records_table(records: list[dict]) -> str:
    cols = [c for c in COLUMNS if any(r.get(c[0]) not in (None, "") for r in records)]
    head = "".join(f'<th class="{"l" if f is None else ""}">{h}</th>' for _, h, f in cols) + '<th class="l">check</th>'
    body = []
    for r in records:
        cells = "".join(f'<td class="{"l" if f is None else ""}">{_cell(r.get(c), f)}</td>' for c, _, f in cols)
        body.append(f"<tr>{cells}<td class='l'>{_status(r)}</td></tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


# The counters of the predicted-vs-measured table, as (quantity, header).
FIDELITY_COLUMNS = (
    ("gmem_load_requests", "global load req"), ("gmem_load_sectors", "global load sectors"),
    ("gmem_store_requests", "global store req"), ("gmem_store_sectors", "global store sectors"),
    ("smem_load_requests", "shared load req"), ("smem_load_wavefronts", "shared load wavefronts"),
    ("smem_load_bank_conflicts", "shared load conflicts"), ("smem_store_wavefronts", "shared store wavefronts"),
    ("smem_store_bank_conflicts", "shared store conflicts"), ("dram_read_bytes", "DRAM read bytes"),
)


def _fidelity_cell(r: dict | None) -> str:
    """ncu's number; where it is not the prediction, the prediction beside it and the verdict."""
    if r is None or r.get("measured") is None:
        return "<td></td>"
    measured = f"{r['measured']:,.0f}"
    verdict = str(r.get("verdict") or "")
    if r.get("exact") is True or r.get("predicted") is None:
        return f"<td>{measured}</td>"
    cls = "noise" if verdict in ("arbitration", "not judged", "info") or verdict.startswith("within") else "wrong"
    tip = html.escape(f"{verdict}: {r.get('note') or ''}".strip(": "))
    return f'<td class="{cls}" title="{tip}">{measured}<br>pred {r["predicted"]:,.0f}</td>'


def fidelity_table(rows: list[dict]) -> str:
    """One row per profiled run: Nsight Compute's counters, with the prediction shown wherever it
    differs (red where the model is wrong, grey for arbitration noise and DRAM within tolerance)."""
    runs: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        key = tuple(r.get(k) or "" for k in ("experiment", "variant", "params", "shape"))
        runs.setdefault(key, {})[r.get("quantity")] = r
    head = "".join(f"<th class='l'>{h}</th>" for h in ("experiment", "variant", "params", "shape"))
    head += "".join(f"<th>{h}</th>" for _, h in FIDELITY_COLUMNS)
    body = []
    for key, by in runs.items():
        cells = "".join(f"<td class='l'>{html.escape(str(k))}</td>" for k in key)
        cells += "".join(_fidelity_cell(by.get(q)) for q, _ in FIDELITY_COLUMNS)
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _img(png: Path | None) -> str:
    if png is None or not Path(png).exists():
        return ""
    data = base64.b64encode(Path(png).read_bytes()).decode()
    return f'<img alt="{html.escape(Path(png).name)}" src="data:image/png;base64,{data}">'


def page(gpu: str, sections: list[dict]) -> str:
    """sections: [{title, records or table_html, png, notes (list of str), provenance}]"""
    parts = [f"<!doctype html><meta charset='utf-8'><title>gpulab: {html.escape(gpu)}</title>",
             f"<style>{STYLE}</style><h1>gpulab results: {html.escape(gpu)}</h1>"]
    for s in sections:
        parts.append(f"<h2>{html.escape(s['title'])}</h2>")
        parts.append(_img(s.get("png")))
        if s.get("notes"):
            parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in s["notes"]) + "</ul>")
        parts.append(s["table_html"] if "table_html" in s else records_table(s["records"]))
        if s.get("provenance"):
            parts.append(f"<p class='prov'>{html.escape(s['provenance'])}</p>")
    return "\n".join(parts) + "\n"
