"""The command line's commands around the counters and the tools: Nsight Compute (`profile`,
`compare`, `fidelity`), the access model (`predict`) and compute-sanitizer (`sanitize`). They
register on gpulab.cli's `app` and print through its console, as the other commands do."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from gpulab import api
from gpulab.arith import cdiv
from gpulab.cli import (
    KERNEL_HELP, Live, app, console, err_console, kernels_of, one_shape_arg, params_arg, shapes_arg, split_list,
)
from gpulab.errors import GpulabError, RunsFailed
from gpulab.jobs import fidelity as fid
from gpulab.jobs import sanitize as san
from gpulab.jobs.profile import access_model, sass_profile
from gpulab.model.predict import instruction_table
from gpulab.records import RESULTS_ROOT, write_csv
from gpulab.report import fidelity_tables, predict_tables
from gpulab.report.fidelity_tables import rejudge_line
from gpulab.report.profile_tables import (
    compare_story, compare_table, counted_table, header_line, headline_table, library_lines, stalls_table, top_stall_line,
)
from gpulab.report.sass_tables import hot_table, kinds_table, model_by_kind
from gpulab.report.tables import sanitize_table
from gpulab.run.args import single_params


# -- counters: Nsight Compute ------------------------------------------------------------------
@app.command()
def profile(
    experiment: str = typer.Argument(..., help="experiment name (gpulab list shows them)"),
    variant: str = typer.Argument(..., help="variant, optionally with params: v1 or v1:TILE=16; or cublas, the vendor library's call"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="NAME=VALUE (repeatable)"),
    size: Optional[str] = typer.Option(None, "--size", help="every dimension = size (default: the first default shape)"),
    shape: Optional[str] = typer.Option(None, "--shape", help="e.g. 512x512x512"),
    full: bool = typer.Option(False, "--full", help="also save a --set full report (.ncu-rep) to open in ncu-ui"),
    out: Optional[Path] = typer.Option(None, "--out", help="where --full saves its report (default: the reports/ folder beside the CSV, results/<gpu>/reports/)"),
    csv_path: Optional[Path] = typer.Option(None, "--csv", help="the CSV the record joins (default results/<gpu>/profile.csv)"),
    seed: int = typer.Option(0, "--seed", help="random-number generator start for the inputs"),
    sass: bool = typer.Option(False, "--sass", help="also count per SASS instruction (ncu's source page): memory instructions by kind beside the model, and where the warps stalled"),
    sass_csv: Optional[Path] = typer.Option(None, "--sass-csv", help="with --sass: every instruction's counters and stall samples by reason into this CSV"),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
) -> None:
    """Profile one launch under Nsight Compute: predicted | measured for every counted quantity,
    the headline metrics with a reading each, the top stalls; the counters join the record (CSV)."""
    if sass_csv is not None and not sass:
        raise GpulabError("--sass-csv is where --sass writes its table: add --sass")
    records = api.profile(experiment, variant, single_params(param or []), one_shape_arg(size, shape), full=full,
                          out=out, csv=csv_path, seed=seed, kernels=kernels_of(kernel))
    prof = records.profiles[0]
    console.print(header_line(prof))
    for line in library_lines(prof):
        console.print(line, markup=False, highlight=False)
    console.print(counted_table(prof))
    console.print(headline_table(prof))
    console.print(stalls_table(prof))
    if line := top_stall_line(prof):
        console.print(f"  {line}", markup=False)
    if prof.missing:
        console.print(f"[yellow]ncu gave no value for:[/] {', '.join(prof.missing)}", highlight=False)
    if prof.full:
        console.print(f"full report: {prof.report_path}\n  open it with: ncu-ui {prof.report_path}"
                      f"\n  or read it here: ncu -i {prof.report_path} --page details", markup=False)
    console.print(f"wrote the record to {records.path}", markup=False)
    if sass:
        _print_sass(prof.spec, seed, sass_csv, prof.report_path.parent if prof.report_path else None)


def _print_sass(spec, seed: int, csv_path: Optional[Path], reports_dir: Optional[Path] = None) -> None:

    kernel, rows = sass_profile(spec, seed=seed, reports_dir=reports_dir)
    access, _ = access_model(spec)  # none (the library, a config the model declines): measured counts alone
    model = None
    if access is not None:
        model = model_by_kind(instruction_table(access), {i.name: i.width for i in access.instructions})
    console.print(kinds_table(rows, model, f"{kernel}: memory instructions by kind, counted per SASS instruction "
                                           "(red: not the model's number)"))
    console.print(hot_table(rows))
    if csv_path is not None:
        write_csv(csv_path, [{"address": r.address, "instruction": r.source, "access": r.access, **r.counts,
                              **{f"stall_{reason}": samples for reason, samples in r.stalls.items()}}
                             for r in rows])
        console.print(f"wrote {len(rows)} instructions to {csv_path}", markup=False)


@app.command()
def compare(
    experiment: str = typer.Argument(..., help="experiment name (gpulab list shows them)"),
    a: str = typer.Argument(..., help="first variant, e.g. v0 or v1:TILE=16"),
    b: str = typer.Argument(..., help="second variant, e.g. v1 or v1:TILE=32, or cublas (the vendor library)"),
    param_a: Optional[list[str]] = typer.Option(None, "--param-a", help="NAME=VALUE for A (repeatable)"),
    param_b: Optional[list[str]] = typer.Option(None, "--param-b", help="NAME=VALUE for B (repeatable)"),
    size: Optional[str] = typer.Option(None, "--size", help="every dimension = size (default: the first default shape)"),
    shape: Optional[str] = typer.Option(None, "--shape", help="e.g. 512x512x512"),
    csv_path: Optional[Path] = typer.Option(None, "--csv", help="the CSV both records join (default results/<gpu>/profile.csv)"),
    seed: int = typer.Option(0, "--seed", help="random-number generator start for the inputs"),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
) -> None:
    """Profile two variants (or two configs of one) and show their key metrics side by side: the
    direction and size of each change, and what it means."""
    with Live("profiling") as live:
        records = api.compare(experiment, a, b, single_params(param_a or []), single_params(param_b or []),
                              one_shape_arg(size, shape), csv=csv_path, seed=seed, kernels=kernels_of(kernel),
                              progress=live)
    profiles = records.profiles
    pa, pb = profiles
    dev = pa.info.get("device", {})
    console.print(f"{dev.get('name', '?')} ({dev.get('arch', '?')}), ncu {pa.ncu_version or '?'}, one captured launch each",
                  markup=False)
    for line in (*library_lines(pa), *library_lines(pb)):
        console.print(line, markup=False, highlight=False)
    console.print(compare_table(pa, pb))
    for line in compare_story(pa, pb):
        console.print(f"  {line}", markup=False)
    console.print(f"wrote both records to {records.path}", markup=False)


# -- predictions: the access model, no GPU -----------------------------------------------------
@app.command()
def predict(
    experiment: str = typer.Argument(..., help="experiment name (gpulab list shows them)"),
    variant: str = typer.Argument(..., help="variant, optionally with params: v1 or v1:TILE=16"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="NAME=VALUE (repeatable)"),
    size: Optional[str] = typer.Option(None, "--size", help="every dimension = size (default: the first default shape)"),
    shape: Optional[str] = typer.Option(None, "--shape", help="e.g. 4096x4096x4096"),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="whose ceilings set the roofline floor: results/<gpu>/ceilings.csv"),
    exhaustive: bool = typer.Option(False, "--exhaustive", help="evaluate every block and loop step (slow: checks the symmetry classes)"),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
) -> None:
    """What the memory system must do for one launch, from the variant's access model: global and
    shared requests, sectors, wavefronts, bank conflicts, L1TEX and compulsory DRAM bytes, FLOPs,
    arithmetic intensity, the roofline floor, and every memory instruction. Needs no GPU."""
    pred = api.predict(experiment, variant, single_params(param or []), one_shape_arg(size, shape), gpu=gpu,
                       exhaustive=exhaustive,
                       kernels=kernels_of(kernel))
    spec, v, model, p, rows = pred.spec, pred.spec.variant, pred.model, pred.summary, pred.instructions
    exp, fma, copy, source, elapsed = spec.experiment, pred.fma_gflops, pred.copy_gbps, pred.ceilings_source, pred.seconds
    threads = model.block[0] * model.block[1] * model.block[2]
    blocks = model.grid[0] * model.grid[1] * model.grid[2]
    console.print(f"[bold]{spec.label}[/]: predicted from the access model, before any counter is read "
                  f"({'every block and step evaluated' if exhaustive else 'exact by symmetry classes'}, {elapsed:.2f} s)")
    console.print(f"  grid {model.grid} x block {model.block}: {blocks:,} blocks, {blocks * cdiv(threads, 32):,} warps",
                  markup=False, highlight=False)
    console.print(predict_tables.summary_table(f"{exp.name} {v.name}: the launch", p))
    console.print(f"roofline floor {p['roofline_floor_ms']:.4f} ms, {p['roofline_bound']}-bound: "
                  f"{p['flops']:,.0f} flop / {fma:,.0f} GFLOP/s = {p['roofline_compute_ms']:.4f} ms, "
                  f"{p['dram_compulsory_bytes']:,} B / {copy:,.0f} GB/s = {p['roofline_memory_ms']:.4f} ms", markup=False,
                  highlight=False)
    console.print(f"  ceilings: {source}", markup=False, highlight=False)
    console.print(predict_tables.instruction_table(rows))


@app.command()
def fidelity(
    experiments: Optional[list[str]] = typer.Argument(None, help="experiments to measure (default: all)"),
    variant: Optional[str] = typer.Option(None, "--variant", "-v", help="comma-separated variants (default: all)"),
    shapes: str = typer.Option("both", "--shapes", help="both, default (the first default shape) or ragged"),
    out: Optional[Path] = typer.Option(None, "--out", help="the CSV (default results/<gpu>/fidelity.csv; rows of the same runs are replaced)"),
    seed: int = typer.Option(0, "--seed", help="random-number generator start for the inputs"),
    rejudge: bool = typer.Option(False, "--rejudge", help="no GPU: fresh predictions and verdicts for the recorded ncu numbers (--out, or every results/*/fidelity.csv) of the experiments and --variant named (default: all)"),
    shape: Optional[list[str]] = typer.Option(None, "--shape", help="these shapes instead of --shapes' (repeatable or comma-separated; one experiment), e.g. 3x1000x777"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="NAME=V1,V2 for the variants that have it (repeatable)"),
) -> None:
    """Every variant's access model against Nsight Compute on this card: predicted | measured per
    counted quantity, at the default and a ragged shape (or --shape), into results/<gpu>/fidelity.csv."""
    if rejudge:
        if shape or param:
            raise GpulabError("--rejudge reads the recorded runs again: name experiments and --variant, no --shape or --param")
        chosen = fid.chosen_runs(experiments, split_list(variant, "--variant"))
        _rejudge_fidelity([out] if out else sorted(RESULTS_ROOT.glob("*/" + fid.FILE_NAME)), chosen)
        return
    with Live("fidelity", describe=fidelity_tables.run_line, lines=True) as live:
        rows = api.fidelity(experiments or None, split_list(variant, "--variant") or None, shapes, out=out, seed=seed,
                            shape_list=shapes_arg(None, shape) or [], params=params_arg(param),
                            progress=live)
    results, path = rows.results, rows.path
    if (table := fidelity_tables.differ_table(results)) is not None:
        console.print(table)
    console.print(fidelity_tables.summary_line(results, path), markup=False)
    if failed := [res for res in results if res.error]:
        raise RunsFailed(f"{len(failed)} of {len(results)} runs failed (see above); the rows recorded for them "
                         f"in {path} were kept")


@app.command()
def sanitize(
    experiments: Optional[list[str]] = typer.Argument(None, help="experiments to check (default: all)"),
    variant: Optional[str] = typer.Option(None, "--variant", "-v", help="comma-separated variants (default: all)"),
    tool: Optional[str] = typer.Option(None, "--tool", help="comma-separated: memcheck, racecheck, synccheck, initcheck (default: all)"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="only the configs with NAME=V1,V2 (repeatable)"),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
    jobs: int = typer.Option(min(8, os.cpu_count() or 1), "--jobs", "-j", help="sanitizer processes at once"),
    out: Optional[Path] = typer.Option(None, "--out", help="the CSV (default results/<gpu>/sanitize.csv; rows of the same runs are replaced)"),
    logs: Optional[Path] = typer.Option(None, "--logs", help="keep compute-sanitizer's full log of every run and tool in this folder"),
) -> None:
    """Every variant (and every tuned config) at a small ragged shape under compute-sanitizer's
    memcheck, racecheck, synccheck and initcheck: one row per (run, tool) with the error count and
    the first report. The value check cannot see a discarded out-of-bounds load or a race that
    happened to go right; these tools can."""
    with Live("sanitize", describe=lambda row: None) as live:
        rows = api.sanitize(experiments, split_list(variant, "--variant") or None, tools=split_list(tool, "--tool") or None,
                            params=params_arg(param) or None, kernels=kernels_of(kernel), jobs=jobs, out=out,
                            logs=logs, progress=live)
    for spec, reason in rows.skipped:
        console.print(f"  skipped {spec.label}: {reason}", markup=False)
    console.print(sanitize_table(rows, "compute-sanitizer: errors per run and tool"))
    line = san.summary_line(rows, rows.path)
    if any(san.failed(r) for r in rows):
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)
    console.print(line, markup=False, highlight=False)


def _rejudge_fidelity(paths: list[Path], chosen=None) -> None:

    if not paths or not all(p.exists() for p in paths):
        raise GpulabError("no fidelity table to rejudge: run `gpulab fidelity` on the card first, or name one with --out")
    for path in paths:
        rows, kept, changed = fid.rejudge_file(path, chosen)
        for why in kept:
            console.print(f"  left as recorded: {why}", markup=False)
        console.print(rejudge_line(path, rows) + ("" if changed else "; nothing changed, file left as it was"),
                      markup=False)
