"""The command line. Thin: parse, call the lab and the reports, print. Every GpulabError becomes one
line on stderr and exit code 2, with no traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from gpulab.errors import GpulabError, RunsFailed

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="gpulab: is the kernel correct, how fast against this card's ceilings and cuBLAS, "
    "what should the memory system do, and what did the counters say.",
)
# Piped output (CI logs, `| less`) gets wide tables instead of rich's 80-column default.
console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 400)


# -- shared option parsing --------------------------------------------------------------------
def split_list(text: Optional[str]) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()] if text else []


def resolve_shapes(experiment, sizes: Optional[str], shapes: Optional[list[str]]):
    """--size 512,1024 (every dimension n) and --shape MxNxK (repeatable); else the defaults."""
    from gpulab.experiments.base import parse_positive_int

    out = []
    if sizes is not None:
        items = split_list(sizes)
        if not items:
            raise GpulabError("--size needs at least one number, e.g. --size 512,1024")
        out += [experiment.square(parse_positive_int(s, "size")) for s in items]
    for text in shapes or []:
        out.append(experiment.parse_shape(text))
    return out or experiment.default_shape_list()


def results_dir(gpu_slug: str) -> Path:
    return Path("results") / gpu_slug


def progress_bar():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True,
    )


def run_specs(lab, specs, what: str, on_record=None) -> list[dict]:
    """Execute every spec, in order; on_record(records so far) after each (to save them as they come)."""
    records = []
    with progress_bar() as bar:
        task = bar.add_task(what, total=len(specs))
        for spec in specs:
            bar.update(task, description=f"{spec.label}")
            records.append(lab.execute(spec))
            if on_record is not None:
                on_record(records)
            bar.advance(task)
    return records


def exit_if_unfinished(lab) -> None:
    """After a sweep whose rows are all written: one line naming the runs that faulted or timed
    out, and exit code 1."""
    from gpulab.worker import unfinished_line

    if line := unfinished_line(lab):
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)


def show_bench(experiment, records: list[dict]) -> None:
    from gpulab.report.tables import bench_table, summary_table

    from gpulab.experiments.napkin import napkin_lines

    console.print(bench_table(records, f"{experiment.name}: {experiment.title}"))
    for line in napkin_lines(records):  # memory-bound experiments: the bytes behind each GB/s
        console.print("  " + line, markup=False, highlight=False)
    summary = summary_table(records, experiment.baseline, f"{experiment.name}: best per shape",
                            tuple(experiment.vendor_baselines()))
    if summary is not None:
        console.print(summary)


def ensure_ceilings(device, folder: Path):
    """This card's ceilings from folder/ceilings.csv, measured first (and said so) if missing."""
    from gpulab.ceilings import ensure, load, ceilings_path

    if load(ceilings_path(folder)) is None:
        console.print(f"measuring this card's ceilings once (stored in {ceilings_path(folder)}) ...")
    with console.status("measuring ceilings") as status:
        return ensure(device, folder, progress=lambda text: status.update(f"ceilings: {text}"))


def attach_ceilings(records: list[dict], experiment, ceilings) -> list[dict]:
    from gpulab.ceilings import attach

    return attach(records, experiment, ceilings)


# -- commands ---------------------------------------------------------------------------------
@app.command("list")
def list_command() -> None:
    """Experiments, their variants, params and accepted shapes."""
    from gpulab.experiments import all_experiments
    from gpulab.report.tables import experiment_table

    for exp in all_experiments():
        console.print(experiment_table(exp))
        console.print(f"  default shapes: {', '.join('x'.join(map(str, s)) for s in exp.default_shapes)}\n")


@app.command()
def bench(
    experiment: str = typer.Argument(..., help="experiment name (gpulab list shows them)"),
    variant: Optional[str] = typer.Option(None, "--variant", "-v", help="comma-separated variants; default all"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="NAME=V1,V2 (repeatable)"),
    size: Optional[str] = typer.Option(None, "--size", help="comma-separated sizes; every dimension = size"),
    shape: Optional[list[str]] = typer.Option(None, "--shape", help="e.g. 1000x3000x777 (repeatable)"),
    out: Optional[Path] = typer.Option(None, "--out", help="CSV path; default results/<gpu>/<experiment>.csv"),
    warm_l2: bool = typer.Option(False, "--warm-l2", help="do not flush L2 between repetitions"),
    exact: bool = typer.Option(False, "--exact", help="check with small-integer inputs (exact equality)"),
    seed: int = typer.Option(0, "--seed", help="seed of the random inputs"),
) -> None:
    """Check and time variants of one experiment; print a table; write a CSV."""
    from gpulab.experiments import get_experiment
    from gpulab.gpu.timing import TimingPolicy
    from gpulab.lab import LabOptions, derive, parse_param_overrides, plan
    from gpulab.records import check_writable, write_csv
    from gpulab.tune import tuned_defaults
    from gpulab.worker import open_lab

    exp = get_experiment(experiment)
    overrides = parse_param_overrides(param or [])
    shapes = resolve_shapes(exp, size, shape)
    variants = split_list(variant) or None
    plan(exp, variants, overrides, shapes)  # names and values are checked before the GPU is touched
    if out is not None:
        check_writable(out)  # ... and where the rows go (a folder, no permission)
    lab = open_lab(LabOptions(timing=TimingPolicy(flush_l2=not warm_l2), seed=seed, exact=exact))
    specs = plan(exp, variants, overrides, shapes, defaults=tuned_defaults(exp, results_dir(lab.device.slug)))
    lab.preflight(specs)
    path = out or results_dir(lab.device.slug) / f"{exp.name}.csv"
    check_writable(path)
    ceilings = ensure_ceilings(lab.device, results_dir(lab.device.slug))

    def finished(records: list[dict]) -> list[dict]:
        return attach_ceilings(derive(records, exp.baseline), exp, ceilings)

    # Every finished row reaches the CSV as the sweep goes: a crash late in it keeps the rest.
    records = finished(run_specs(lab, specs, f"bench {exp.name}",
                                 on_record=lambda done: write_csv(path, finished([dict(r) for r in done]))))
    write_csv(path, records)
    show_bench(exp, records)
    console.print(f"wrote {len(records)} rows to {path}")
    exit_if_unfinished(lab)


@app.command()
def ceilings(
    refresh: bool = typer.Option(False, "--refresh", help="measure again even if results/<gpu>/ceilings.csv exists"),
) -> None:
    """This card's own limits: copy bandwidth, L2 read bandwidth, FP32 FMA rate, cuBLAS FP32 and TF32 at 4096^3 and 8192^3.
    Measured once, stored in results/<gpu>/ceilings.csv, reused until --refresh."""
    from gpulab.ceilings import ensure
    from gpulab.gpu.device import require_gpu
    from gpulab.report.tables import ceilings_table

    device = require_gpu()
    folder = results_dir(device.slug)
    with console.status("measuring ceilings") as status:
        found = ensure(device, folder, refresh=refresh, progress=lambda text: status.update(f"ceilings: {text}"))
    console.print(ceilings_table(found))
    verb = "measured and wrote" if found.measured else "reused (gpulab ceilings --refresh to measure again)"
    console.print(f"{verb} {found.path}")


@app.command()
def run(
    arch: Optional[str] = typer.Option(None, "--arch", help="compile-only target when there is no GPU (default sm_90)"),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", help="default results/<gpu>/; with no GPU, where the "
                                           "resource table goes (resources-<arch>.csv; default: not written)"),
) -> None:
    """The main job: every experiment at its default shapes, CSVs under results/<gpu>/, a summary.
    With no GPU: compile every variant, print the resource table, and say what needs a GPU."""
    from gpulab.experiments import all_experiments
    from gpulab.gpu.device import probe

    info, reason = probe()
    if info is None:
        _compile_only(arch or "sm_90", out_dir, reason)
        return

    from gpulab.lab import LabOptions, derive, plan
    from gpulab.records import write_csv
    from gpulab.worker import open_lab

    lab = open_lab(LabOptions())
    folder = out_dir or results_dir(lab.device.slug)
    console.print(f"[bold]{info.name}[/] ({info.arch}, {info.sm_count} SMs, driver {lab.env['driver']}, "
                  f"CUDA runtime {info.cuda_runtime_version})")
    from gpulab.tune import tuned_defaults

    ceilings = ensure_ceilings(lab.device, folder)
    for exp in all_experiments():
        specs = plan(exp, None, {}, exp.default_shape_list(), defaults=tuned_defaults(exp, folder))
        lab.preflight(specs)
        records = attach_ceilings(derive(run_specs(lab, specs, f"run {exp.name}"), exp.baseline), exp, ceilings)
        write_csv(folder / f"{exp.name}.csv", records)
        show_bench(exp, records)
        console.print(f"wrote {folder / (exp.name + '.csv')}\n")
    exit_if_unfinished(lab)


@app.command()
def tune(
    experiment: str = typer.Argument(..., help="experiment name"),
    variant: str = typer.Argument(..., help="the variant whose params to search"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="restrict a param: NAME=V1,V2"),
    size: Optional[str] = typer.Option(None, "--size", help="comma-separated sizes to score on"),
    shape: Optional[list[str]] = typer.Option(None, "--shape", help="shapes to score on (repeatable)"),
    limit: int = typer.Option(120, "--limit", help="at most this many configs (a deterministic sample)"),
) -> None:
    """Search a variant's params, time each config on several shapes, save results as it goes
    (re-running resumes), and record the best config for this card in results/<gpu>/tuned.json."""
    from gpulab import tune as t
    from gpulab.experiments import get_experiment
    from gpulab.lab import parse_param_overrides
    from gpulab.report.tables import tune_table

    exp = get_experiment(experiment)
    v = exp.variant(variant)
    if not v.params:
        raise GpulabError(f"{exp.name} {v.name} has no params to tune")
    if limit < 1:
        raise GpulabError("--limit must be at least 1")
    overrides = parse_param_overrides(param or [])
    for name, values in overrides.items():
        v.param(name)  # a param the variant does not have would leave the whole search space
        v.param_grid({name: values})  # validates the values with the usual messages
    shapes = resolve_shapes(exp, size, shape) if (size or shape) else t.tune_shapes(exp)
    plan = t.plan_tune(exp, v, overrides, shapes, limit)
    console.print(f"{exp.name} {v.name}: {plan.space_size} configs, {len(plan.rejected)} rejected by "
                  f"constraints, timing {len(plan.configs)} on {', '.join(s.label for s in shapes)}")
    for params, reason in plan.rejected[:5]:
        console.print(f"  skipped {v.params_label(params)}: {reason}", markup=False)
    done = plan.resume()
    if done:
        console.print(f"resuming: {len(done)} config x shape results already in {plan.path}")
    plan.preflight()
    with progress_bar() as bar:
        task = bar.add_task("tuning", total=plan.runs)
        result = t.run_tune(plan, on_start=lambda label: bar.update(task, description=label),
                            on_end=lambda: bar.advance(task))
    console.print(tune_table(exp, v, result.scored, len(shapes)))
    for label, entry in result.by_shape.items():
        console.print(f"  fastest at {label}: {v.params_label(entry['params'])} ({entry['rate']:,.0f})")
    console.print(f"best overall {v.params_label(result.best)} and the fastest per shape saved to "
                  f"{t.tuned_path(plan.folder)}; bench and run use them; every result in {plan.path}")
    exit_if_unfinished(plan.lab)


@app.command()
def new(
    name: str = typer.Argument(..., help="the experiment's name: a Python package and a CUDA function name"),
    directory: Path = typer.Option(Path("."), "--dir", help="the folder to create NAME/ in (put it on GPULAB_PATH)"),
    like: str = typer.Option("copy", "--like", help="the starting point: copy (memory-bound), sgemm (compute-bound) or stencil"),
) -> None:
    """Scaffold a working experiment of your own: a documented package, one naive variant, its
    access model and tests, outside gpulab's files."""
    import os

    from gpulab import api

    folder = api.new(name, directory, like)
    home = folder.parent.resolve()
    console.print(f"wrote {folder}/: " + ", ".join(sorted(p.name for p in folder.iterdir())), markup=False)
    console.print(f"next:\n  export GPULAB_PATH={home}{os.pathsep}$GPULAB_PATH\n  gpulab list {name}\n  gpulab run {name}"
                  f"\n  gpulab predict {name} v0\n  python -m pytest {folder}", markup=False, highlight=False)


@app.command()
def report(
    results: Path = typer.Option(Path("results"), "--results", help="the folder of per-GPU results"),
) -> None:
    """Plots (PNG) and one HTML page per card, from the CSVs under results/<gpu>/."""
    from gpulab.report import card_page
    from gpulab.report.markdown import card_folders

    gpu_dirs = card_folders(results)  # every file checked before the first plot is written
    if not gpu_dirs:
        raise GpulabError(f"no results under {results}/; run gpulab bench or gpulab run first")
    for gpu_dir in gpu_dirs:
        if written := card_page.write(gpu_dir):
            out, plotted = written
            console.print(f"wrote {out} and {plotted} plot(s) in {gpu_dir}/")


@app.command()
def readme(
    readme_path: Path = typer.Option(Path("README.md"), "--readme", help="the file with generated blocks"),
    results: Path = typer.Option(Path("results"), "--results", help="the folder of per-GPU results"),
) -> None:
    """Regenerate the README's result tables (blocks <!-- gpulab:GPU-EXPERIMENT -->) from the CSVs."""
    from gpulab.report.markdown import readme_blocks, update_readme

    if not readme_path.exists():
        raise GpulabError(f"{readme_path} not found; run from the repository root or pass --readme")
    if readme_path.is_dir():
        raise GpulabError(f"{readme_path} is a folder; pass the README file, e.g. --readme {readme_path / 'README.md'}")
    done = update_readme(readme_path, readme_blocks(results))  # every CSV checked before the README is touched
    console.print(f"regenerated {len(done)} block(s): {', '.join(done) or 'none'}")


# -- counters: Nsight Compute ------------------------------------------------------------------
def _one_shape(exp, size: Optional[str], shape: Optional[str]):
    """The one shape a profile takes: --size or --shape, else the experiment's first default."""
    if size is None and shape is None:
        return exp.default_shape_list()[0]
    shapes = resolve_shapes(exp, size, [shape] if shape else None)
    if len(shapes) != 1:
        raise GpulabError("one shape at a time: give one --size or one --shape")
    return shapes[0]


@app.command()
def profile(
    experiment: str = typer.Argument(..., help="experiment name (gpulab list shows them)"),
    variant: str = typer.Argument(..., help="variant, optionally with params: v1 or v1:TILE=16"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="NAME=VALUE (repeatable)"),
    size: Optional[str] = typer.Option(None, "--size", help="every dimension = size (default: the first default shape)"),
    shape: Optional[str] = typer.Option(None, "--shape", help="e.g. 512x512x512"),
    full: bool = typer.Option(False, "--full", help="also save a --set full report (.ncu-rep) to open in ncu-ui"),
    out: Optional[Path] = typer.Option(None, "--out", help="where --full saves its report (default results/<gpu>/profiles/)"),
    csv_path: Optional[Path] = typer.Option(None, "--csv", help="the CSV the record joins (default results/<gpu>/profile.csv)"),
    seed: int = typer.Option(0, "--seed", help="seed of the random inputs"),
    sass: bool = typer.Option(False, "--sass", help="also count per SASS instruction (ncu's source page): memory instructions by kind beside the model, and where the warps stalled"),
    sass_csv: Optional[Path] = typer.Option(None, "--sass-csv", help="with --sass: every instruction's counters into this CSV"),
) -> None:
    """Profile one launch under Nsight Compute: predicted | measured for every counted quantity,
    the headline metrics with a reading each, the top stalls; the counters join the record (CSV)."""
    from gpulab.experiments import get_experiment
    from gpulab.profiling import profile as run_profile, save_profiles, spec_for
    from gpulab.report.profile_tables import counted_table, header_line, headline_table, stalls_table, top_stall_line

    if out is not None and not full:
        raise GpulabError("--out is where --full saves its report: add --full")
    if sass_csv is not None and not sass:
        raise GpulabError("--sass-csv is where --sass writes its table: add --sass")
    exp = get_experiment(experiment)
    spec = spec_for(experiment, variant, param or [], _one_shape(exp, size, shape))
    prof = run_profile(spec, full=full, report_out=out, seed=seed)
    console.print(header_line(prof))
    console.print(counted_table(prof))
    console.print(headline_table(prof))
    console.print(stalls_table(prof))
    if line := top_stall_line(prof):
        console.print(f"  {line}", markup=False)
    if prof.missing:
        console.print(f"[yellow]ncu gave no value for:[/] {', '.join(prof.missing)}", highlight=False)
    if prof.report_path:
        console.print(f"full report: {prof.report_path}\n  open it with: ncu-ui {prof.report_path}"
                      f"\n  or read it here: ncu -i {prof.report_path} --page details", markup=False)
    console.print(f"wrote the record to {save_profiles([prof], csv_path)}", markup=False)
    if sass:
        _print_sass(spec, seed, sass_csv)


def _print_sass(spec, seed: int, csv_path: Optional[Path]) -> None:
    from gpulab.model.predict import instruction_table
    from gpulab.profiling import sass_profile
    from gpulab.records import write_csv
    from gpulab.report.sass_tables import hot_table, kinds_table, model_by_kind

    kernel, rows = sass_profile(spec, seed=seed)
    model = None
    if spec.variant.access is not None:
        access = spec.variant.access(spec.params, spec.shape)
        model = model_by_kind(instruction_table(access), {i.name: i.width for i in access.instructions})
    console.print(kinds_table(rows, model, f"{kernel}: memory instructions by kind, counted per SASS instruction "
                                           "(red: not the model's number)"))
    console.print(hot_table(rows))
    if csv_path is not None:
        write_csv(csv_path, [{"address": r.address, "instruction": r.source, "access": r.access, **r.counts}
                             for r in rows])
        console.print(f"wrote {len(rows)} instructions to {csv_path}", markup=False)


@app.command()
def compare(
    experiment: str = typer.Argument(..., help="experiment name (gpulab list shows them)"),
    a: str = typer.Argument(..., help="first variant, e.g. v0 or v1:TILE=16"),
    b: str = typer.Argument(..., help="second variant, e.g. v1 or v1:TILE=32"),
    param_a: Optional[list[str]] = typer.Option(None, "--param-a", help="NAME=VALUE for A (repeatable)"),
    param_b: Optional[list[str]] = typer.Option(None, "--param-b", help="NAME=VALUE for B (repeatable)"),
    size: Optional[str] = typer.Option(None, "--size", help="every dimension = size (default: the first default shape)"),
    shape: Optional[str] = typer.Option(None, "--shape", help="e.g. 512x512x512"),
    csv_path: Optional[Path] = typer.Option(None, "--csv", help="the CSV both records join (default results/<gpu>/profile.csv)"),
    seed: int = typer.Option(0, "--seed", help="seed of the random inputs"),
) -> None:
    """Profile two variants (or two configs of one) and show their key metrics side by side: the
    direction and size of each change, and what it means."""
    from gpulab.experiments import get_experiment
    from gpulab.profiling import profile as run_profile, save_profiles, spec_for
    from gpulab.report.profile_tables import compare_story, compare_table

    exp = get_experiment(experiment)
    the_shape = _one_shape(exp, size, shape)
    spec_a = spec_for(experiment, a, param_a or [], the_shape)
    spec_b = spec_for(experiment, b, param_b or [], the_shape)
    if spec_a.label == spec_b.label:
        raise GpulabError(f"A and B are the same run ({spec_a.label}); compare two variants or two configs")
    profiles = []
    with progress_bar() as bar:
        task = bar.add_task("profiling", total=2)
        for spec in (spec_a, spec_b):
            bar.update(task, description=f"ncu: {spec.label}")
            profiles.append(run_profile(spec, seed=seed))
            bar.advance(task)
    pa, pb = profiles
    dev = pa.info.get("device", {})
    console.print(f"{dev.get('name', '?')} ({dev.get('arch', '?')}), ncu {pa.ncu_version or '?'}, one captured launch each",
                  markup=False)
    console.print(compare_table(pa, pb))
    for line in compare_story(pa, pb):
        console.print(f"  {line}", markup=False)
    console.print(f"wrote both records to {save_profiles(profiles, csv_path)}", markup=False)


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
) -> None:
    """What the memory system must do for one launch, from the variant's access model: global and
    shared requests, sectors, wavefronts, bank conflicts, L1TEX and compulsory DRAM bytes, FLOPs,
    arithmetic intensity, the roofline floor, and every memory instruction. Needs no GPU."""
    import time

    from gpulab.ceilings import ceilings_for_roofline
    from gpulab.experiments import get_experiment
    from gpulab.model.predict import check_launch, instruction_table, summarize
    from gpulab.profile_target import make_spec
    from gpulab.profiling import parse_variant_arg, single_params
    from gpulab.report import predict_tables

    exp = get_experiment(experiment)
    name, inline = parse_variant_arg(variant)
    flags = single_params(param or [])
    if set(inline) & set(flags):
        raise GpulabError(f"{', '.join(sorted(set(inline) & set(flags)))} given both in '{variant}' and as --param; give it once")
    spec = make_spec(experiment, name, inline | flags, _one_shape(exp, size, shape))
    v = spec.variant
    if v.access is None:
        modelled = [x.name for x in exp.variants if x.access is not None]
        raise GpulabError(f"{exp.name} {v.name} has no access model yet, so there is nothing to predict"
                          + (f"; variants of {exp.name} with one: {', '.join(modelled)}" if modelled else ""))
    start = time.perf_counter()
    try:
        model = v.access(spec.params, spec.shape)
        check_launch(model, v.launch(spec.params, spec.shape))
        rows = instruction_table(model, exhaustive=exhaustive)
    except ValueError as exc:  # a model the evaluator refuses (too slow without classes, bad classes)
        raise GpulabError(f"{spec.label}: the access model cannot be evaluated: {exc}") from None
    fma, copy, source = ceilings_for_roofline(gpu)
    p = summarize(rows, model, fma, copy)
    elapsed = time.perf_counter() - start
    threads = model.block[0] * model.block[1] * model.block[2]
    blocks = model.grid[0] * model.grid[1] * model.grid[2]
    console.print(f"[bold]{spec.label}[/]: predicted from the access model, before any counter is read "
                  f"({'every block and step evaluated' if exhaustive else 'exact by symmetry classes'}, {elapsed:.2f} s)")
    console.print(f"  grid {model.grid} x block {model.block}: {blocks:,} blocks, {blocks * -(-threads // 32):,} warps",
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
    seed: int = typer.Option(0, "--seed", help="seed of the random inputs"),
    rejudge: bool = typer.Option(False, "--rejudge", help="no GPU: fresh predictions and verdicts for the recorded ncu numbers (--out, or every results/*/fidelity.csv)"),
) -> None:
    """Every variant's access model against Nsight Compute on this card: predicted | measured per
    counted quantity, at the default and a ragged shape, into results/<gpu>/fidelity.csv."""
    from gpulab import fidelity as fid
    from gpulab.gpu.ncu import find_ncu
    from gpulab.records import check_writable
    from gpulab.report import fidelity_tables

    if rejudge:
        _rejudge_fidelity([out] if out else sorted(Path("results").glob("*/" + fid.FILE_NAME)))
        return
    specs = fid.plan(experiments or None, split_list(variant) or None, shapes)
    find_ncu()  # fail before the first run when ncu is missing
    if out is not None:
        check_writable(out)  # ... or when the results could not be saved
    results: list = []
    path = out
    with progress_bar() as bar:
        task = bar.add_task("fidelity", total=len(specs))
        for spec in specs:
            bar.update(task, description=f"ncu: {spec.label}")
            res = fid.measure_one(spec, seed=seed)
            results.append(res)
            console.print(fidelity_tables.run_line(res))
            if path is None and (slug := fid.gpu_slug_of(results)):
                path = fid.fidelity_path(slug)
            if path is not None:
                fid.save(path, results)  # after every run: an interrupted run keeps what it measured
            bar.advance(task)
    if path is None:
        raise GpulabError("no run produced counters, so nothing was written; see the errors above")
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
    jobs: int = typer.Option(min(8, os.cpu_count() or 1), "--jobs", "-j", help="sanitizer processes at once"),
    out: Optional[Path] = typer.Option(None, "--out", help="the CSV (default results/<gpu>/sanitize.csv; rows of the same runs are replaced)"),
) -> None:
    """Every variant (and every tuned config) at a small ragged shape under compute-sanitizer's
    memcheck, racecheck, synccheck and initcheck: one row per (run, tool) with the error count and
    the first report. The value check cannot see a discarded out-of-bounds load or a race that
    happened to go right; these tools can."""
    from gpulab import sanitize as san
    from gpulab.experiments import all_experiments, get_experiment
    from gpulab.gpu.device import require_gpu
    from gpulab.records import environment, read_csv, write_csv
    from gpulab.report.tables import sanitize_table
    from gpulab.tune import load_tuned

    sanitizer = san.find_sanitizer()
    tools = tuple(split_list(tool)) or san.TOOLS
    if unknown := [t for t in tools if t not in san.TOOLS]:
        raise GpulabError(f"--tool {', '.join(unknown)}: choose from {', '.join(san.TOOLS)}")
    if jobs < 1:
        raise GpulabError("--jobs must be at least 1")
    exps = [get_experiment(e) for e in experiments] if experiments else all_experiments()
    names = split_list(variant)
    for name in names:  # each must name a variant of a chosen experiment; the error lists them
        if not any(v.name == name for e in exps for v in e.variants):
            exps[0].variant(name)
    device = require_gpu()
    folder = results_dir(device.slug)
    specs, skipped = san.plan(exps, load_tuned(folder), device.arch)
    if names:
        specs = [s for s in specs if s.variant.name in names]
    for spec, reason in skipped:
        console.print(f"  skipped {spec.label}: {reason}", markup=False)
    path = out or folder / san.FILE_NAME
    with progress_bar() as bar:
        task = bar.add_task(f"sanitize: {len(specs)} runs x {len(tools)} tools", total=len(specs) * len(tools))
        rows = san.run_all(sanitizer, specs, tools, device.arch, jobs, on_done=lambda row: bar.advance(task))
    env = environment(device, device.arch)
    rows = [r | env for r in rows]
    write_csv(path, san.merge(read_csv(path) if path.exists() else [], rows))
    console.print(sanitize_table(rows, f"compute-sanitizer {sanitizer}: errors per run and tool"))
    line = san.summary_line(rows, path)
    if any(san.failed(r) for r in rows):
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)
    console.print(line, markup=False, highlight=False)


def _rejudge_fidelity(paths: list[Path]) -> None:
    from gpulab import fidelity as fid
    from gpulab.report.fidelity_tables import rejudge_line

    if not paths or not all(p.exists() for p in paths):
        raise GpulabError("no fidelity table to rejudge: run `gpulab fidelity` on the card first, or name one with --out")
    for path in paths:
        rows, kept, changed = fid.rejudge_file(path)
        for why in kept:
            console.print(f"  left as recorded: {why}", markup=False)
        console.print(rejudge_line(path, rows) + ("" if changed else "; nothing changed, file left as it was"),
                      markup=False)


def _compile_only(arch: str, out_dir: Optional[Path], reason: str) -> None:
    """`run` with no GPU: every variant compiled for `arch`, the resource table (also into
    out_dir/resources-<arch>.csv when --out-dir is given); exit 1 if a kernel did not compile."""
    from gpulab.errors import RunsFailed
    from gpulab.gpu.compile import check_arch
    from gpulab.gpu.device import NO_GPU_HINT
    from gpulab.records import check_writable, write_csv

    check_arch(arch)
    target = out_dir / f"resources-{arch}.csv" if out_dir is not None else None
    if target is not None:
        check_writable(target)
    records, broken = _compile_everything(arch)
    if target is not None:
        write_csv(target, records)
        console.print(f"wrote the resource table to {target}", markup=False)
    console.print(f"[bold]No NVIDIA GPU here[/] ({reason}).")
    console.print(f"Everything above compiled for {arch}; {NO_GPU_HINT}.", markup=False)
    if broken:
        raise RunsFailed(f"{len(broken)} kernel(s) did not compile (marked in the table): {', '.join(broken)}")


def _compile_everything(arch: str) -> tuple[list[dict], list[str]]:
    """Compile every variant for `arch` and print the resource table: (the records, the runs that did
    not compile)."""
    from gpulab.errors import CompileError
    from gpulab.experiments import all_experiments
    from gpulab.gpu.compile import first_error
    from gpulab.lab import RunSpec, compile_record
    from gpulab.report.tables import resources_table

    records = []
    experiments = all_experiments()
    specs = []
    for exp in experiments:
        shape = exp.default_shape_list()[0]
        for v in exp.variants:
            grid = v.param_grid(dict(v.sweep)) if v.sweep else [v.default_params()]
            specs += [RunSpec(exp, v, p, shape) for p in grid]
    broken = []
    with progress_bar() as bar:
        task = bar.add_task(f"compiling for {arch}", total=len(specs))
        for spec in specs:
            try:
                records.append(compile_record(spec, arch))
            except CompileError as exc:  # one broken kernel: mark it, show the others
                broken.append(spec.label)
                records.append(spec.base_record() | {"skip_reason": f"does not compile: {first_error(str(exc))}"})
            bar.advance(task)
    console.print(resources_table(records, f"Resources per thread and block, compiled for {arch} (ptxas)"))
    return records, broken


INTERRUPTED = ("interrupted: every file written so far is complete, and the one being written, if any, "
               "was left as it was before this run")


def main() -> None:
    # Output that cannot carry a character (PYTHONIOENCODING=ascii, a C locale) shows '?' instead
    # of stopping the command halfway.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    try:
        code = app(standalone_mode=False)
    except GpulabError as exc:
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:  # raised outside typer's own handling (while it starts, say)
        _fail(INTERRUPTED, 130)
    except SystemExit:
        raise
    except Exception as exc:
        # Usage errors (an unknown option, a bad value) arrive here in non-standalone mode as click
        # exceptions, from click or from the copy of it that newer typer releases carry inside
        # (typer._click): recognised by what they can do, not by where they come from.
        if callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int):
            exc.show()
            sys.exit(exc.exit_code)
        if type(exc).__name__ == "Abort":
            _fail(INTERRUPTED, 130)
        if isinstance(exc, OSError) and exc.filename:  # the file system refused: say which file and why
            _fail(f"cannot use {exc.filename}: {exc.strerror or exc}; check the path and its permissions", 2)
        raise
    # In non-standalone mode typer turns Ctrl-C into a returned 130 (and typer.Exit into its code);
    # commands themselves return nothing.
    if code == 130:
        _fail(INTERRUPTED, 130)
    if isinstance(code, int) and code:
        sys.exit(code)


def _fail(message: str, code: int) -> None:
    from rich.markup import escape

    err_console.print(f"[red]error:[/] {escape(message)}" if code != 130 else escape(message), soft_wrap=True,
                      highlight=False)
    sys.exit(code)


if __name__ == "__main__":
    main()
