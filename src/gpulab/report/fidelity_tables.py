"""Terminal output of `gpulab fidelity`: a line per measured run, the table of quantities that differ
from the prediction, and the closing counts. Built from gpulab.jobs.fidelity's RunResult objects and
fidelity.csv rows."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text  # run labels and notes are plain text, never markup

from gpulab.quantities import agreement


def run_line(res) -> Text:
    """One run as it finishes: its error, or how many counted quantities were exact."""
    good, judged = res.exact
    status = f"error: {res.error}" if res.error else (f"{good}/{judged} counted quantities exact" if judged else "no model: measured only")
    return Text(f"  {res.spec.label}: {status} ({res.seconds:.1f} s)")


def _count(x) -> str:
    return "" if x is None else f"{x:,.0f}"


def differ_table(results: list) -> Table | None:
    """Every quantity that differs from the prediction (or failed); None if none does."""
    table = Table(title="quantities that differ from the prediction", title_justify="left")
    for col in ("run", "quantity", "predicted", "measured", "ratio", "verdict / note"):
        table.add_column(col, justify="right" if col in ("predicted", "measured", "ratio") else "left")
    shown = 0
    for res in results:
        for r in res.rows:
            bad = r.get("verdict") in ("differs", "error") or str(r.get("verdict", "")).startswith("outside")
            if bad:
                shown += 1
                table.add_row(Text(res.spec.label), r["quantity"], _count(r.get("predicted")), _count(r.get("measured")),
                              "" if r.get("ratio") is None else f"{r['ratio']:.4f}",
                              Text(f"{r.get('verdict')}: {r.get('note') or ''}".strip(": ")))
    return table if shown else None


def summary_line(results: list, path: Path) -> str:
    """How many modelled runs were exact on every counted quantity, and where the CSV went."""
    modelled = [res for res in results if res.exact[1]]
    perfect = sum(1 for res in modelled if res.exact[0] == res.exact[1])
    return (f"{perfect} of {len(modelled)} modelled runs exact on every counted quantity; "
            f"{len(results) - len(modelled)} runs measured without a model or failed; wrote {path}")


def rejudge_line(path: Path, rows: list[dict]) -> str:
    """How many counted quantities of a rejudged fidelity.csv are exact under the current models."""
    good, judged = agreement(rows)
    return f"{path}: {good} of {judged} counted quantities exact under the current models"
