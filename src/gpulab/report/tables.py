"""Terminal tables (rich) built from records."""

from __future__ import annotations

import math
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from gpulab.gpu.nvml import thermal_or_power
from gpulab.quantities import CLEAN, SANITIZED, TOOL_FAULT, may_be_best
from gpulab.records import ceiling_notes, status


def _num(value, fmt: str) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return format(value, fmt)


def _status(r: dict) -> str:
    return {
        "did not finish": lambda: f"[red]{escape(str(r['skip_reason']))}[/]",
        "expected wrong": lambda: f"[magenta]expected wrong[/]: {r.get('wrong_count', '?')} wrong",
        "skipped": lambda: f"[yellow]skipped[/]: {escape(str(r['skip_reason']))}",
        "wrong": lambda: "[red]WRONG[/]",
        "ok": lambda: f"[green]ok[/] {_num(r.get('max_rel_err'), '.1e')}",
        "": lambda: "",
    }[status(r)]()


def spill_note(r: dict) -> str:
    """A kernel that spills registers to local memory runs slower than its numbers suggest: say so
    wherever its resources are shown (the built-ins are held to no spills by a CPU test)."""
    stores, loads = r.get("spill_stores_bytes") or 0, r.get("spill_loads_bytes") or 0
    if not (stores or loads):
        return ""
    return f"spills registers: {stores} B stored, {loads} B loaded per thread (local memory)"


def noise_text(r: dict) -> str:
    """How far the median's 95% interval reaches, '±0.31%'; with ' budget' where the row's budget ran
    out before it was within the noise target (gpulab.gpu.timing), '' for a row not timed."""
    rel, hit = r.get("rel_noise"), r.get("hit_budget")
    text = f"±{100 * rel:.2f}%" if isinstance(rel, (int, float)) else ""
    return (text + " budget").strip() if hit else text


def throttle_note(r: dict) -> str:
    """The flag of a row timed under a heat or power slowdown (gpulab.gpu.nvml.THERMAL_OR_POWER):
    its time is the card's state as much as the kernel's. And, for a row timed again after a
    cool-down (--retime-throttled), what the first timing saw."""
    slowed = thermal_or_power(r.get("throttle"))
    note = f"throttled while timed: {', '.join(slowed)}" if slowed else ""
    if r.get("retimed"):
        note = _notes(note, f"retimed after a cool-down (the first timing ran under {r['retimed']})")
    return note


def card_state(card: dict) -> str:
    """The card while timed, in words: '1860 MHz, 655.0 W, 51 C, slowed by sw_power_cap' ('' without NVML)."""
    words = [f"{card[key]} {unit}" for key, unit in (("sm_clock_mhz", "MHz"), ("power_w", "W"), ("temp_c", "C"))
             if card.get(key) is not None]
    return ", ".join(words + ([f"slowed by {card['throttle']}"] if card.get("throttle") else []))


def _notes(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


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
    has_copy = any(r.get("pct_of_copy") is not None for r in records)  # memory-bound shapes (gpulab.records.ceilings)
    if has_copy:
        table.add_column("% copy", justify="right")
    table.add_column("x base", justify="right")
    has_noise = any(noise_text(r) for r in records)
    if has_noise:
        table.add_column("± 95%", justify="right")
    has_clock = any(r.get("sm_clock_mhz") for r in records)
    if has_clock:
        table.add_column("SM MHz", justify="right")
    table.add_column("regs", justify="right")
    table.add_column("check")
    has_ceiling = any(r.get("pct_of_ceiling") is not None for r in records)
    notes = ceiling_notes(records)
    for r, note in zip(records, notes):
        # gpulab's best row names what it runs: 'best: sk (tuned at 1x8192x8192)'
        name = f"{r['variant']}: {r['picked']}" if r.get("picked") else r["variant"]
        row = [name, r.get("params") or "", r["shape"], _num(r.get("time_ms"), ".4f")]
        if compute:
            row += [_num(r.get("gflops"), ",.0f"), _num(r.get("pct_of_cublas"), ".1f")]
        row.append(_num(r.get("gbps"), ",.1f"))
        if has_ceiling:
            row.append(_num(r.get("pct_of_ceiling"), ".1f") + note)
        if has_copy:
            row.append(_num(r.get("pct_of_copy"), ".1f"))
        spills = f"[yellow]{spill_note(r)}[/]" if spill_note(r) else ""
        plan = f"[yellow]{escape(r['plan_note'])}[/]" if r.get("plan_note") else ""
        throttled = f"[red]{throttle_note(r)}[/]" if thermal_or_power(r.get("throttle")) else throttle_note(r)
        if r.get(SANITIZED) and r[SANITIZED] != CLEAN:  # the gate's word: why it is never best, or not checked
            plan = _notes(plan, f"[yellow]{escape(str(r[SANITIZED]))}[/]")
        row.append(_num(r.get("speedup_vs_baseline"), ".2f"))
        if has_noise:
            noise = noise_text(r)
            row.append(f"[yellow]{noise}[/]" if r.get("hit_budget") else noise)
        if has_clock:
            row.append(_num(r.get("sm_clock_mhz"), "d"))
        row += [_num(r.get("reg_per_thread"), "d"), _notes(_status(r), spills, plan, throttled)]
        table.add_row(*row)
    return table


def resources_table(records: list[dict], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for col in ("experiment", "variant", "params", "regs", "smem B", "spill st B", "spill ld B",
                "stack B", "barriers", "blocks/SM", "occupancy", "limited by", "note"):
        table.add_column(col, justify="left" if col in ("experiment", "variant", "params", "limited by", "note")
                         else "right")
    for r in records:
        spills = r.get("spill_stores_bytes")
        occ = r.get("theoretical_occupancy_pct")
        table.add_row(
            r["experiment"], r["variant"], r.get("params") or "",
            _num(r.get("reg_per_thread"), "d"), _num(r.get("smem_static_bytes"), "d"),
            ("[red]" if spills else "") + _num(spills, "d"), _num(r.get("spill_loads_bytes"), "d"),
            _num(r.get("stack_frame_bytes"), "d"), _num(r.get("barriers"), "d"),
            _num(r.get("theoretical_blocks_per_sm"), "d"), "" if occ is None else f"{occ:g}%",
            r.get("occupancy_limiter") or "", escape(_notes(r.get("skip_reason") or "", spill_note(r), r.get("plan_note") or "")),
        )
    return table


def _winner(r: dict) -> str:
    """'t4 BM=128 ...'; where gpulab's best row won, what it ran and why: 't2 (tuned at 512x512x512) BM=64 ...'."""
    name = r.get("picked") or str(r["variant"])
    return f"{name} {r.get('params') or ''}".strip()


def best_per_shape(records: list[dict], libraries: tuple[str, ...] = ("cublas",)) -> list[dict]:
    """The Shared Memory Tiling wiki page's summary (docs/SOURCES.md): for each shape, the fastest correct variant and its speedup over the
    baseline variant's best config. Library rows (cuBLAS) are reported beside, not as winners. A row
    a sanitizer tool found errors in (gpulab.jobs.clean) is never the best: the faster ones passed
    over are listed in `passed_over` (variant and why), and where no row may be best `best` says so
    and the numbers are left out. A best row the tools could not check says so beside its name."""
    out = []
    shapes = list(dict.fromkeys(r["shape"] for r in records))
    for shape in shapes:
        rows = [r for r in records if r["shape"] == shape and r.get("time_ms") and r.get("correct")
                and not r.get("expected_wrong")]
        own = [r for r in rows if r["variant"] not in libraries]
        if not own:
            continue
        vetted = [r for r in own if may_be_best(r)]
        best = min(vetted, key=lambda r: r["time_ms"]) if vetted else None
        passed = sorted((r for r in own if not may_be_best(r) and (best is None or r["time_ms"] < best["time_ms"])),
                        key=lambda r: r["time_ms"])
        passed_over = [f"{_winner(r)}: {r[SANITIZED]}" for r in passed]
        if best is None:
            out.append({"shape": shape, "best": f"none sanitized clean ({passed_over[0]})", "time_ms": None,
                        "speedup": None, "pct_of_cublas": None, "passed_over": passed_over})
            continue
        unchecked = f" ({best[SANITIZED]})" if best.get(SANITIZED) and best[SANITIZED] != CLEAN else ""
        out.append({
            "shape": shape,
            "best": _winner(best) + unchecked,
            "time_ms": best["time_ms"],
            "speedup": best.get("speedup_vs_baseline"),
            "pct_of_cublas": best.get("pct_of_cublas"),
            "passed_over": passed_over,
        })
    return out


def summary_table(records: list[dict], baseline: str, title: str,
                  libraries: tuple[str, ...] = ("cublas",)) -> Table | None:
    rows = best_per_shape(records, libraries)
    if not rows:
        return None
    table = Table(title=title, title_justify="left")
    passed = any(r["passed_over"] for r in rows)
    for col in ("shape", "best variant", "time ms", f"speedup vs {baseline}", "% cuBLAS",
                *(("faster, not best (sanitizer)",) if passed else ())):
        table.add_column(col, justify="left" if col in ("shape", "best variant") or col.startswith("faster") else "right")
    for r in rows:
        cells = [r["shape"], r["best"], _num(r["time_ms"], ".4f"), _num(r["speedup"], ".2f") + "x"
                 if r["speedup"] else "", _num(r["pct_of_cublas"], ".1f")]
        if passed:
            cells.append(f"[yellow]{escape('; '.join(r['passed_over']))}[/]")
        table.add_row(*cells)
    return table


def experiment_table(exp) -> Table:
    """`gpulab list`: an experiment's variants with their params and files, then its vendor baselines."""
    table = Table(title=f"{exp.name}: {exp.title}  (shape {'x'.join(exp.dims)}, each 1..{exp.max_dim})",
                  title_justify="left")
    for col in ("variant", "what it is", "params (default first, then choices)", "file"):
        table.add_column(col)
    for v in exp.variants:
        params = "; ".join(
            f"{p.name}={p.default} of {','.join(map(str, p.choices))}" for p in v.params) or "-"
        note = " [magenta](demonstration: expected wrong)[/]" if v.expected_wrong else ""
        note += f" [yellow]({v.arch_label}: {v.min_sm_for})[/]" if v.min_sm else ""
        # a user's own kernel brings its summary and file name: text, never rich markup
        table.add_row(v.name, escape(v.summary) + note, params, escape(_file_label(exp, v)))
    for lib in exp.vendor_baselines():
        table.add_row(lib, "vendor library baseline, timed by the same harness", "-", "-")
    return table


def _file_label(exp, variant) -> str:
    """The variant's file as its experiment's folder sees it; a file from elsewhere (--kernel) in full."""
    source = exp.source(variant)
    return source.name if source.parent == exp.directory else str(source)


def ceilings_table(ceilings) -> Table:
    """`gpulab ceilings`: every ceiling of a gpulab.records.ceilings.Ceilings, titled with its card, driver and date."""
    first = ceilings.rows[0]
    table = Table(title=f"Ceilings of {first.get('gpu')} (driver {first.get('driver')}, {first.get('date')})",
                  title_justify="left")
    # The SM clock: the median while timed (files written before gpulab.gpu.nvml: read right after).
    for col in ("ceiling", "GB/s", "GFLOP/s", "time ms", "SM MHz", "what"):
        table.add_column(col, justify="left" if col in ("ceiling", "what") else "right")
    for r in ceilings.rows:
        slowed = thermal_or_power(r.get("throttle"))
        table.add_row(r["ceiling"], f"{r['gbps']:,.0f}" if r.get("gbps") else "",
                      f"{r['gflops']:,.0f}" if r.get("gflops") else "", f"{r['time_ms']:.4f}",
                      str(r.get("sm_clock_mhz") or "") + (f" [red]({', '.join(slowed)})[/]" if slowed else ""),
                      r.get("what") or "")
    return table


def best_table(rows: list[dict], title: str) -> Table:
    """`gpulab best`: per shape (with a suite's text columns, `layer`), what the best row runs and why."""
    known = {"experiment", "shape", "variant", "params", "chosen_by", "model_ms", "suite"}
    keys = dict.fromkeys(k for r in rows for k in r if k not in known)
    extra = [k for k in keys if all(isinstance(r.get(k, ""), str) for r in rows)]
    table = Table(title=title, title_justify="left")
    for col in ("shape", *extra, "variant", "params", "model ms", "chosen by"):
        table.add_column(col, justify="right" if col == "model ms" else "left", overflow="fold")
    for r in rows:
        model = r.get("model_ms")
        table.add_row(escape(str(r["shape"])), *(escape(str(r.get(c, ""))) for c in extra), r.get("variant") or "-",
                      escape(r.get("params") or ""), "" if model is None else _model_ms(model),
                      escape(str(r.get("chosen_by", ""))))
    return table


def ranking_table(rows: list[dict], title: str) -> Table:
    """`gpulab best --ranking` at one shape: each variant's best config the model weighed, in its
    order, the best row's pick marked."""
    table = Table(title=title, title_justify="left")
    for col in ("rank", "variant", "params", "model ms", "x fastest", "bound", "efficiency (from)", "timed"):
        table.add_column(col, justify="right" if col in ("model ms", "x fastest") else "left", overflow="fold")
    for r in rows:
        table.add_row(f"{r['rank']}" + (" pick" if r["picked"] else ""), r["variant"], escape(r["params"]),
                      _model_ms(r["model_ms"]), f"{r['vs_fastest']:.2f}", r["bound"],
                      escape(f"{r['efficiency']:.2f} {r['efficiency_from']}"), r["timed"])
    return table


def _model_ms(ms: float) -> str:
    """A modelled time in ms: four decimals, or two significant digits below a microsecond's worth
    (a 1x1x1 product's model time is not 0.0000), written out, not as 7e-05."""
    if ms >= 0.001 or ms <= 0:
        return f"{ms:.4f}"
    return f"{ms:.{1 - math.floor(math.log10(ms))}f}"


def model_error_line(row: dict) -> str:
    """`gpulab best`'s line under its table for one suite's results on the card (api.model_error):
    how far the model's times were off on rows it never calibrates on."""
    name = Path(row["file"]).name
    if row.get("error"):
        return f"the model against {name}: not read ({row['error']})"
    return (f"the model's times against {name} (timed on this card, never read by the model): typically "
            f"{100 * (row['typical_error'] - 1):.0f}% off over {row['configs']} configs, within 10% at "
            f"{row['within_10pct']}, within 25% at {row['within_25pct']}")


def model_alone_line(row: dict) -> str:
    """`gpulab best --alone`'s line for one suite's results on the card (api.model_alone): how often
    the model's pick, knowing nothing at or very near each shape, was within 5% of the fastest."""
    name = Path(row["file"]).name
    if row.get("error"):
        return f"the model alone against {name}: not read ({row['error']})"
    line = (f"the model alone at {name}'s shapes (their tunes and runs left out, as at a shape nobody tuned): "
            f"within 5% of the fastest row timed there at {row['within_5pct']} of {row['shapes']}")
    if row["untimed"]:
        suite = name.removeprefix(f"{row['experiment']}-").removesuffix(".csv")
        line += (f"; not counted where its config was not timed (`gpulab bench {row['experiment']} --suite {suite} "
                 f"--alone` times it): {row['untimed']}")
    return line + (f"; off: {row['misses']}" if row["misses"] else "")


def tune_table(exp, variant, scored: list[tuple[float, dict]], n_shapes: int, top: int = 10) -> Table:
    """`gpulab tune`: the best `top` configs by their geomean rate over the n_shapes shapes (scored: best first)."""
    unit = "GFLOP/s" if exp.bound == "compute" else "GB/s"
    table = Table(title=f"{exp.name} {variant.name}: best configs (geomean {unit} over {n_shapes} shapes)",
                  title_justify="left")
    table.add_column("params")
    table.add_column(unit, justify="right")
    for value, params in scored[:top]:
        table.add_row(variant.params_label(params), f"{value:,.0f}")
    return table


def replay_table(title: str, replays: list, within: float = 0.02) -> Table:
    """`gpulab tune-replay`: per strategy, the best each search found as a % of the recorded best,
    seed by seed, with the mean, the worst and how many came within `within` of it."""
    table = Table(title=title, title_justify="left")
    for name in ("strategy", "evaluations", "seeds", "mean %", "worst %", f"within {within:.0%}", "% of best, seed by seed"):
        table.add_column(name, justify="left" if name in ("strategy", "% of best, seed by seed") else "right",
                         overflow="fold")
    for strategy in dict.fromkeys(r.strategy for r in replays):
        mine = [r for r in replays if r.strategy == strategy]
        ratios = [100 * r.ratio for r in mine]
        table.add_row(strategy, str(mine[0].evaluations), str(len(mine)), f"{sum(ratios) / len(ratios):.1f}",
                      f"{min(ratios):.1f}", f"{sum(r.ratio >= 1 - within for r in mine)}/{len(mine)}",
                      " ".join(f"{x:.1f}" for x in ratios))
    return table


def sanitize_table(rows: list[dict], title: str) -> Table:
    """One line per run, one column per tool: clean, the error count, a fault of the tool's own (its
    evidence in place of the first report), or what went wrong."""
    tools = list(dict.fromkeys(r["tool"] for r in rows))
    table = Table(title=title)
    for name in ("experiment", "variant", "params", "shape", *tools, "first report"):
        table.add_column(name, overflow="fold")
    runs: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        runs.setdefault((r["experiment"], r["variant"], r.get("params") or "", r["shape"]), {})[r["tool"]] = r
    for key, by_tool in runs.items():
        cells = []
        for tool in tools:
            r = by_tool.get(tool)
            if r is None:
                cells.append("")
            elif r["verdict"] == CLEAN:
                cells.append("[green]0[/]")
            elif r["verdict"].startswith("hazard reported"):
                cells.append(f"[magenta]{(r.get('errors') or 0) + (r.get('warnings') or 0)} (expected)[/]")
            elif r["verdict"].startswith("reported in a demonstration"):
                cells.append(f"[dim]{(r.get('errors') or 0) + (r.get('warnings') or 0)} (demo, not judged)[/]")
            elif r["verdict"] == TOOL_FAULT:  # the tool failed inside itself: its evidence goes below
                cells.append("[yellow]tool fault[/]")
            elif r.get("errors") is not None:
                cells.append(f"[red]{(r.get('errors') or 0) + (r.get('warnings') or 0)}[/]")
            else:
                cells.append(f"[red]{escape(r['verdict'])}[/]")
        first = next((r["first_report"] for r in by_tool.values() if r.get("first_report")), "")
        evidence = "; ".join(f"{r['tool']} tool fault: {r['evidence']}" for r in by_tool.values()
                             if r["verdict"] == TOOL_FAULT and r.get("evidence"))
        table.add_row(*(escape(str(k)) for k in key), *cells, escape(evidence or first))
    return table


def run_line(r: dict) -> str:
    """One finished run on one line, for output that is not a terminal (a pipe, a CI log): what ran,
    then its time and rates, or why it has none."""
    what = " ".join(str(x) for x in (r.get("experiment"), _winner(r), r.get("shape")) if x)
    if not r.get("time_ms"):
        if r.get("skip_reason"):
            return f"{what}: {status(r)}: {r['skip_reason']}"
        return f"{what}: {status(r) or 'not timed'}"
    rates = [f"{r['time_ms']:.4f} ms"]
    if r.get("gflops"):
        rates.append(f"{r['gflops']:,.0f} GFLOP/s")
    elif r.get("gbps"):
        rates.append(f"{r['gbps']:,.0f} GB/s")
    if r.get("pct_of_cublas") is not None:
        rates.append(f"{r['pct_of_cublas']:.1f}% of cuBLAS")
    if r.get("pct_of_ceiling") is not None:
        rates.append(f"{r['pct_of_ceiling']:.1f}% of {r.get('ceiling') or 'the ceiling'}")
    verdict = {True: "correct", False: "WRONG"}.get(r.get("correct"), "not checked")
    return f"{what}: {', '.join(rates)} ({'expected wrong' if r.get('expected_wrong') else verdict})"


def run_summary_table(rows: list[dict], title: str) -> Table:
    """`gpulab run`'s closing screen: per experiment, its best row at the tour shape against the
    ceiling that binds and the vendor library, and what the run cost."""
    table = Table(title=title, title_justify="left")
    for col in ("experiment", "shape", "best row", "time ms", "rate", "% ceiling", "% vendor", "runs", "failed",
                "wall s"):
        table.add_column(col, justify="left" if col in ("experiment", "shape", "best row") else "right")
    for r in rows:
        rate = (f"{r['gflops']:,.0f} GFLOP/s" if r.get("gflops") else f"{r['gbps']:,.0f} GB/s" if r.get("gbps") else "")
        best = (f"{r.get('best_variant', '')} {r.get('best_params') or ''}".strip()
                or (f"[yellow]none: {escape(str(r[SANITIZED]))}[/]" if r.get(SANITIZED) else "[yellow]none timed[/]"))
        ceiling = _num(r.get("pct_of_ceiling"), ".1f") + (f" {r['ceiling']}" if r.get("ceiling") else "")
        failed = r.get("runs_failed") or 0
        table.add_row(r["experiment"], r.get("shape", ""), best, _num(r.get("time_ms"), ".4f"), rate, ceiling,
                      _num(r.get("pct_of_vendor"), ".1f"), str(r.get("runs", "")),
                      f"[red]{failed}[/]" if failed else "0", _num(r.get("wall_s"), ".1f"))
    return table


def ab_table(rows: list[dict], title: str) -> Table:
    """`gpulab ab`: A's and B's own times over the interleaved rounds (gpulab.jobs.ab)."""
    table = Table(title=title, title_justify="left")
    for col in ("side", "variant", "params", "median ms", "95% interval ms", "± 95%", "min - max ms", "rounds"):
        table.add_column(col, justify="left" if col in ("side", "variant", "params") else "right")
    for r in rows:
        low, high = r.get("time_ci_low_ms"), r.get("time_ci_high_ms")
        table.add_row(r["side"], r["variant"], r.get("params") or "", _num(r.get("time_ms"), ".4f"),
                      f"{low:.4f} - {high:.4f}" if low is not None and high is not None else "",
                      f"±{100 * r['rel_noise']:.2f}%" if r.get("rel_noise") is not None else "",
                      f"{r['time_min_ms']:.4f} - {r['time_max_ms']:.4f}", _num(r.get("reps"), "d"))
    return table
