"""The command line. Thin: parse, call the lab and the reports, print. Every GpulabError becomes one
line on stderr and exit code 2, with no traceback."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from gpulab.errors import GpulabError

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


def run_specs(lab, specs, what: str) -> list[dict]:
    records = []
    with progress_bar() as bar:
        task = bar.add_task(what, total=len(specs))
        for spec in specs:
            bar.update(task, description=f"{spec.label}")
            records.append(lab.execute(spec))
            bar.advance(task)
    return records


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
    from rich.table import Table

    from gpulab.experiments import all_experiments

    for exp in all_experiments():
        table = Table(title=f"{exp.name}: {exp.title}  (shape {'x'.join(exp.dims)}, each 1..{exp.max_dim})",
                      title_justify="left")
        for col in ("variant", "what it is", "params (default first, then choices)", "file"):
            table.add_column(col)
        for v in exp.variants:
            params = "; ".join(
                f"{p.name}={p.default} of {','.join(map(str, p.choices))}" for p in v.params) or "-"
            note = " [magenta](demonstration: expected wrong)[/]" if v.expected_wrong else ""
            table.add_row(v.name, v.summary + note, params, v.file)
        for lib in exp.vendor_baselines():
            table.add_row(lib, "vendor library baseline, timed by the same harness", "-", "-")
        console.print(table)
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
    from gpulab.lab import Lab, LabOptions, derive, parse_param_overrides, plan
    from gpulab.records import write_csv
    from gpulab.tune import tuned_defaults

    exp = get_experiment(experiment)
    overrides = parse_param_overrides(param or [])
    shapes = resolve_shapes(exp, size, shape)
    variants = split_list(variant) or None
    plan(exp, variants, overrides, shapes)  # names and values are checked before the GPU is touched
    lab = Lab(LabOptions(timing=TimingPolicy(flush_l2=not warm_l2), seed=seed, exact=exact))
    specs = plan(exp, variants, overrides, shapes, defaults=tuned_defaults(exp, results_dir(lab.device.slug)))
    lab.preflight(specs)
    records = derive(run_specs(lab, specs, f"bench {exp.name}"), exp.baseline)
    records = attach_ceilings(records, exp, ensure_ceilings(lab.device, results_dir(lab.device.slug)))
    path = out or results_dir(lab.device.slug) / f"{exp.name}.csv"
    write_csv(path, records)
    show_bench(exp, records)
    console.print(f"wrote {len(records)} rows to {path}")


@app.command()
def ceilings(
    refresh: bool = typer.Option(False, "--refresh", help="measure again even if results/<gpu>/ceilings.csv exists"),
) -> None:
    """This card's own limits: copy bandwidth, FP32 FMA rate, cuBLAS FP32 and TF32 at 4096^3 and 8192^3.
    Measured once, stored in results/<gpu>/ceilings.csv, reused until --refresh."""
    from rich.table import Table

    from gpulab.ceilings import ensure
    from gpulab.gpu.device import require_gpu

    device = require_gpu()
    folder = results_dir(device.slug)
    with console.status("measuring ceilings") as status:
        found = ensure(device, folder, refresh=refresh, progress=lambda text: status.update(f"ceilings: {text}"))
    first = found.rows[0]
    table = Table(title=f"Ceilings of {first.get('gpu')} (driver {first.get('driver')}, {first.get('date')})",
                  title_justify="left")
    for col in ("ceiling", "GB/s", "GFLOP/s", "time ms", "SM MHz after", "what"):
        table.add_column(col, justify="left" if col in ("ceiling", "what") else "right")
    for r in found.rows:
        table.add_row(r["ceiling"], f"{r['gbps']:,.0f}" if r.get("gbps") else "",
                      f"{r['gflops']:,.0f}" if r.get("gflops") else "", f"{r['time_ms']:.4f}",
                      str(r.get("sm_clock_mhz") or ""), r.get("what") or "")
    console.print(table)
    verb = "measured and wrote" if found.measured else "reused (gpulab ceilings --refresh to measure again)"
    console.print(f"{verb} {found.path}")


@app.command()
def run(
    arch: Optional[str] = typer.Option(None, "--arch", help="compile-only target when there is no GPU (default sm_90)"),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", help="default results/<gpu>/"),
) -> None:
    """The main job: every experiment at its default shapes, CSVs under results/<gpu>/, a summary.
    With no GPU: compile every variant, print the resource table, and say what needs a GPU."""
    from gpulab.experiments import all_experiments
    from gpulab.gpu.device import NO_GPU_HINT, probe

    info, reason = probe()
    if info is None:
        _compile_everything(arch or "sm_90")
        console.print(f"[bold]No NVIDIA GPU here[/] ({reason}).")
        console.print(f"Everything above compiled for {arch or 'sm_90'}; {NO_GPU_HINT}.", markup=False)
        return

    from gpulab.lab import Lab, LabOptions, derive, plan
    from gpulab.records import write_csv

    lab = Lab(LabOptions())
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
    from gpulab.gpu.timing import TimingPolicy
    from gpulab.lab import Lab, LabOptions, RunSpec, compile_spec, parse_param_overrides

    exp = get_experiment(experiment)
    v = exp.variant(variant)
    if not v.params:
        raise GpulabError(f"{exp.name} {v.name} has no params to tune")
    if limit < 1:
        raise GpulabError("--limit must be at least 1")
    overrides = parse_param_overrides(param or [])
    for name, values in overrides.items():
        v.param_grid({name: values})  # validates names and values with the usual messages
    shapes = (resolve_shapes(exp, size, shape) if (size or shape)
              else [exp.shape(*s) for s in (exp.tune_shapes or exp.default_shapes)])
    ok, rejected = t.feasible(v, t.search_space(v, overrides))
    lab = Lab(LabOptions(timing=TimingPolicy(warmup_ms=10.0, target_ms=100.0, min_reps=5, max_reps=50)))
    folder = results_dir(lab.device.slug)
    current = t.tuned_defaults(exp, folder)(v)
    configs = t.sample(ok, limit, first=current)
    console.print(f"{exp.name} {v.name}: {len(ok) + len(rejected)} configs, {len(rejected)} rejected by "
                  f"constraints, timing {len(configs)} on {', '.join(s.label for s in shapes)}")
    for params, reason in rejected[:5]:
        console.print(f"  skipped {v.params_label(params)}: {reason}", markup=False)
    path = folder / f"tune-{exp.name}-{v.name}.csv"
    rows = t.resume_rows(path)
    done = t.done_keys(rows)
    if done:
        console.print(f"resuming: {len(done)} config x shape results already in {path}")
    lab.preflight([RunSpec(exp, v, current, s) for s in shapes])
    with progress_bar() as bar:
        task = bar.add_task("tuning", total=len(configs) * len(shapes))
        for params in configs:
            for s in shapes:
                spec = RunSpec(exp, v, params, s)
                bar.update(task, description=spec.label)
                if (v.params_label(params), s.label) not in done:
                    rows.append(_tune_one(lab, spec, compile_spec, rows, path))
                bar.advance(task)
    scored = []
    for params in configs:
        mine = [r for r in rows if (r.get("params") or "") == v.params_label(params)]
        value = t.score(mine, shapes)
        if value is not None:
            scored.append((value, params))
    if not scored:
        raise GpulabError(f"no config of {v.name} ran correctly on every shape; see {path}")
    scored.sort(key=lambda x: -x[0])
    best_value, best = scored[0]
    tried = [r for r in rows if (r.get("params") or "") in {v.params_label(p) for p in configs}]
    by_shape = t.best_by_shape(tried, shapes)
    t.write_best(folder, exp, v, best, best_value, shapes, lab.env, by_shape)
    from rich.table import Table

    unit = "GFLOP/s" if exp.bound == "compute" else "GB/s"
    table = Table(title=f"{exp.name} {v.name}: best configs (geomean {unit} over {len(shapes)} shapes)",
                  title_justify="left")
    table.add_column("params")
    table.add_column(unit, justify="right")
    for value, params in scored[:10]:
        table.add_row(v.params_label(params), f"{value:,.0f}")
    console.print(table)
    for label, entry in by_shape.items():
        console.print(f"  fastest at {label}: {v.params_label(entry['params'])} ({entry['rate']:,.0f})")
    console.print(f"best overall {v.params_label(best)} and the fastest per shape saved to "
                  f"{t.tuned_path(folder)}; bench and run use them; every result in {path}")


def _tune_one(lab, spec, compile_spec, rows: list[dict], path: Path) -> dict:
    """One config x shape. A row marking it unfinished is saved first, so a run that dies inside it
    (a fault poisons the CUDA context) is skipped, with that reason, when the tune resumes."""
    from gpulab import tune as t

    pending = spec.base_record() | {"skip_reason": "did not finish: the process stopped during this run"}
    t.save_rows(path, rows + [pending])
    resources = compile_spec(spec, lab.arch).resources
    if resources.spill_stores_bytes:
        record = pending | resources.as_record() | {"skip_reason": "spills registers to local memory"}
    else:
        try:
            record = lab.execute(spec)
        except GpulabError as exc:
            if "faulted" in str(exc):
                raise
            record = spec.base_record() | {"skip_reason": str(exc)}
    t.save_rows(path, rows + [record])
    return record


@app.command()
def report(
    results: Path = typer.Option(Path("results"), "--results", help="the folder of per-GPU results"),
) -> None:
    """Plots (PNG) and one HTML page per card, from the CSVs under results/<gpu>/."""
    from gpulab.experiments import all_experiments
    from gpulab.records import read_csv, write_atomic
    from gpulab.ceilings import ceilings_path
    from gpulab.ceilings import load as load_ceilings
    from gpulab.report import html, plots
    from gpulab.report.markdown import best_lines, provenance

    gpu_dirs = sorted(p for p in results.glob("*") if p.is_dir())
    if not gpu_dirs:
        raise GpulabError(f"no results under {results}/; run gpulab bench or gpulab run first")
    for gpu_dir in gpu_dirs:
        ceils = load_ceilings(ceilings_path(gpu_dir))
        sections = []
        for exp in all_experiments():
            csv_path = gpu_dir / f"{exp.name}.csv"
            if not csv_path.exists():
                continue
            records = read_csv(csv_path)
            title = f"{exp.name}: {exp.title}"
            if exp.bound == "compute":
                png = plots.plot_compute(records, title, gpu_dir / f"{exp.name}.png",
                                         ceiling_gflops=ceils.fma_gflops if ceils else None,
                                         libraries=tuple(exp.vendor_baselines()))
            else:
                png = plots.plot_memory(records, title, gpu_dir / f"{exp.name}.png",
                                        ceiling_gbps=ceils.copy_gbps if ceils else None)
            sections.append({"title": title, "records": records, "png": png,
                             "notes": best_lines(records, exp.baseline).splitlines(),
                             "provenance": provenance(records).strip("_")})
        if sections:
            out = gpu_dir / "report.html"
            write_atomic(out, html.page(gpu_dir.name, sections))
            console.print(f"wrote {out} and {len(sections)} plot(s) in {gpu_dir}/")


@app.command()
def readme(
    readme_path: Path = typer.Option(Path("README.md"), "--readme", help="the file with generated blocks"),
    results: Path = typer.Option(Path("results"), "--results", help="the folder of per-GPU results"),
) -> None:
    """Regenerate the README's result tables (blocks <!-- gpulab:GPU-EXPERIMENT -->) from the CSVs."""
    from gpulab.experiments import all_experiments
    from gpulab.report.markdown import ceilings_block, experiment_block, ladder_block, update_readme

    if not readme_path.exists():
        raise GpulabError(f"{readme_path} not found; run from the repository root or pass --readme")
    blocks = {}
    for gpu_dir in sorted(p for p in results.glob("*") if p.is_dir()):
        if (gpu_dir / "ceilings.csv").exists():
            blocks[f"{gpu_dir.name}-ceilings"] = ceilings_block(gpu_dir / "ceilings.csv")
        for exp in all_experiments():
            csv_path = gpu_dir / f"{exp.name}.csv"
            if csv_path.exists():
                rate = "gflops" if exp.bound == "compute" else "gbps"
                blocks[f"{gpu_dir.name}-{exp.name}"] = experiment_block(
                    csv_path, exp.baseline, rate, exp.readme_variants)
                if exp.headline_shape:
                    blocks[f"{gpu_dir.name}-{exp.name}-ladder"] = ladder_block(
                        csv_path, exp, exp.shape(*exp.headline_shape).label)
    done = update_readme(readme_path, blocks)
    console.print(f"regenerated {len(done)} block(s): {', '.join(done) or 'none'}")


# -- counters: Nsight Compute ------------------------------------------------------------------
def _one_shape(exp, size: Optional[str], shape: Optional[str]):
    """The one shape a profile takes: --size or --shape, else the experiment's first default."""
    if size is None and shape is None:
        return exp.default_shape_list()[0]
    shapes = resolve_shapes(exp, size, [shape] if shape else None)
    if len(shapes) != 1:
        raise GpulabError("profile one shape at a time: give one --size or one --shape")
    return shapes[0]


def _profile_header(prof) -> str:
    from gpulab.profile_target import CHECK_LAUNCHES, TOTAL_LAUNCHES, WARMUP_LAUNCHES

    dev = prof.info.get("device", {})
    return (f"[bold]{prof.spec.label}[/] on {dev.get('name', '?')} ({dev.get('arch', '?')}), "
            f"ncu {prof.ncu_version or '?'}: launch {TOTAL_LAUNCHES} of {TOTAL_LAUNCHES} captured "
            f"({CHECK_LAUNCHES} checked, {WARMUP_LAUNCHES} warm-up), clocks unlocked, caches flushed per pass")


def _save_profiles(profiles, csv_path: Optional[Path]) -> Path:
    from gpulab.profiling import profile_csv_path, upsert_records

    path = csv_path or profile_csv_path(profiles[0])
    upsert_records(path, [p.record() for p in profiles])
    return path


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
) -> None:
    """Profile one launch under Nsight Compute: predicted | measured for every counted quantity,
    the headline metrics with a reading each, the top stalls; the counters join the record (CSV)."""
    from gpulab.experiments import get_experiment
    from gpulab.profiling import profile as run_profile, spec_for
    from gpulab.report.profile_tables import counted_table, headline_table, stalls_table, top_stall_line

    if out is not None and not full:
        raise GpulabError("--out is where --full saves its report: add --full")
    exp = get_experiment(experiment)
    spec = spec_for(experiment, variant, param or [], _one_shape(exp, size, shape))
    prof = run_profile(spec, full=full, report_out=out, seed=seed)
    console.print(_profile_header(prof))
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
    console.print(f"wrote the record to {_save_profiles([prof], csv_path)}", markup=False)


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
    from gpulab.profiling import profile as run_profile, spec_for
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
    console.print(f"wrote both records to {_save_profiles(profiles, csv_path)}", markup=False)


# -- predictions: the access model, no GPU -----------------------------------------------------
# The H200 lent for development, as reference/h200.md records it: used for the roofline floor only
# when no card's measured ceilings are at hand, and labelled so.
H200_REFERENCE_CEILINGS = {"fma_gflops": 64_000.0, "copy_gb_per_s": 4_180.0}


def _predict_ceilings(gpu: Optional[str]) -> tuple[Optional[float], Optional[float], str]:
    """(FMA GFLOP/s, copy GB/s, where they come from) for the roofline floor: results/<gpu>/
    ceilings.csv of --gpu, else of the GPU in this machine, else of the one card with results, else
    the H200 reference values (labelled as such)."""
    from gpulab.ceilings import FILE_NAME, ceilings_path, load

    slug = gpu
    if slug is None:
        from gpulab.gpu.device import probe

        info, _ = probe()
        if info is not None:
            slug = info.slug
        else:
            found = sorted(p.parent.name for p in Path("results").glob(f"*/{FILE_NAME}"))
            slug = found[0] if len(found) == 1 else None
    if slug is not None:
        stored = load(ceilings_path(results_dir(slug)))
        if stored is not None and stored.fma_gflops and stored.copy_gbps:
            first = stored.rows[0]
            when = str(first.get("date") or "")[:10]
            return (stored.fma_gflops, stored.copy_gbps,
                    f"measured on {first.get('gpu') or slug}{' ' + when if when else ''} ({stored.path})")
        if gpu is not None:
            raise GpulabError(f"no complete ceilings in {ceilings_path(results_dir(slug))}; measure them on that card "
                              "with gpulab ceilings, or leave out --gpu")
    ref = H200_REFERENCE_CEILINGS
    return (ref["fma_gflops"], ref["copy_gb_per_s"],
            "H200 REFERENCE values from reference/h200.md, not measured by gpulab: run gpulab ceilings on the card")


def _predict_summary_table(title: str, p: dict):
    from rich.table import Table

    from gpulab.model.predict import NCU_METRICS

    table = Table(title=title, title_justify="left")
    for col, justify in (("quantity", "left"), ("predicted", "right"), ("ncu metric it compares with", "left")):
        table.add_column(col, justify=justify)

    def count(label, key):
        table.add_row(label, f"{p[key]:,}", NCU_METRICS.get(key, ""))

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
    if p.get("smem_ldgsts_requests"):  # cp.async: its global side is in the global loads above
        count("cp.async instructions (LDGSTS; shared wavefronts not modelled)", "smem_ldgsts_requests")
        count("  global requests (lanes that read; in the global loads above)", "gmem_ldgsts_requests")
    table.add_row("compulsory DRAM bytes (inputs read once, output written once)",
                  f"{p['dram_compulsory_bytes']:,}", "dram__bytes_read.sum + dram__bytes_write.sum")
    table.add_row("FLOPs", f"{p['flops']:,.0f}", "")
    table.add_row("arithmetic intensity (flop per compulsory DRAM byte)",
                  f"{p['arithmetic_intensity_flop_per_byte']:.2f}", "")
    return table


def _predict_instruction_table(rows: list[dict]):
    from rich.table import Table
    from rich.text import Text  # instruction names hold brackets (A[row][k]) that are not markup

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

    from gpulab.experiments import get_experiment
    from gpulab.model.predict import check_launch, instruction_table, summarize
    from gpulab.profile_target import make_spec
    from gpulab.profiling import parse_variant_arg, single_params

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
    fma, copy, source = _predict_ceilings(gpu)
    p = summarize(rows, model, fma, copy)
    elapsed = time.perf_counter() - start
    threads = model.block[0] * model.block[1] * model.block[2]
    blocks = model.grid[0] * model.grid[1] * model.grid[2]
    console.print(f"[bold]{spec.label}[/]: predicted from the access model, before any counter is read "
                  f"({'every block and step evaluated' if exhaustive else 'exact by symmetry classes'}, {elapsed:.2f} s)")
    console.print(f"  grid {model.grid} x block {model.block}: {blocks:,} blocks, {blocks * -(-threads // 32):,} warps",
                  markup=False, highlight=False)
    console.print(_predict_summary_table(f"{exp.name} {v.name}: the launch", p))
    console.print(f"roofline floor {p['roofline_floor_ms']:.4f} ms, {p['roofline_bound']}-bound: "
                  f"{p['flops']:,.0f} flop / {fma:,.0f} GFLOP/s = {p['roofline_compute_ms']:.4f} ms, "
                  f"{p['dram_compulsory_bytes']:,} B / {copy:,.0f} GB/s = {p['roofline_memory_ms']:.4f} ms", markup=False,
                  highlight=False)
    console.print(f"  ceilings: {source}", markup=False, highlight=False)
    console.print(_predict_instruction_table(rows))


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
    from rich.table import Table
    from rich.text import Text

    from gpulab import fidelity as fid
    from gpulab.gpu.ncu import find_ncu

    if rejudge:
        _rejudge_fidelity([out] if out else sorted(Path("results").glob("*/" + fid.FILE_NAME)))
        return
    specs = fid.plan(experiments or None, split_list(variant) or None, shapes)
    find_ncu()  # fail before the first run when ncu is missing
    results: list = []
    path = out
    with progress_bar() as bar:
        task = bar.add_task("fidelity", total=len(specs))
        for spec in specs:
            bar.update(task, description=f"ncu: {spec.label}")
            res = fid.measure_one(spec, seed=seed)
            results.append(res)
            good, judged = res.exact
            status = f"error: {res.error}" if res.error else (f"{good}/{judged} counted quantities exact" if judged else "no model: measured only")
            console.print(Text(f"  {spec.label}: {status} ({res.seconds:.1f} s)"))
            if path is None and (slug := fid.gpu_slug_of(results)):
                path = fid.fidelity_path(slug)
            if path is not None:
                fid.save(path, results)  # after every run: an interrupted run keeps what it measured
            bar.advance(task)
    if path is None:
        raise GpulabError("no run produced counters, so nothing was written; see the errors above")
    table = Table(title="quantities that differ from the prediction (arbitration noise aside)", title_justify="left")
    for col in ("run", "quantity", "predicted", "measured", "ratio", "verdict / note"):
        table.add_column(col, justify="right" if col in ("predicted", "measured", "ratio") else "left")
    shown = 0
    for res in results:
        for r in res.rows:
            bad = r.get("verdict") in ("differs", "error") or str(r.get("verdict", "")).startswith("outside")
            if bad:
                shown += 1
                fmt = lambda x: "" if x is None else f"{x:,.0f}"  # noqa: E731
                table.add_row(Text(res.spec.label), r["quantity"], fmt(r.get("predicted")), fmt(r.get("measured")),
                              "" if r.get("ratio") is None else f"{r['ratio']:.4f}",
                              Text(f"{r.get('verdict')}: {r.get('note') or ''}".strip(": ")))
    if shown:
        console.print(table)
    modelled = [res for res in results if res.exact[1]]
    perfect = sum(1 for res in modelled if res.exact[0] == res.exact[1])
    console.print(f"{perfect} of {len(modelled)} modelled runs exact on every counted quantity; "
                  f"{len(results) - len(modelled)} runs measured without a model or failed; wrote {path}", markup=False)


def _rejudge_fidelity(paths: list[Path]) -> None:
    from gpulab import fidelity as fid
    from gpulab.records import read_csv, write_csv

    if not paths or not all(p.exists() for p in paths):
        raise GpulabError("no fidelity table to rejudge: run `gpulab fidelity` on the card first, or name one with --out")
    for path in paths:
        rows, kept = fid.rejudge(read_csv(path))
        write_csv(path, rows)
        for why in kept:
            console.print(f"  left as recorded: {why}", markup=False)
        judged = [r for r in rows if r.get("quantity") in fid.COUNTED and r.get("exact") is not None]
        good = sum(1 for r in judged if r["exact"] is True or r.get("verdict") == "arbitration")
        console.print(f"{path}: {good} of {len(judged)} counted quantities exact under the current models", markup=False)


def _compile_everything(arch: str) -> None:
    from gpulab.experiments import all_experiments
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
    with progress_bar() as bar:
        task = bar.add_task(f"compiling for {arch}", total=len(specs))
        for spec in specs:
            records.append(compile_record(spec, arch))
            bar.advance(task)
    console.print(resources_table(records, f"Resources per thread and block, compiled for {arch} (ptxas)"))


def main() -> None:
    try:
        app(standalone_mode=False)
    except GpulabError as exc:
        from rich.markup import escape

        err_console.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True, highlight=False)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted; nothing was written")
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # click's usage errors arrive here in non-standalone mode
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(2)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
