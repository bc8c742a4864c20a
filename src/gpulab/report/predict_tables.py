"""Terminal tables for `gpulab predict`: what the access model says one launch must do, as totals
next to the ncu metric each compares with, and per memory instruction. Built from the dicts of
gpulab.model.predict (summarize and instruction_table); no GPU needed."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text  # instruction names hold brackets (A[row][k]) that are not markup

from gpulab.quantities import COUNTED, metric_text

# The model's key -> the ncu metric its prediction is held to (or, where only a hardware counter
# measures it, compared with).
COMPARED_WITH = {q.predicted_as: metric_text(q.key) for q in reversed(COUNTED) if q.predicted_as and metric_text(q.key)}


def summary_table(title: str, p: dict) -> Table:
    """The launch's totals (p: model.predict.summarize), each count beside the ncu metric it compares with."""
    table = Table(title=title, title_justify="left")
    for col, justify in (("quantity", "left"), ("predicted", "right"), ("ncu metric it compares with", "left")):
        table.add_column(col, justify=justify)

    def count(label, key):
        table.add_row(label, f"{p[key]:,}", COMPARED_WITH.get(key, ""))

    def ratio(label, key):
        table.add_row(label, f"{p[key]:.2f}", "")

    count("global load requests", "gmem_load_requests")
    count("  sectors", "gmem_load_sectors")
    ratio("  sectors per request", "gmem_load_sectors_per_request")
    count("global store requests", "gmem_store_requests")
    count("  sectors", "gmem_store_sectors")
    ratio("  sectors per request", "gmem_store_sectors_per_request")
    count("bytes into L1TEX, global loads (sectors x 32)", "l1tex_global_load_bytes")
    count("bytes into L1TEX, global stores (sectors x 32)", "l1tex_global_store_bytes")
    count("shared load requests (instructions)", "smem_load_requests")
    count("  wavefronts", "smem_load_wavefronts")
    count("  bank conflicts", "smem_load_bank_conflicts")
    count("shared store requests (instructions)", "smem_store_requests")
    count("  wavefronts", "smem_store_wavefronts")
    count("  bank conflicts", "smem_store_bank_conflicts")
    if p.get("smem_ldsm_requests"):  # ldmatrix: ncu counts it apart from LDS
        count("ldmatrix instructions (LDSM)", "smem_ldsm_requests")
        count("  wavefronts", "smem_ldsm_wavefronts")
        count("  bank conflicts", "smem_ldsm_bank_conflicts")
    if p.get("smem_ldgsts_requests"):  # cp.async: its global side is in the global loads above
        count("cp.async instructions (LDGSTS; shared wavefronts not modelled)", "smem_ldgsts_requests")
        count("  global requests (lanes that read; in the global loads above)", "gmem_ldgsts_requests")
    table.add_row("compulsory DRAM bytes (inputs, output, passes the L2 loses)",
                  f"{p['dram_compulsory_bytes']:,}", COMPARED_WITH["dram_compulsory_bytes"])
    table.add_row("FLOPs", f"{p['flops']:,.0f}", "")
    table.add_row("arithmetic intensity (flop per compulsory DRAM byte)",
                  f"{p['arithmetic_intensity_flop_per_byte']:.2f}", "")
    return table


def instruction_table(rows: list[dict]) -> Table:
    """Every memory instruction, summed over the launch (rows: model.predict.instruction_table)."""
    table = Table(title="per instruction, summed over the launch", title_justify="left")
    for col in ("instruction", "space", "op", "bytes/lane", "requests", "sectors | wavefronts", "per request",
                "bank conflicts", "bytes requested"):
        table.add_column(col, justify="left" if col in ("instruction", "space", "op") else "right")
    for r in rows:
        moved = r["sectors"] if r["space"] == "global" else r["wavefronts"]
        per = f"{moved / r['requests']:.2f}" if r["requests"] else "-"
        conflicts = f"{r['bank_conflicts']:,}" if r["space"] == "shared" else "-"
        table.add_row(Text(r["name"]), r["space"], r["kind"], str(r["width"]), f"{r['requests']:,}", f"{moved:,}", per,
                      conflicts, f"{r['bytes_requested']:,}")
    return table
