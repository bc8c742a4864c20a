"""One self-contained HTML page per card: every experiment's table, plot and best-per-shape lines,
built from the CSVs in results/<gpu>/ (plots embedded as PNG data, so the file travels alone)."""

from __future__ import annotations

import base64
import html
import math
from pathlib import Path

from gpulab.gpu.nvml import thermal_or_power
from gpulab.records import RUN_KEY, ceiling_notes, status
from gpulab.report.tables import noise_text, throttle_note

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1180px; padding: 0 1em; color: #222;
       line-height: 1.4; }
nav { font-size: 14px; background: #f6f6f6; padding: .5em 1em; border-radius: 4px; }
nav a { margin-right: 1.2em; white-space: nowrap; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 13px; margin: .6em 0 1em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f0f0f0; position: sticky; top: 0; } td.l, th.l { text-align: left; }
.wrong { color: #b00; } .expected { color: #80a; } .skip { color: #a60; } .noise { color: #777; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 13px; } .prov { color: #666; font-size: 12px; }
"""

COLUMNS = (  # (column, header, format)
    ("variant", "variant", None), ("params", "params", None), ("shape", "shape", None),
    ("time_ms", "time ms", ".4f"), ("gflops", "GFLOP/s", ",.0f"), ("pct_of_cublas", "% cuBLAS", ".1f"),
    ("gbps", "GB/s", ",.1f"), ("pct_of_ceiling", "% ceiling", ".1f"), ("speedup_vs_baseline", "x base", ".2f"),
    ("rel_noise", "± 95%", "noise"), ("sm_clock_mhz", "SM MHz", "d"),
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
    return {
        "did not finish": lambda: f'<span class="wrong">{html.escape(str(r["skip_reason"]))}</span>',
        "expected wrong": lambda: f'<span class="expected">expected wrong: {r.get("wrong_count")} wrong</span>',
        "skipped": lambda: f'<span class="skip">skipped: {html.escape(str(r["skip_reason"]))}</span>',
        "wrong": lambda: '<span class="wrong">WRONG</span>',
        "ok": lambda: "ok",
        "": lambda: "",
    }[status(r)]()


def _noise_cell(r: dict) -> str:
    """The median's interval as ±%, marked where the budget ran out before the noise target."""
    text = html.escape(noise_text(r))
    return f'<span class="skip">{text}</span>' if r.get("hit_budget") else text


def _card_note(r: dict) -> str:
    """The throttle flag (gpulab.report.tables.throttle_note), red where the row was timed slowed."""
    note = throttle_note(r)
    if not note:
        return ""
    return f'; <span class="{"wrong" if thermal_or_power(r.get("throttle")) else "noise"}">{html.escape(note)}</span>'


def records_table(records: list[dict]) -> str:
    cols = [c for c in COLUMNS if any(r.get(c[0]) not in (None, "") for r in records)]
    head = "".join(f'<th class="{"l" if f is None else ""}">{h}</th>' for _, h, f in cols) + '<th class="l">check</th>'
    body = []
    for r, note in zip(records, ceiling_notes(records)):
        cells = "".join(f'<td class="{"l" if f is None else ""}">'
                        f'{_noise_cell(r) if f == "noise" else _cell(r.get(c), f)}'
                        f'{html.escape(note) if c == "pct_of_ceiling" else ""}</td>' for c, _, f in cols)
        body.append(f"<tr>{cells}<td class='l'>{_status(r)}{_card_note(r)}</td></tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


# The counters of the predicted-vs-measured table, as (quantity, header).
FIDELITY_COLUMNS = (
    ("gmem_load_requests", "global load req"), ("gmem_load_sectors", "global load sectors"),
    ("gmem_store_requests", "global store req"), ("gmem_store_sectors", "global store sectors"),
    ("smem_load_requests", "shared load req"), ("smem_load_wavefronts", "shared load wavefronts"),
    ("smem_load_bank_conflicts", "shared load conflicts"), ("smem_store_wavefronts", "shared store wavefronts"),
    ("smem_store_bank_conflicts", "shared store conflicts"), ("smem_ldsm_wavefronts", "ldmatrix wavefronts"),
    ("tma_load_bytes", "TMA load bytes"), ("gmma_requests", "wgmma instr"), ("dram_read_bytes", "DRAM read bytes"),
)


def _fidelity_cell(r: dict | None) -> str:
    """ncu's number; where it is not the prediction, the prediction beside it and the verdict."""
    if r is None or r.get("measured") is None:
        return "<td></td>"
    measured = f"{r['measured']:,.0f}"
    verdict = str(r.get("verdict") or "")
    if r.get("exact") is True or r.get("predicted") is None:
        return f"<td>{measured}</td>"
    cls = "noise" if verdict in ("not judged", "info") or verdict.startswith("within") else "wrong"
    tip = html.escape(f"{verdict}: {r.get('note') or ''}".strip(": "))
    return f'<td class="{cls}" title="{tip}">{measured}<br>pred {r["predicted"]:,.0f}</td>'


def fidelity_table(rows: list[dict]) -> str:
    """One row per profiled run: Nsight Compute's counters, with the prediction shown wherever it
    differs (red where the model is wrong, grey for DRAM within tolerance and rows not judged)."""
    runs: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        key = tuple(r.get(k) or "" for k in RUN_KEY)
        runs.setdefault(key, {})[r.get("quantity")] = r
    head = "".join(f"<th class='l'>{h}</th>" for h in ("experiment", "variant", "params", "shape"))
    head += "".join(f"<th>{h}</th>" for _, h in FIDELITY_COLUMNS)
    body = []
    for key, by in runs.items():
        cells = "".join(f"<td class='l'>{html.escape(str(k))}</td>" for k in key)
        cells += "".join(_fidelity_cell(by.get(q)) for q, _ in FIDELITY_COLUMNS)
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


# The columns of the profiles table: (profile.csv column, header, format).
PROFILE_COLUMNS = (
    ("experiment", "experiment", None), ("variant", "variant", None), ("params", "params", None),
    ("shape", "shape", None), ("ncu_duration_ns", "duration us", "us"), ("ncu_sm_throughput_pct", "SM %", ".1f"),
    ("ncu_memory_throughput_pct", "memory %", ".1f"), ("ncu_l1tex_throughput_pct", "L1TEX %", ".1f"),
    ("ncu_l2_throughput_pct", "L2 %", ".1f"), ("ncu_dram_throughput_pct", "DRAM %", ".1f"),
    ("ncu_l1_hit_rate_pct", "L1 hit %", ".1f"), ("ncu_l2_hit_rate_pct", "L2 hit %", ".1f"),
    ("ncu_achieved_occupancy_pct", "achieved occ. %", ".1f"), ("ncu_issue_slots_busy_pct", "issue busy %", ".1f"),
    ("ncu_top_stall", "top stall", None),
)


def profile_table(rows: list[dict]) -> str:
    """One row per profiled run: ncu's speed of light, hit rates, occupancy and top stall."""
    head = "".join(f'<th class="{"l" if f is None else ""}">{h}</th>' for _, h, f in PROFILE_COLUMNS)
    body = []
    for r in rows:
        cells = []
        for c, _, f in PROFILE_COLUMNS:
            v = r.get(c)
            if f == "us":
                v, f = (v / 1e3 if isinstance(v, (int, float)) else v), ",.1f"
            cells.append(f'<td class="{"l" if f is None else ""}">{_cell(v, f)}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def ceilings_table(rows: list[dict]) -> str:
    head = "<tr><th class='l'>ceiling</th><th>GB/s</th><th>GFLOP/s</th><th class='l'>what</th></tr>"
    body = "".join(f"<tr><td class='l'>{html.escape(str(r.get('ceiling')))}</td><td>{_cell(r.get('gbps'), ',.0f')}</td>"
                   f"<td>{_cell(r.get('gflops'), ',.0f')}</td><td class='l'>{html.escape(str(r.get('what') or ''))}</td></tr>"
                   for r in rows)
    return f"<table>{head}{body}</table>"


def _img(png: Path | None, alt: str = "", caption: str = "") -> str:
    """A PNG embedded as a data URI (the page travels alone), in a figure with its caption."""
    if png is None or not Path(png).exists():
        return ""
    data = base64.b64encode(Path(png).read_bytes()).decode()
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (f'<figure><img alt="{html.escape(alt or Path(png).name)}" src="data:image/png;base64,{data}">'
            f"{cap}</figure>")


def _anchor(title: str) -> str:
    return "s-" + "".join(ch if ch.isalnum() else "-" for ch in title.lower()).strip("-")[:40]


def page(gpu: str, sections: list[dict]) -> str:
    """sections: [{title, images: [{path, alt, caption}], notes (list of str), records or table_html,
    provenance}]; a navigation line on top links each section."""
    nav = " ".join(f'<a href="#{_anchor(s["title"])}">{html.escape(s["title"].split(":")[0])}</a>' for s in sections)
    parts = [f"<!doctype html><html lang='en'><meta charset='utf-8'>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
             f"<title>gpulab: {html.escape(gpu)}</title>",
             f"<style>{STYLE}</style><h1>gpulab results: {html.escape(gpu)}</h1><nav>{nav}</nav>"]
    for s in sections:
        parts.append(f"<h2 id='{_anchor(s['title'])}'>{html.escape(s['title'])}</h2>")
        parts.extend(_img(i["path"], i.get("alt", ""), i.get("caption", "")) for i in s.get("images", ()))
        if s.get("notes"):
            parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in s["notes"]) + "</ul>")
        table = s["table_html"] if "table_html" in s else records_table(s["records"]) if s.get("records") else ""
        if table:
            parts.append(f"<div class='scroll'>{table}</div>")
        if s.get("provenance"):
            parts.append(f"<p class='prov'>{html.escape(s['provenance'])}</p>")
    return "\n".join(parts) + "\n"
