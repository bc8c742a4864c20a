"""Markdown tables for the README and the results pages, generated from the committed CSVs (never
typed by hand).

The README and every page under docs/results/ hold generated blocks between `<!-- gpulab:NAME -->`
and `<!-- /gpulab:NAME -->` (NAME is <gpu>-<table>: h200-sgemm, h200-sgemm-headline, ...);
`gpulab readme` rewrites each block from the CSVs under results/<gpu>/ and leaves the hand-written
text around it alone. Every CSV and every file to update is read and checked before the first file
is written, and each file is replaced whole (atomically), so a damaged input changes nothing.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Callable

from gpulab.records.ceilings import FILE_NAME as CEILINGS_FILE
from gpulab.errors import GpulabError
from gpulab.experiments import all_experiments
from gpulab.experiments.suites import Suite, builtin_suites
from gpulab.quantities import (
    DRAM_TOLERANCE, FIDELITY_FILE, FIDELITY_REQUIRED_COLUMNS, PROFILE_FILE, SANITIZE_FILE, SANITIZE_REQUIRED_COLUMNS,
    TOOL_FAULT, UNMEASURABLE, held_exactly,
)
from gpulab.records import (BEST, RESULTS_ROOT, RUN_COLUMNS, RUN_KEY, cards_under, ceiling_notes, read_csv, read_text,
                            update_text)
from gpulab.report.picks import TOLERANCE, latest_runs, pick_accuracy
from gpulab.report.tables import best_per_shape

BLOCK_RE = re.compile(r"(<!-- gpulab:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /gpulab:(?P=name) -->)", re.S)
MARKER_RE = re.compile(r"<!-- (?P<close>/?)gpulab:(?P<name>[\w-]+) -->")


# What each kind of results file must hold for the tables built from it; anything less is damage
# (DamagedFile: which file, line and column), never an emptier table (a run CSV: records.RUN_COLUMNS).
CEILING_COLUMNS = ("ceiling", "gbps", "gflops")


def read_runs(csv_path: Path) -> list[dict]:
    """An experiment's results CSV (results/<gpu>/<experiment>.csv), checked."""
    return read_csv(csv_path, required=RUN_COLUMNS, need_rows=True)


def read_suite_runs(csv_path: Path) -> list[dict]:
    """A suite's results CSV (results/<gpu>/<experiment>-<suite>.csv), checked: runs with a `suite` column."""
    return read_csv(csv_path, required=RUN_COLUMNS + ("suite",), need_rows=True)


def suite_csvs(gpu_dir: Path) -> list[tuple[object, Suite, Path]]:
    """(experiment, suite, its CSV in gpu_dir, which may not exist yet) for every built-in suite and
    every experiment it is for."""
    return [(exp, suite, Path(gpu_dir) / suite.csv_name(exp.name))
            for suite in builtin_suites() for exp in all_experiments() if suite.experiments and suite.is_for(exp)]


def read_ceilings(csv_path: Path) -> list[dict]:
    return read_csv(csv_path, required=CEILING_COLUMNS, need_rows=True)


def read_fidelity(csv_path: Path) -> list[dict]:
    return read_csv(csv_path, required=FIDELITY_REQUIRED_COLUMNS, need_rows=True)


def read_profiles(csv_path: Path) -> list[dict]:
    """results/<gpu>/profile.csv (gpulab profile and compare), checked; it may hold no rows."""
    return read_csv(csv_path, required=RUN_KEY)


def read_sanitize(csv_path: Path) -> list[dict]:
    """results/<gpu>/sanitize.csv (gpulab sanitize), checked."""
    return read_csv(csv_path, required=SANITIZE_REQUIRED_COLUMNS, need_rows=True)


def results_files(gpu_dir: Path) -> dict[Path, Callable[[Path], list[dict]]]:
    """Every file of one card's folder that the README and the report read, with its reader."""
    wanted = {gpu_dir / CEILINGS_FILE: read_ceilings, gpu_dir / FIDELITY_FILE: read_fidelity,
              gpu_dir / PROFILE_FILE: read_profiles, gpu_dir / SANITIZE_FILE: read_sanitize}
    wanted |= {gpu_dir / f"{exp.name}.csv": read_runs for exp in all_experiments()}
    wanted |= {path: read_suite_runs for _, _, path in suite_csvs(gpu_dir)}
    return {path: reader for path, reader in wanted.items() if path.exists()}


def card_folders(results_root: Path) -> list[Path]:
    """results/<gpu>/ folders, every results file in them checked first (DamagedFile on the first
    damaged one), so that nothing is written from a damaged file."""
    results_root = Path(results_root)
    folders = cards_under(results_root)
    if not folders:  # missing or empty: the README and the report say the same
        raise GpulabError(f"no results under {results_root}/; run gpulab bench or gpulab run first"
                          + (", or pass --results" if results_root == RESULTS_ROOT else ""))
    for folder in folders:
        for path, reader in results_files(folder).items():
            reader(path)
    return folders


def _column(r: dict, merged: frozenset = frozenset()) -> str:
    """A table column: a variant at one config; a variant in `merged` (one config at each shape) and
    the best row are one column whatever they ran at each shape (config_lines and the best-per-shape
    lines below the table say what)."""
    if r["variant"] == BEST or r["variant"] in merged:
        return str(r["variant"])
    return f"{r['variant']} {r['params']}" if r.get("params") else str(r["variant"])


def one_config_per_shape(records: list[dict]) -> frozenset:
    """The variants that ran a single config at every shape they ran at: no params sweep anywhere, so
    one column each is enough, even where the config differs from shape to shape (a tuned rung's
    pick). A variant that ran several configs at one shape (TILE=8, 16, 32) keeps a column per config."""
    configs: dict[tuple, set] = {}
    for r in records:
        configs.setdefault((r["variant"], r["shape"]), set()).add(r.get("params") or "")
    several = {variant for (variant, _), params in configs.items() if len(params) > 1}
    return frozenset(variant for variant, _ in configs if variant not in several and variant != BEST)


def config_lines(records: list[dict], merged: frozenset) -> str:
    """Under the table: the config each merged variant ran, and at which shapes (in table order)."""
    out = []
    for variant in dict.fromkeys(r["variant"] for r in records if r["variant"] in merged):
        where: dict[str, list[str]] = {}
        for r in records:
            if r["variant"] == variant and r.get("params"):
                where.setdefault(r["params"], []).append(r["shape"])
        if not where:
            continue
        if len(where) == 1:
            out.append(f"- {variant} ran {next(iter(where))} at every shape")
        else:
            out.append(f"- {variant} ran " + "; ".join(f"{params} at {', '.join(shapes)}" for params, shapes in where.items()))
    return "\n".join(out)


def _fmt(value, rate: str) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if rate == "gflops" else f"{value:,.1f}"


def _column_order(records: list[dict], merged: frozenset = frozenset()) -> Callable[[str], tuple]:
    """Sort key of pivot's columns: the experiment's variants in its own order (the ladder, left to
    right), then variants it does not declare, then the best row, then the vendor libraries; a
    variant's configs by their params, numbers as numbers (TILE=8, 16, 32). So the order of the rows
    in the CSV, which each re-run of a bench changes, decides nothing."""
    names = {r.get("experiment") for r in records}
    exp = next((e for e in all_experiments() if e.name in names), None) if len(names) == 1 else None
    declared = {v.name: i for i, v in enumerate(exp.variants)} if exp else {}
    libraries = set(exp.vendor_baselines()) if exp else set()
    row_of = {_column(r, merged): r for r in records}

    def key(col: str) -> tuple:
        name, params = row_of[col]["variant"], row_of[col].get("params") or ""
        if name in declared:
            group, rank = 0, declared[name]
        else:
            group, rank = (2 if name == BEST else 3 if name in libraries else 1), 0
        return group, rank, name, _natural(params)
    return key


def _natural(text: str) -> tuple:
    """Text with its numbers compared as numbers: STRIDE=2 before STRIDE=16."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def pivot(records: list[dict], rate: str, merged: frozenset = frozenset()) -> str:
    """Rows: shapes. Columns: each variant/params (one per variant in `merged`, the best row one too;
    and library rows). Cells: the rate."""
    columns = sorted(dict.fromkeys(_column(r, merged) for r in records), key=_column_order(records, merged))
    shapes = list(dict.fromkeys(r["shape"] for r in records))
    unit = "GFLOP/s" if rate == "gflops" else "GB/s, % of copy ceiling"
    lines = [f"| shape ({unit}) | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for shape in shapes:
        cells = []
        for col in columns:
            row = next((r for r in records if r["shape"] == shape and _column(r, merged) == col), None)
            if row is None:
                cells.append("")
            elif row.get("expected_wrong"):
                cells.append(f"{_fmt(row.get(rate), rate)} (wrong: {row.get('wrong_count')})")
            elif row.get("skip_reason"):
                cells.append("skipped")
            elif rate == "gbps" and row.get("pct_of_ceiling") is not None:
                cells.append(f"{_fmt(row.get(rate), rate)} ({row['pct_of_ceiling']:.0f}%)")
            else:
                cells.append(_fmt(row.get(rate), rate))
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def best_lines(records: list[dict], baseline: str) -> str:
    out = []
    for b in best_per_shape(records):
        if b["time_ms"] is None:  # no row of the shape the sanitizer gate found clean
            out.append(f"- {b['shape']}: {b['best']}")
            continue
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


def latest_in_csv_order(every: list[dict]) -> list[dict]:
    """latest_runs, its shapes in the order of the whole CSV (a shape's first rows may be ones a
    later run replaced)."""
    first_seen = {shape: i for i, shape in enumerate(dict.fromkeys(r["shape"] for r in every))}
    return sorted(latest_runs(every), key=lambda r: first_seen[r["shape"]])


def experiment_block(csv_path: Path, baseline: str, rate: str, variants: tuple[str, ...] = ()) -> str:
    """The pivot of one experiment's CSV (only `variants` when given) over each variant's latest run
    at each shape, its best-per-shape lines and where it was measured."""
    records = latest_in_csv_order(read_runs(csv_path))
    if variants:
        records = [r for r in records if r["variant"] in variants]
    merged = one_config_per_shape(records)
    configs = config_lines(records, merged)
    parts = [pivot(records, rate, merged), "", *([configs, ""] if configs else []), best_lines(records, baseline), "",
             provenance(records)]
    return "\n".join(parts) + "\n"


def ladder_block(csv_path: Path, experiment, shape_label: str) -> str:
    """One row per variant at one shape (its fastest correct config): what changed, registers,
    GFLOP/s, % of the vendor library and % of the card's measured compute ceiling (the experiment's
    own: FP32 FMA for sgemm, the tensor rate for gemm_bf16; a rung held to another, as sgemm's v14 to
    a third of the TF32 rate, names it in its cell) -- the ladder, read top to bottom."""
    records = [r for r in read_runs(csv_path) if r["shape"] == shape_label]
    lines = ["| rung | what changed | params | regs | blocks/SM (calculated) | GFLOP/s | % of cuBLAS | % of ceiling |",
             "|---|---|---|---|---|---|---|---|"]
    rungs = []
    for v in (v for v in experiment.variants if v.rung):
        rows = [r for r in records if r["variant"] == v.name and r.get("correct") and r.get("time_ms")]
        if rows:
            rungs.append((v, max(rows, key=lambda r: r.get("gflops") or 0)))
    lib = next((r for r in records if r["variant"] in experiment.vendor_baselines() and r.get("gflops")), None)
    # A rung held to another ceiling than the column's says which (records.ceiling_notes).
    notes = ceiling_notes([best for _, best in rungs] + ([lib] if lib else []))
    for (v, best), of in zip(rungs, notes):
        pct, ceil = best.get("pct_of_cublas"), best.get("pct_of_ceiling")
        lines.append(f"| {v.name} | {v.summary} | {best.get('params') or ''} | {best.get('reg_per_thread', '')} "
                     f"| {blocks_per_sm(best)} | {best['gflops']:,.0f} | {_pct(pct)} | {_pct(ceil)}{of} |")
    if lib:
        lines.append(f"| {lib['variant']} | vendor library | | | | {lib['gflops']:,.0f} | 100.0% "
                     f"| {_pct(lib.get('pct_of_ceiling'))}{notes[-1]} |")
    return "\n".join(lines) + f"\n\nAt {shape_label}. " + provenance(records) + "\n"


def _pct(value) -> str:
    return "" if value is None else f"{value:.1f}%"


def headline_block(csv_path: Path, experiment) -> str:
    """The README's table of one experiment: per shape, gpulab's best row (the tune's pick, where the
    experiment has one; else its fastest correct variant) against the vendor library and the card's
    measured ceiling, from each variant's latest run there. Where some shapes have a best row, only
    those: the others were benched for a few variants (the best-row model's calibration rows) and
    would read as gpulab's best though nobody asked for it there; a line counts them. The full
    tables are on its results page."""
    records = latest_in_csv_order(read_runs(csv_path))
    rate = "gflops" if experiment.bound == "compute" else "gbps"
    libraries = set(experiment.vendor_baselines())
    timed = [r for r in records
             if r.get("correct") and r.get("time_ms") and r.get(rate) and not r.get("expected_wrong")]
    library = next((r["variant"] for r in timed if r["variant"] in libraries), None)
    unit = "GFLOP/s" if rate == "gflops" else "GB/s"
    head = ["shape", "gpulab's best", unit, *([f"{library} {unit}", f"% of {library}"] if library else []),
            "% of ceiling"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    shapes = list(dict.fromkeys(r["shape"] for r in records))
    with_best = [shape for shape in shapes if any(r["shape"] == shape and r["variant"] == BEST for r in timed)]
    left_out = len(shapes) - len(with_best) if with_best else 0
    for shape in with_best or shapes:
        here = [r for r in timed if r["shape"] == shape]
        best = [r for r in here if r["variant"] == BEST]
        own = best or [r for r in here if r["variant"] not in libraries]
        if not own:
            continue
        top = max(own, key=lambda r: r[rate])
        # The best row names what it ran in `picked` ("v14 (tuned at 4096x4096x4096)"); its params
        # are on the results page.
        ran = str(top.get("picked") or "").split(" ")[0] if top["variant"] == BEST else _column(top)
        cells = [str(shape), ran, _fmt(top[rate], rate)]
        if library:
            lib = next((r for r in here if r["variant"] == library), None)
            cells += [_fmt(lib[rate], rate) if lib else "", _pct(top.get("pct_of_cublas"))]
        cells.append(_ceiling_cell(top))
        lines.append("| " + " | ".join(cells) + " |")
    if left_out:
        lines += ["", f"{left_out} more shape{'s' if left_out > 1 else ''} benched without a best row "
                      "(a few variants each: the best-row model's calibration), on the results page."]
    return "\n".join(lines) + "\n\n" + provenance(records) + "\n"


def _ceiling_cell(r: dict) -> str:
    """'% of ceiling (name)': the copy bandwidth where the shape is memory-bound (pct_of_copy, a GEMV
    against the card's copy rate), else the record's own ceiling."""
    if r.get("pct_of_copy") is not None:
        return f"{r['pct_of_copy']:.1f}% (copy)"
    if r.get("pct_of_ceiling") is None:
        return ""
    return f"{r['pct_of_ceiling']:.1f}% ({r.get('ceiling') or '?'})"


def best_block(csv_path: Path) -> str | None:
    """One line per shape: what gpulab's best row ran there (gpulab.jobs.best), its rate (GFLOP/s, or
    GB/s for an experiment that moves memory), % of cuBLAS and % of its ceiling (the copy
    ceiling where the shape is memory-bound); None when the CSV has no best row."""
    records = read_runs(csv_path)
    best = [r for r in records if r["variant"] == BEST and r.get("correct") and r.get("time_ms")]
    if not best:
        return None
    rate = "gflops" if all(r.get("gflops") is not None for r in best) else "gbps"
    vendor = any(r.get("pct_of_cublas") is not None for r in best)  # none beside a copy or a stencil
    head = ["shape", "gpulab best ran", "GFLOP/s" if rate == "gflops" else "GB/s"] + ["% of cuBLAS"] * vendor + ["% of ceiling"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in best:
        pct = r.get("pct_of_cublas")
        why = f" ({_cell_text(r['chosen_by'])})" if r.get("chosen_by") else ""  # rows before chosen_by: in `picked`
        cells = [str(r["shape"]), f"{r.get('picked') or ''}{why} {r.get('params') or ''}", _fmt(r.get(rate), rate)]
        cells += ["" if pct is None else f"{pct:.1f}%"] * vendor + [_ceiling_cell(r)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + provenance(records) + "\n"


def blocks_per_sm(r: dict) -> str:
    """Theoretical blocks per SM of a record, as the lab recorded it ('' where it did not)."""
    value = r.get("theoretical_blocks_per_sm")
    return "" if value is None else str(value)


def ceilings_block(csv_path: Path) -> str:
    rows = read_ceilings(csv_path)
    lines = ["| ceiling | GB/s | GFLOP/s | what |", "|---|---|---|---|"]
    for r in rows:
        gbps = f"{r['gbps']:,.0f}" if r.get("gbps") else ""
        gflops = f"{r['gflops']:,.0f}" if r.get("gflops") else ""
        lines.append(f"| {r['ceiling']} | {gbps} | {gflops} | {r.get('what', '')} |")
    return "\n".join(lines) + "\n\n" + provenance(rows) + "\n"


def fidelity_block(csv_path: Path) -> str:
    """How exactly the access models predicted the card's counters: per counted quantity, the runs
    where prediction and ncu agree; then every disagreement, one line each."""
    held = held_exactly()
    rows = read_fidelity(csv_path)
    judged = [r for r in rows if r.get("quantity") in held and r.get("exact") is not None]
    runs = {tuple(r.get(k) for k in RUN_KEY) for r in rows}
    lines = ["| quantity | runs exact | differs |", "|---|---|---|"]
    for q in held:
        mine = [r for r in judged if r["quantity"] == q]
        if not mine:
            continue
        exact = sum(1 for r in mine if r["exact"] is True)
        lines.append(f"| {q} | {exact} of {len(mine)} | {len(mine) - exact or ''} |")
    differ = [r for r in judged if r.get("verdict") == "differs"]
    by_quantity: dict[str, list[dict]] = {}
    for r in differ:
        by_quantity.setdefault(r["quantity"], []).append(r)
    notes = []
    for q, mine in by_quantity.items():
        shown = ", ".join(f"{r['experiment']} {r['variant']} {r['shape']} ({r['predicted']:,.0f} -> {r['measured']:,.0f}"
                          + (f"; {r['note']}" if r.get("note") else "") + ")"
                          for r in mine[:6])
        more = f" and {len(mine) - 6} more" if len(mine) > 6 else ""
        notes.append(f"- {q}, predicted -> measured: {shown}{more}")
    dram = [r for r in rows if r.get("quantity") == "dram_read_bytes" and str(r.get("verdict", "")).startswith(("within", "outside"))]
    within = sum(1 for r in dram if str(r["verdict"]).startswith("within"))
    text = "\n".join(lines) + f"\n\n{len(runs)} runs. DRAM bytes read within {DRAM_TOLERANCE:.0%} of the compulsory bytes in {within} of " \
        f"the {len(dram)} runs whose inputs exceed the L2.{_hardware_line(rows)}{_unmeasurable_line(rows)}\n"
    if notes:
        text += "\nWhere they differ:\n\n" + "\n".join(notes) + "\n"
    r = next((r for r in rows if r.get("gpu")), {})
    dates = sorted({str(r.get("date", ""))[:10] for r in rows if r.get("date")})
    return text + (f"\n_{r.get('gpu', '?')}, driver {r.get('driver', '?')}, NVRTC {r.get('nvrtc', '?')}, "
                   f"Nsight Compute {r.get('ncu_version', '?')}, {', '.join(dates) or '?'}._\n")


def _unmeasurable_line(rows: list[dict]) -> str:
    """Where a derived count's inputs contradicted each other (gpulab.quantities.unmeasurable): how
    many rows, not judged, and of which quantities."""
    gone = [r for r in rows if r.get("verdict") == UNMEASURABLE]
    if not gone:
        return ""
    quantities = ", ".join(dict.fromkeys(r["quantity"] for r in gone))
    runs = len({tuple(r.get(k) for k in RUN_KEY) for r in gone})
    return (f" Not judged, in {runs} runs: {quantities}, whose hardware ideal exceeded the instrumented wavefronts "
            "(a count below zero is never reported; the note gives both numbers).")


def fidelity_headline_block(csv_path: Path) -> str:
    """One sentence for the README: how many judged counts equalled the access models' predictions."""
    held = held_exactly()
    rows = read_fidelity(csv_path)
    judged = [r for r in rows if r.get("quantity") in held and r.get("exact") is not None]
    runs = {tuple(r.get(k) for k in RUN_KEY) for r in rows}
    exact = sum(1 for r in judged if r["exact"] is True)
    kernels = {(r.get("experiment"), r.get("variant")) for r in rows}
    quantities = {r["quantity"] for r in judged}
    return (f"Of the {len(judged):,} counts held to the prediction exactly ({len(quantities)} counted quantities in "
            f"{len(runs)} profiled runs of {len(kernels)} kernels), {exact:,} equal it and {len(judged) - exact} "
            "differ.\n")


def _hardware_line(rows: list[dict]) -> str:
    """The hardware counters recorded beside the instrumented counts they are not judged by."""
    hw = [r for r in rows if str(r.get("quantity", "")).startswith("hw_") and r.get("ratio") is not None]
    if not hw:
        return ""
    moved = [r for r in hw if r["measured"] != r["predicted"]]
    off = [r["ratio"] - 1 for r in moved if math.isfinite(r["ratio"])]
    from_zero = len(moved) - len(off)  # a count the model puts at 0 has no ratio to spread over
    spread = ", ".join(filter(None, (f"{min(off):+.2%} to {max(off):+.2%}" if off else "",
                                     f"{from_zero} of them off a prediction of 0" if from_zero else "")))
    return (" Store sectors, shared requests and shared wavefronts are ncu's instrumented counts; the hardware "
            f"counters of the same things (hw_*), recorded beside them, read the predicted number in "
            f"{len(hw) - len(moved)} of {len(hw)} cases and moved off it in {len(moved)}"
            + (f" ({spread})." if spread else "."))


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def sanitize_block(csv_path: Path) -> str:
    """Per compute-sanitizer tool: how many correct runs it found clean, and what it said of each
    demonstration (a kernel kept wrong on purpose, judged by its race alone)."""
    rows = read_sanitize(csv_path)
    tools = list(dict.fromkeys(r["tool"] for r in rows))
    # A fault inside the tool (TOOL_FAULT, gpulab.jobs.sanitize) is neither clean nor the kernel's error.
    faults = any(r["verdict"] == TOOL_FAULT for r in rows)
    lines = ["| tool | correct runs clean |" + (" tool faults (not the kernel's) |" if faults else "")
             + " demonstrations |", "|---|---|" + ("---|" if faults else "") + "---|"]
    for tool in tools:
        mine = [r for r in rows if r["tool"] == tool]
        correct = [r for r in mine if not r.get("expected_wrong")]
        clean = sum(1 for r in correct if r["verdict"] == "clean")
        demos = "; ".join(f"{_column(r)} {r['shape']}: {r['verdict']}, {_count(r.get('errors') or 0, 'report')}"
                          for r in mine if r.get("expected_wrong"))
        tool_faults = f" {sum(1 for r in correct if r['verdict'] == TOOL_FAULT)} |" if faults else ""
        lines.append(f"| {tool} | {clean} of {len(correct)} |{tool_faults} {demos} |")
    runs = {(r["experiment"], r["variant"], r.get("params"), r["shape"]) for r in rows}
    return ("\n".join(lines) + f"\n\n{len(runs)} runs: every variant and every tuned config at a small ragged "
            f"shape.\n\n{provenance(rows)}\n")


# -- a suite's shapes ----------------------------------------------------------------------------------
def suite_block(csv_path: Path, experiment, suite: Suite) -> str:
    """One experiment on one suite (its page's block): per shape, in the suite's order, the suite's
    columns (layer), the best row (what it ran and why: chosen_by), its rate, % of the vendor library
    and % of the ceiling that binds (the copy on memory-bound shapes); then how often the pick was
    within 5% of the fastest kernel timed beside it (report.picks). 'Not run yet' where the card has no
    CSV for it: nothing here is typed by hand."""
    command = f"`gpulab bench {experiment.name} --suite {suite.name}`"
    if not Path(csv_path).exists():
        return f"Not run yet on this card: {command} writes {Path(csv_path).name}.\n"
    rows = latest_in_csv_order(read_suite_runs(csv_path))
    found = suite.shapes(experiment)
    text_columns = list(dict.fromkeys(k for s in found for k in s.columns if k != "suite"))
    rate = "gflops" if experiment.bound == "compute" else "gbps"
    unit = "GFLOP/s" if rate == "gflops" else "GB/s"
    libraries = set(experiment.vendor_baselines())
    head = [*text_columns, "shape", "best ran", "chosen by", unit, "% of vendor", "% of ceiling"]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for entry in found:
        label = entry.shape.label
        best = next((r for r in rows if r["shape"] == label and r["variant"] == BEST), None)
        cells = [str(entry.columns.get(c, "")) for c in text_columns] + [label]
        if best is None:
            lines.append("| " + " | ".join(cells + ["not run yet", "", "", "", ""]) + " |")
            continue
        ran = f"{best.get('picked') or ''} {best.get('params') or ''}".strip()
        if not (best.get("correct") and best.get("time_ms")):
            lines.append("| " + " | ".join(cells + [ran, _cell_text(best.get("chosen_by")),
                                                   f"did not pass: {_cell_text(best.get('skip_reason'))}", "", ""]) + " |")
            continue
        vendor = _pct(best.get("pct_of_cublas")) if libraries else ""
        lines.append("| " + " | ".join(cells + [ran, _cell_text(best.get("chosen_by")), _fmt(best.get(rate), rate),
                                               vendor, _ceiling_cell(best)]) + " |")
    accuracy = pick_accuracy(rows, libraries=tuple(libraries))
    return ("\n".join(lines) + f"\n\nSuite {suite.name}: {suite.title}. Written by {command}. "
            f"Of the picks: {accuracy.line()}.\n\n{provenance(rows)}\n")


def _cell_text(value) -> str:
    """Text that is safe inside a table cell."""
    return str(value or "").replace("|", "/").replace("\n", " ")


def suite_summary_block(gpu_dir: Path, suite: Suite) -> str:
    """The README's line per experiment of a suite: shapes run, the best row against the vendor
    library (the geometric mean and the range of its %), and how often the pick was within 5% of the
    fastest kernel timed beside it; 'not run yet' where the card has no CSV for it."""
    lines = [f"| experiment | shapes run | best row, % of vendor (geomean, range) | pick within {TOLERANCE:.0%} of the fastest |",
             "|---|---|---|---|"]
    dates = []
    for exp, mine, path in suite_csvs(gpu_dir):
        if mine.name != suite.name:
            continue
        if not path.exists():
            lines.append(f"| {exp.name} | not run yet on this card (`gpulab bench {exp.name} --suite {suite.name}`) | | |")
            continue
        rows = latest_in_csv_order(read_suite_runs(path))
        best = [r for r in rows if r["variant"] == BEST and r.get("correct") and r.get("time_ms")]
        pcts = [r["pct_of_cublas"] for r in best if r.get("pct_of_cublas")]
        spread = (f"{math.exp(sum(math.log(p) for p in pcts) / len(pcts)):.0f}% ({min(pcts):.0f}-{max(pcts):.0f}%)"
                  if pcts else "")
        accuracy = pick_accuracy(rows, libraries=tuple(exp.vendor_baselines()))
        judged = (f"{accuracy.within} of {accuracy.judged} ({100 * accuracy.fraction:.0f}%)" if accuracy.judged
                  else "no shape with another kernel timed")
        shapes = len({r["shape"] for r in best})
        lines.append(f"| {exp.name} | {shapes} of {len(mine.shapes(exp))} | {spread} | {judged} |")
        dates += [r for r in rows if r.get("date")]
    tail = f"\n\n{provenance(dates)}" if dates else ""
    return "\n".join(lines) + f"\n\nSuite {suite.name}: {suite.title}.{tail}\n"


def readme_blocks(results_root: Path) -> dict[str, str]:
    """Every generated block the results allow, by name (<GPU>-<experiment>, <GPU>-ceilings, ...).
    Every results file is checked before the first block is built (card_folders)."""
    blocks = {}
    for gpu_dir in card_folders(results_root):
        if (gpu_dir / CEILINGS_FILE).exists():
            blocks[f"{gpu_dir.name}-ceilings"] = ceilings_block(gpu_dir / CEILINGS_FILE)
        if (gpu_dir / SANITIZE_FILE).exists():
            blocks[f"{gpu_dir.name}-sanitize"] = sanitize_block(gpu_dir / SANITIZE_FILE)
        if (gpu_dir / FIDELITY_FILE).exists():
            blocks[f"{gpu_dir.name}-fidelity"] = fidelity_block(gpu_dir / FIDELITY_FILE)
            blocks[f"{gpu_dir.name}-fidelity-headline"] = fidelity_headline_block(gpu_dir / FIDELITY_FILE)
        for exp in all_experiments():
            csv_path = gpu_dir / f"{exp.name}.csv"
            if csv_path.exists():
                rate = "gflops" if exp.bound == "compute" else "gbps"
                blocks[f"{gpu_dir.name}-{exp.name}"] = experiment_block(
                    csv_path, exp.baseline, rate, exp.readme_variants)
                blocks[f"{gpu_dir.name}-{exp.name}-headline"] = headline_block(csv_path, exp)
                if exp.headline_shape:
                    blocks[f"{gpu_dir.name}-{exp.name}-ladder"] = ladder_block(
                        csv_path, exp, exp.shape(*exp.headline_shape).label)
                if (best := best_block(csv_path)) is not None:
                    blocks[f"{gpu_dir.name}-{exp.name}-best"] = best
        for exp, suite, csv_path in suite_csvs(gpu_dir):
            blocks[f"{gpu_dir.name}-{exp.name}-suite-{suite.name}"] = suite_block(csv_path, exp, suite)
        for suite in builtin_suites():
            blocks[f"{gpu_dir.name}-suite-{suite.name}-headline"] = suite_summary_block(gpu_dir, suite)
    return blocks


def fill_blocks(text: str, blocks: dict[str, str]) -> tuple[str, list[str]]:
    """`text` with each generated block it holds rewritten from `blocks` (a block it names that
    `blocks` lacks stays as it is), and the names rewritten."""
    done: list[str] = []

    def replace(m: re.Match) -> str:
        name = m.group("name")
        if name not in blocks:
            return m.group(0)
        done.append(name)
        return m.group(1) + blocks[name] + m.group(4)

    return BLOCK_RE.sub(replace, text), done


def check_blocks(path: Path, text: str) -> None:
    """Refuse (GpulabError, with the file, line and column of the marker) a file whose generated
    blocks BLOCK_RE could not rewrite whole: a block opened inside another (the outer rewrite would
    swallow it), one never closed or closed twice (it would be skipped), an opening marker with text
    after it on its line (never matched)."""
    def where(m: re.Match) -> str:
        return f"{text.count(chr(10), 0, m.start()) + 1}:{m.start() - text.rfind(chr(10), 0, m.start())}"

    def refuse(m: re.Match, problem: str) -> None:
        raise GpulabError(f"{path}:{where(m)}: {m.group(0)} {problem}; fix the markers (each block is "
                          "<!-- gpulab:NAME --> on its own line, the table, then <!-- /gpulab:NAME -->), nothing was written")

    markers = list(MARKER_RE.finditer(text))
    opened: re.Match | None = None  # the block open now
    for i, m in enumerate(markers):
        name = m.group("name")
        if m.group("close"):
            if opened is None or opened.group("name") != name:
                refuse(m, "closes a block that is not open" + (f" ({opened.group(0)} is, since line "
                                                               f"{where(opened).split(':')[0]})" if opened else ""))
            opened = None
            continue
        if opened is not None:
            if not any(later.group("close") and later.group("name") == opened.group("name") for later in markers[i:]):
                refuse(opened, f"is never closed (the next block opens on line {where(m).split(':')[0]})")
            refuse(m, f"opens inside {opened.group(0)} (opened on line {where(opened).split(':')[0]}), which its "
                      "rewrite would replace")
        if not text.startswith("\n", m.end()):
            refuse(m, "must end its line")
        opened = m
    if opened is not None:
        refuse(opened, "is never closed")


def update_readme(readme: Path, blocks: dict[str, str]) -> list[str]:
    """Rewrite the named generated blocks of one markdown file in place; returns the names rewritten.
    The file is read and replaced whole under its lock, so two runs updating different blocks both
    land."""
    done: list[str] = []

    def change(text: str) -> str:
        check_blocks(readme, text)
        new, names = fill_blocks(text, blocks)
        done[:] = names
        return new

    update_text(readme, change)
    return done


def page_files(pages: Path) -> list[Path]:
    """The results pages: every .md file in `pages` (docs/results/), in name order."""
    if pages.exists() and not pages.is_dir():
        raise GpulabError(f"{pages} is a file; pass the folder of results pages, e.g. --pages docs/results")
    return sorted(pages.glob("*.md")) if pages.is_dir() else []


def update_pages(files: list[Path], blocks: dict[str, str]) -> dict[Path, list[str]]:
    """Rewrite the generated blocks of every file (the README and the results pages): each file is
    read first (one that cannot be, or is not UTF-8 text, stops the command before anything is
    written), then each is replaced whole. Returns the block names rewritten in each file."""
    for path in files:
        check_blocks(path, read_text(path))
    return {path: update_readme(path, blocks) for path in files}


def unplaced(blocks: dict[str, str], done: dict[Path, list[str]]) -> list[str]:
    """The blocks the results allow that no file holds a place for (a new card's, say)."""
    placed = {name for names in done.values() for name in names}
    return [name for name in blocks if name not in placed]
