"""Markdown tables for the README, generated from the committed CSVs (never typed by hand).

The README holds generated blocks between `<!-- gpulab:NAME -->` and `<!-- /gpulab:NAME -->`;
`gpulab readme` rewrites each block from results/<gpu>/NAME.csv and leaves the rest alone.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpulab.records import read_csv, write_atomic

BLOCK_RE = re.compile(r"(<!-- gpulab:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /gpulab:(?P=name) -->)", re.S)


def _column(r: dict) -> str:
    return f"{r['variant']} {r['params']}" if r.get("params") else str(r["variant"])


def _fmt(value, rate: str) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if rate == "gflops" else f"{value:,.1f}"


def pivot(records: list[dict], rate: str) -> str:
    """Rows: shapes. Columns: each variant/params (and library rows). Cells: the rate."""
    columns = list(dict.fromkeys(_column(r) for r in records))
    shapes = list(dict.fromkeys(r["shape"] for r in records))
    unit = "GFLOP/s" if rate == "gflops" else "GB/s"
    lines = [f"| shape ({unit}) | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for shape in shapes:
        cells = []
        for col in columns:
            row = next((r for r in records if r["shape"] == shape and _column(r) == col), None)
            if row is None:
                cells.append("")
            elif row.get("expected_wrong"):
                cells.append(f"{_fmt(row.get(rate), rate)} (wrong: {row.get('wrong_count')})")
            elif row.get("skip_reason"):
                cells.append("skipped")
            else:
                cells.append(_fmt(row.get(rate), rate))
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def best_lines(records: list[dict], baseline: str) -> str:
    from gpulab.report.tables import best_per_shape

    out = []
    for b in best_per_shape(records):
        cub = f", {b['pct_of_cublas']:.0f}% of cuBLAS" if b.get("pct_of_cublas") else ""
        speed = f", {b['speedup']:.2f}x over {baseline}" if b.get("speedup") else ""
        out.append(f"- {b['shape']}: best {b['best']} ({b['time_ms']:.4f} ms{speed}{cub})")
    return "\n".join(out)


def provenance(records: list[dict]) -> str:
    r = next((r for r in records if r.get("gpu")), {})
    dates = sorted({str(r.get("date", ""))[:10] for r in records if r.get("date")})
    return (f"_{r.get('gpu', '?')}, driver {r.get('driver', '?')}, CUDA runtime {r.get('cuda_runtime', '?')}, "
            f"NVRTC {r.get('nvrtc', '?')}, CuPy {r.get('cupy', '?')}, gpulab {r.get('gpulab', '?')}, "
            f"{', '.join(dates) or '?'}._")


def experiment_block(csv_path: Path, baseline: str, rate: str) -> str:
    records = read_csv(csv_path)
    parts = [pivot(records, rate), "", best_lines(records, baseline), "", provenance(records)]
    return "\n".join(p for p in parts if p is not None) + "\n"


def update_readme(readme: Path, blocks: dict[str, str]) -> list[str]:
    """Rewrite the named generated blocks in place (atomically); returns the names rewritten."""
    text = readme.read_text()
    done = []

    def replace(m: re.Match) -> str:
        name = m.group("name")
        if name not in blocks:
            return m.group(0)
        done.append(name)
        return m.group(1) + blocks[name] + m.group(4)

    new = BLOCK_RE.sub(replace, text)
    if new != text:
        write_atomic(readme, new)
    return done
