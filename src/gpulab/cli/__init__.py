"""The command line. Thin: parse, call the lab and the reports, print. Every GpulabError becomes one
line on stderr and exit code 2, with no traceback."""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as Bar

from gpulab import api
from gpulab.errors import GpulabError, RunsFailed
from gpulab.experiments import load_problem
from gpulab.experiments.base import parse_positive_int
from gpulab.experiments.napkin import napkin_lines
from gpulab.files import check_writable
from gpulab.gpu import nvml
from gpulab.gpu.compile import DEFAULT_ARCH, check_arch, nvrtc_version
from gpulab.gpu.device import no_gpu_hint, probe
from gpulab.jobs import best as choosing
from gpulab.jobs import tune as tuning
from gpulab.jobs.bench import BenchOptions
from gpulab.jobs.search import DEFAULT_BUDGET
from gpulab.records import RESULTS_ROOT, check_picks_file, environment, upsert_picks, write_csv
from gpulab.report.markdown import card_folders, page_files, readme_blocks, unplaced, update_pages
from gpulab.report.picks import pick_accuracy
from gpulab.report.tables import (
    ab_table, best_table, bench_table, card_state, ceilings_table, experiment_table, model_alone_line, model_error_line,
    ranking_table, replay_table, resources_table, run_line, run_summary_table, summary_table, tune_table,
)
from gpulab.run.args import single_params
from gpulab.run.lab import parse_param_overrides
from gpulab.run.progress import Progress
from gpulab.run.worker import unfinished_line
from gpulab.version import __version__

class PlainTypes(TyperGroup):
    """Help that names an option's value in words, as click does (TEXT, INTEGER, PATH), and shows
    nothing after a flag: typer 0.2x prints Python's type names there (<bool>, <list[Path]>)."""

    def get_params(self, ctx):
        return _plain_types(super().get_params(ctx))

    def get_command(self, ctx, name):
        command = super().get_command(ctx, name)
        if command is not None:
            _plain_types(command.get_params(ctx))
        return command


_WORDS = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "Path": "PATH", "bool": ""}


def _plain_types(params: list) -> list:
    for param in params:
        if hasattr(param, "bare_type"):  # typer 0.2x's own parameters (older typer prints click's words itself)
            label = re.sub(r"^list\[(.*)\]$", r"\1", param.bare_type())
            word = "" if getattr(param, "is_flag", False) else _WORDS.get(label, label.upper())
            param.display_type_rich = lambda ctx, word=word: word
    return params


# take_problems reads it off the line before typer sees the rest, so no command declares it: the
# top-level help and every command's say it here.
PROBLEM_HELP = "--problem FILE.py: a problem written in PyTorch (gpulab.Problem.from_torch) joins the experiments."
app = typer.Typer(
    cls=PlainTypes,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="gpulab: is the kernel correct, how fast against this card's ceilings and cuBLAS, "
    f"what should the memory system do, and what did the counters say. Every command also takes {PROBLEM_HELP}",
)
# Piped output (CI logs, `| less`) gets wide tables instead of rich's 80-column default. (A stream
# closed before gpulab started is None: main() says so.)
console = Console(width=None if sys.stdout is not None and sys.stdout.isatty() else 160)
err_console = Console(stderr=True, width=None if sys.stderr is not None and sys.stderr.isatty() else 400)


def _print_version(asked: bool) -> None:
    """`gpulab --version`: gpulab's version and the NVRTC it compiles with (what a bug report needs
    first; no GPU needed)."""
    if not asked:
        return
    try:
        nvrtc = f"NVRTC {nvrtc_version()}"
    except GpulabError as exc:
        nvrtc = str(exc)
    console.print(f"gpulab {__version__} ({nvrtc}, Python {sys.version.split()[0]})", markup=False, highlight=False)
    raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="print gpulab's version and its NVRTC's, and exit")) -> None:
    pass  # the options every command shares; the app's help= above is what `gpulab --help` says


# -- shared option parsing --------------------------------------------------------------------
def split_list(text: Optional[str], option: str) -> list[str]:
    """A comma-separated option's names; [] when the option is not given. Given, it must name
    something: `--variant ' , ,'` is refused, never read as 'all'."""
    if text is None:
        return []
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise GpulabError(f"{option} {text!r} names nothing: give comma-separated names, or leave {option} out for all")
    return names


def shapes_arg(sizes: Optional[str], shapes: Optional[list[str]]) -> Optional[list]:
    """--size 512,1024 (every dimension n) and --shape MxNxK (repeatable or comma-separated, as
    --size and --variant are), as the API takes them; None (the experiment's defaults) when neither
    is given."""
    if sizes is None and not shapes:
        return None
    found: list = []
    if sizes is not None:
        found += [parse_positive_int(s, "size") for s in split_list(sizes, "--size")]
    return found + [s for text in shapes or [] for s in split_list(text, "--shape")]


def one_shape_arg(size: Optional[str], shape: Optional[str]):
    """The one shape of --size N or --shape MxNxK (None: the experiment's first default)."""
    found = shapes_arg(size, [shape] if shape else None)
    if found is not None and len(found) != 1:
        raise GpulabError("one shape at a time: give one --size or one --shape")
    return found[0] if found else None


def params_arg(texts: Optional[list[str]]) -> dict:
    """--param NAME=V1,V2 (repeatable) as the API's dict: {'NAME': (V1, V2)}."""
    return parse_param_overrides(texts or [])


def progress_bar():
    return Bar(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True,
    )


class Live(Progress):
    """The command line's gpulab.Progress. On a terminal, one bar (its description the run under
    way). Elsewhere (a pipe, a CI log), no bar: one line per finished run as it finishes
    (`describe` writes it: report.tables.run_line for a record by default), so a log shows results
    from the first run on. With `lines`, the lines go above the bar on a terminal too."""

    def __init__(self, what: str, describe=None, lines: bool = False):
        self.what = what
        self.describe = describe if describe is not None else (lambda r: run_line(r) if isinstance(r, dict) else None)
        self.lines = lines
        self.interactive = console.is_terminal
        self.bar = progress_bar() if self.interactive else None
        self.task = None

    def __enter__(self):
        if self.bar is not None:
            self.bar.__enter__()
            self.task = self.bar.add_task(self.what, total=None)
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc) if self.bar is not None else None

    def planned(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, total=count, completed=0)

    def started(self, label: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=label)

    def finished(self, record) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)
        if (self.bar is None or self.lines) and record is not None and (line := self.describe(record)):
            self.say(line)

    def say(self, text) -> None:
        """A line above the bar (rich renderables keep their styles; strings are printed as they are)."""
        out = self.bar.console if self.bar is not None else console
        out.print(text, markup=False, highlight=False, soft_wrap=True) if isinstance(text, str) else out.print(text)

    def status(self, text: str) -> None:
        if text.startswith("measuring this card's ceilings once") or self.bar is None:
            self.say(text)  # said once, above the bar; without a bar every step is a line
        else:
            self.bar.update(self.task, description=text)


KERNEL_HELP = "a .cu file that declares a variant in a /* gpulab variant */ block, added beside the built-ins (repeatable)"
SUITE_HELP = "the shapes of a suite: a built-in (llm: Llama-3 8B and 70B linear layers) or your own .toml file"


def kernels_of(kernel: Optional[list[Path]]) -> tuple[Path, ...]:
    return tuple(kernel or ())


def exit_if_unfinished(lab) -> None:
    """After a sweep whose rows are all written: one line naming the runs that faulted or timed
    out, and exit code 1."""
    if line := unfinished_line(lab):
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)
        sys.exit(1)


def say_card_state() -> None:
    """Once per timing command: one line where NVML cannot read the card (its rows' clock, power,
    temperature and throttle columns stay empty). Not where there is no GPU: the command's own error
    says that (asked second: NVML answers without importing CuPy, which the command's worker does)."""
    if (line := nvml.unavailable_line()) and probe()[0] is not None:
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)


def say(text: str) -> None:
    err_console.print(text, markup=False, highlight=False, soft_wrap=True)


def clocks_locked(mhz: Optional[int]):
    """--lock-clocks: the SM clock locked for the command and reset after, also on Ctrl-C, SIGTERM
    (main turns it into Ctrl-C's way out) or an error (gpulab.gpu.nvml.locked_clocks). Nothing to lock
    where there is no GPU: the command's own error says that."""
    return nvml.locked_clocks(mhz if probe()[0] is not None else None, say)


NOISE_HELP = "repeat until the median's 95% interval is within this of it (or the budget ends), e.g. 0.5% or 0.005"
LOCK_HELP = "lock the SM clock at MHz while timing (NVML, needs root; reset after, also on Ctrl-C)"


def show_bench(experiment, records: list[dict]) -> None:
    console.print(bench_table(records, f"{experiment.name}: {experiment.title}"))
    for line in napkin_lines(records):  # memory-bound experiments: the bytes behind each GB/s
        console.print("  " + line, markup=False, highlight=False)
    summary = summary_table(records, experiment.baseline, f"{experiment.name}: best per shape",
                            tuple(experiment.vendor_baselines()))
    if summary is not None:
        console.print(summary)
    found = pick_accuracy(records, libraries=tuple(experiment.vendor_baselines()))
    if found.misses:  # the best row was not the fastest somewhere: say where, and how to make it so
        worst = found.slowest()
        slowest = f"; at {worst.shape} it ran {1 + worst.slower:.2f}x the fastest ({worst.fastest})" if worst else ""
        console.print(f"  best row: {found.line()}{slowest}", markup=False, highlight=False)
        for command in found.retune(experiment.name):
            console.print(f"  to have it run what was fastest there: {command}", markup=False, highlight=False)


# -- commands ---------------------------------------------------------------------------------
@app.command("list")
def list_command(
    experiment: Optional[str] = typer.Argument(None, help="one experiment (default: all)"),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
) -> None:
    """Experiments, their variants, params and accepted shapes (built-in, on GPULAB_PATH, plugins)."""
    if kernel and not experiment:
        raise GpulabError("--kernel adds a variant to one experiment: name it, e.g. gpulab list sgemm --kernel mine.cu")
    for exp in [api.experiment(experiment, kernels_of(kernel))] if experiment is not None else api.experiments():
        console.print(experiment_table(exp))
        console.print(f"  default shapes: {', '.join('x'.join(map(str, s)) for s in exp.default_shapes)}\n")


@app.command()
def bench(
    experiment: str = typer.Argument(..., help="experiment name (gpulab list shows them)"),
    variant: Optional[str] = typer.Option(None, "--variant", "-v", help="comma-separated variants; default all"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="NAME=V1,V2 (repeatable)"),
    size: Optional[str] = typer.Option(None, "--size", help="comma-separated sizes; every dimension = size"),
    shape: Optional[list[str]] = typer.Option(None, "--shape", help="e.g. 1000x3000x777 (repeatable or comma-separated)"),
    out: Optional[Path] = typer.Option(None, "--out", help="CSV path; default results/<gpu>/<experiment>.csv"),
    warm_l2: bool = typer.Option(False, "--warm-l2", help="do not flush L2 between repetitions"),
    exact: bool = typer.Option(False, "--exact", help="check with small-integer inputs (exact equality)"),
    seed: int = typer.Option(0, "--seed", help="random-number generator start for the inputs"),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", help="compile on N processes while this machine's GPUs time (Dask)"),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="a running Dask cluster, e.g. tcp://host:8786"),
    noise: str = typer.Option("0.5%", "--noise", help=NOISE_HELP),
    retime_throttled: bool = typer.Option(False, "--retime-throttled", help="time a row again after a cool-down "
                                          "where it was timed under a heat or power slowdown"),
    lock_clocks: Optional[int] = typer.Option(None, "--lock-clocks", metavar="MHZ", help=LOCK_HELP),
    suite: Optional[str] = typer.Option(None, "--suite", help=SUITE_HELP + "; rows to results/<gpu>/<experiment>-<suite>.csv"),
    contenders: Optional[float] = typer.Option(None, "--contenders", help="at each shape only the variants the model "
                                               "puts within this factor of its pick's time (gpulab best shows the pick)"),
    no_sanitize: bool = typer.Option(False, "--no-sanitize", help="call rows best without compute-sanitizer's check "
                                     "first (each says 'not sanitized'); for sweeps of many shapes"),
    alone: bool = typer.Option(False, "--alone", help="at each shape also time the config the model picks with "
                               "nothing tuned or timed near it (what gpulab best --alone judges)"),
) -> None:
    """Check and time variants of one experiment; print a table; write a CSV."""
    say_card_state()
    with clocks_locked(lock_clocks), Live(f"bench {experiment}") as live:
        options = BenchOptions(warm_l2=warm_l2, exact=exact, seed=seed, out=out, workers=workers, scheduler=scheduler,
                               noise=noise, retime_throttled=retime_throttled, contenders=contenders,
                               sanitize=not no_sanitize, alone=alone)
        records = api.bench(experiment, split_list(variant, "--variant") or None, shapes_arg(size, shape), params_arg(param),
                            kernels=kernels_of(kernel), options=options, progress=live, suite=suite)
    for card in records.per_card:  # one per card model (several only on a cluster)
        show_bench(api.experiment(experiment, kernels_of(kernel)), card)
        console.print(f"wrote {len(card)} rows to {card.path}")
    for card in records.per_card:
        exit_if_unfinished(card.lab)


@app.command()
def ceilings(
    refresh: bool = typer.Option(False, "--refresh", help="measure again even if results/<gpu>/ceilings.csv exists"),
) -> None:
    """This card's own limits: copy bandwidth, L2 read bandwidth, FP32 FMA rate, cuBLAS FP32 and TF32 at 4096^3 and 8192^3;
    on sm_80 and newer also the BF16 tensor-core rate (wgmma on sm_90, mma.sync before) and cuBLAS BF16 at both sizes,
    on sm_90 the TF32 wgmma rate too (what sgemm's 3xTF32 v14 is held to, a third of it).
    Measured once, stored in results/<gpu>/ceilings.csv, reused until --refresh."""
    with Live("measuring ceilings") as live:
        found = api.ceilings(refresh=refresh, progress=live)
    console.print(ceilings_table(found.ceilings))
    verb = "measured and wrote" if found.measured else "reused (gpulab ceilings --refresh to measure again)"
    console.print(f"{verb} {found.path}")


@app.command()
def run(
    experiments: Optional[list[str]] = typer.Argument(None, help="experiments to run (default: all)"),
    arch: Optional[str] = typer.Option(None, "--arch", help=f"compile-only target when there is no GPU (default {DEFAULT_ARCH})"),
    out_dir: Optional[Path] = typer.Option(None, "--out-dir", help="default results/<gpu>/; with no GPU, where the "
                                           "resource table goes (resources-<arch>.csv; default: not written)"),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
    full: bool = typer.Option(False, "--full", help="every variant's sweep at every default shape (the tour: one "
                              "representative shape per experiment)"),
    suite: Optional[str] = typer.Option(None, "--suite", help=SUITE_HELP + ": every variant of each experiment it "
                                        "is for, at its shapes"),
) -> None:
    """The main job, a tour: each experiment's ladder at one representative shape beside the vendor
    library and gpulab's best row, then one screen of summary (also results/<gpu>/run-summary.csv);
    --full runs the whole grid. With no GPU: compile every variant, print the resource table, and
    say what needs a GPU."""
    if arch is not None:
        check_arch(arch)  # an empty or unknown --arch is refused, GPU or not
    if suite is not None:
        api.suite_experiments(suite, experiments or None, kernels=kernels_of(kernel))  # a bad suite: one line, GPU or not
    info, reason = probe()
    if info is None:
        _compile_only(experiments, kernels_of(kernel), arch or DEFAULT_ARCH, out_dir, reason)
        return

    console.print(f"[bold]{info.name}[/] ({info.arch}, {info.sm_count} SMs, driver {environment(info, info.arch)['driver']}, "
                  f"CUDA runtime {info.cuda_runtime_version}): {'the whole grid' if full else 'the tour'}", highlight=False)
    say_card_state()
    with Live("run") as live:
        done = api.run(experiments, kernels=kernels_of(kernel), full=full, out_dir=out_dir, progress=live, suite=suite)
    for name, records in done.by_experiment.items():
        show_bench(api.experiment(name, kernels_of(kernel) if experiments else ()), records)
        console.print(f"wrote {records.path}\n", highlight=False)
    mode = f"suite {suite}" if suite else "full" if full else "tour"
    console.print(run_summary_table(done.summary, f"gpulab run ({mode}): the best row of each experiment"))
    console.print(f"wrote {done.summary.path}", highlight=False)
    exit_if_unfinished(done.lab)


@app.command()
def tune(
    experiment: str = typer.Argument(..., help="experiment name"),
    variant: Optional[str] = typer.Argument(None, help="the variant whose params to search (with --suite and no "
                                            "variant: the model's top variants at each of the suite's shapes)"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="restrict a param: NAME=V1,V2"),
    size: Optional[str] = typer.Option(None, "--size", help="comma-separated sizes to score on"),
    shape: Optional[list[str]] = typer.Option(None, "--shape", help="shapes to score on (repeatable or comma-separated)"),
    budget: Optional[str] = typer.Option(None, "--budget", help="how much to time: configs (40) or time "
                                         "(90s, 10m, 1h); default 120 configs"),
    strategy: Optional[str] = typer.Option(None, "--strategy", help="grid, random or bayes (optuna's TPE, the "
                                           "tune extra); default grid when the space fits in the budget, else random"),
    seed: int = typer.Option(0, "--seed", help="random-number generator start for the random and bayes searches"),
    limit: Optional[int] = typer.Option(None, "--limit", hidden=True, help="the old name of --budget N"),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
    workers: Optional[int] = typer.Option(None, "--workers", help="compile on N processes while this machine's GPUs time (Dask)"),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="a running Dask cluster, e.g. tcp://host:8786"),
    suite: Optional[str] = typer.Option(None, "--suite", help=SUITE_HELP + ": score on its shapes"),
    top: int = typer.Option(2, "--top", help="with --suite and no variant: tune the variants the model ranks in the "
                            "first TOP at each shape (gpulab best), each at the shapes where it does"),
) -> None:
    """Search a variant's params, time each config on several shapes, save results as it goes
    (re-running resumes), and record the best config for this card in results/<gpu>/tuned.json.
    With --suite and no variant: at each of the suite's shapes the model (gpulab best) ranks the
    variants; each of the first --top (2) is tuned at the shapes where it is among them, one tune
    after the other, so the best row there then runs what was measured fastest ('tuned here').
    Each tune times up to --budget configs at each of its shapes: with a suite, give a small --budget."""
    with Live("tuning") as live:
        rows = api.tune(experiment, variant, params_arg(param), shapes_arg(size, shape),
                        budget=budget if budget is not None else limit if limit is not None else DEFAULT_BUDGET,
                        strategy=strategy, seed=seed, kernels=kernels_of(kernel), workers=workers,
                        scheduler=scheduler, progress=live, suite=suite, top=top)
    for done in getattr(rows, "tunes", [rows]):
        _show_tune(done)


def _show_tune(rows) -> None:
    """One tune's tables and what it saved, per card model."""
    for card in rows.per_card:  # one per card model (several only on a cluster)
        plan, result = card.plan, card.result
        exp, v, shapes = plan.experiment, plan.variant, plan.shapes
        console.print(tune_table(exp, v, result.scored, len(shapes)))
        for label, entry in result.by_shape.items():
            console.print(f"  fastest at {label}: {v.params_label(entry['params'])} ({entry['rate']:,.0f})")
        recorded = tuning.load_tuned(plan.folder).get(exp.name, {}).get(v.name, {}).get("by_shape", {})
        if kept := [label for label in recorded if label not in result.by_shape]:
            console.print(f"  kept from an earlier tune: the picks at {', '.join(kept)}")
        for line in _untuned_rivals(plan, result):
            console.print(line)
        if result.overall_kept_from:
            console.print(f"the fastest per shape saved to {tuning.tuned_path(plan.folder)}; its best overall is "
                          f"still the one tuned at {', '.join(result.overall_kept_from)} (a tune replaces it only "
                          f"when it scores every one of those shapes); every result in {plan.path}")
        else:
            console.print(f"best overall {v.params_label(result.best)} and the fastest per shape saved to "
                          f"{tuning.tuned_path(plan.folder)}; bench and run use them; every result in {plan.path}")
    for card in rows.per_card:
        exit_if_unfinished(card.lab)


def _untuned_rivals(plan, result) -> list[str]:
    """A line for each shape only this variant was tuned at where the model expects another variant
    to be faster than the tune's fastest (gpulab.jobs.best.rivals_ahead): the best row there leaves
    the choice to the model, which is an estimate until the rival is tuned there too."""
    exp, v = plan.experiment, plan.variant
    chooser = choosing.selector(exp, plan.folder)
    lines = []
    for label in result.by_shape:
        # A rival tuned here too is none: there the measurements decide.
        rivals = chooser.untuned_rivals(exp.shape(*tuning.shape_of(label)), v.name, label)
        if rivals:
            tuned_s = chooser.tuned_time(v.name, label)
            names = ", ".join(f"{e.variant.name} ({e.seconds * 1e3:.4f} ms)" for e in rivals[:3])
            lines.append(f"  at {label} the model expects {names} faster than {v.name}'s tuned "
                         f"{tuned_s * 1e3:.4f} ms, so the best row there is the model's choice, not the tune's: "
                         f"tune {rivals[0].variant.name} there too to let the card decide "
                         f"(gpulab tune {exp.name} {rivals[0].variant.name} --shape {label})")
    return lines


@app.command("tune-replay")
def tune_replay(
    csv: Path = typer.Argument(..., help="a recorded tune: results/<gpu>/tune-<experiment>-<variant>.csv"),
    shape: list[str] = typer.Option(..., "--shape", help="the shapes a config is scored on (repeatable or comma-separated); "
                                    "only configs recorded at every one take part"),
    budget: Optional[int] = typer.Option(None, "--budget", help="configs per search (default: a quarter of those recorded)"),
    seeds: int = typer.Option(20, "--seeds", help="searches per strategy, each from its own random-number start (0, 1, ...)"),
) -> None:
    """Replay random and bayes against a tune already recorded: how near each comes, with fewer
    evaluations, to the best config the recorded tune found. Nothing is timed: a config's score is
    the rate the CSV holds for it (on the card and dates it names)."""
    rec, replays = api.tune_replay(csv, shapes_arg(None, shape), budget, seeds)
    best = max(rec.scores, key=lambda label: rec.scores[label] or 0.0)
    console.print(f"{rec.experiment.name} {rec.variant.name} at {', '.join(s.label for s in rec.shapes)}: "
                  f"{len(rec.configs)} configs recorded at every shape ({rec.dates[0]} to {rec.dates[1]}), "
                  f"{sum(v is None for v in rec.scores.values())} of them could not run; the best {best} at "
                  f"{rec.best:,.0f}", highlight=False)
    console.print(replay_table(f"the best found by each search, % of the recorded best ({csv})", replays))


@app.command()
def best(
    experiment: str = typer.Argument(..., help="experiment name (gpulab list shows them)"),
    size: Optional[str] = typer.Option(None, "--size", help="comma-separated sizes; every dimension = size"),
    shape: Optional[list[str]] = typer.Option(None, "--shape", help="e.g. 300x1000x1000 (repeatable or comma-separated)"),
    suite: Optional[str] = typer.Option(None, "--suite", help=SUITE_HELP),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="whose results to choose from: results/<gpu>/ (default: "
                                      "this machine's card, else the one card with results; with no GPU and "
                                      "no ./results, the card gpulab's own repository recorded)"),
    results: Optional[Path] = typer.Option(None, "--results", help="the folder of per-GPU results [default: results]"),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
    csv_path: Optional[Path] = typer.Option(None, "--csv", help="also write the picks to this CSV (joined with the "
                                            "picks of other shapes it holds; never a bench's results file)"),
    ranking: bool = typer.Option(False, "--ranking", help="also, at each shape, each variant's best config the model "
                                 "weighed: its time, what binds it, its efficiency and whether the card timed it"),
    alone: bool = typer.Option(False, "--alone", help="also, for each suite the card timed: at each of its shapes "
                               "the model's pick with nothing at or very near it (no tune, no run), against the "
                               "rows timed there: how often within 5% of the fastest (a few seconds a suite)"),
) -> None:
    """What gpulab's best row runs at each shape, and why: tuned there, or chosen by the model (waves
    of tiles on the SMs, the access model's bytes against the card's measured ceilings, a split's
    partials, each variant's efficiency where it was measured); under the table, how far the model's
    times were off on each suite the card has timed. Needs no GPU."""
    if shape is not None or size is not None:
        shapes = shapes_arg(size, shape)
    else:
        shapes = None
    if csv_path is not None:
        check_picks_file(csv_path)
    with Live(f"best {experiment}", describe=lambda pick: None) as live:  # the table below says it all
        rows = api.best(experiment, shapes, kernels=kernels_of(kernel), results=results, gpu=gpu, suite=suite,
                        ranking=ranking, progress=live)
    console.print(best_table(rows, f"{experiment}: gpulab's best row" + (f" on the {api.suite(suite).name} suite" if suite else "")))
    if ranking:
        ranked = rows.ranking
        for label in dict.fromkeys(r["shape"] for r in ranked):
            console.print(ranking_table([r for r in ranked if r["shape"] == label],
                                        f"{experiment} {label}: what the model weighed"))
            for r in (r for r in rows.not_weighed if r["shape"] == label):
                console.print(f"  not weighed: {r['variant']}: {r['why']}", markup=False, highlight=False)
    console.print(rows.note, markup=False, highlight=False)
    for held in api.model_error(experiment, kernels=kernels_of(kernel), results=results, gpu=gpu):
        console.print(model_error_line(held), markup=False, highlight=False)
    unread = []
    if alone:
        for held in api.model_alone(experiment, kernels=kernels_of(kernel), results=results, gpu=gpu):
            console.print(model_alone_line(held), markup=False, highlight=False)
            unread += [held["file"]] if held.get("error") else []
    if csv_path is not None:
        kept = len(upsert_picks(csv_path, rows)) - len(rows)
        console.print(f"wrote {len(rows)} pick{'s' if len(rows) != 1 else ''} to {csv_path}" + (f" ({kept} of other shapes kept)" if kept else ""),
                      markup=False)
    if unread:  # asked for and not answered: the lines above say which file and why
        raise GpulabError(f"--alone could not read {', '.join(unread)}: restore it (e.g. git checkout) or run "
                          "the suite's bench again")
    if missing := [r for r in rows if not r.get("variant")]:
        raise RunsFailed(f"{len(missing)} shape(s) have no best row (see chosen_by above)")


@app.command()
def new(
    name: str = typer.Argument(..., help="the experiment's name: a Python package and a CUDA function name"),
    directory: Path = typer.Option(Path("."), "--dir", help="the folder to create NAME/ in (put it on GPULAB_PATH)"),
    like: str = typer.Option("copy", "--like", help="the starting point: copy (memory-bound), sgemm (compute-bound) or stencil"),
) -> None:
    """Scaffold a working experiment of your own: a documented package, one naive variant, its
    access model and tests, outside gpulab's files."""


    folder = api.new(name, directory, like)
    home = folder.parent.resolve()
    console.print(f"wrote {folder}/: " + ", ".join(sorted(p.name for p in folder.iterdir())), markup=False)
    console.print(f"next:\n  export GPULAB_PATH={home}{os.pathsep}$GPULAB_PATH\n  gpulab list {name}\n  gpulab run {name}"
                  f"\n  gpulab predict {name} v0\n  python -m pytest {folder}", markup=False, highlight=False)


@app.command()
def report(
    results: Path = typer.Option(RESULTS_ROOT, "--results", help="the folder of per-GPU results"),
) -> None:
    """Plots (PNG) and one HTML page per card, from the CSVs under results/<gpu>/."""
    # The one import kept here: the page builder loads matplotlib (a third of a second), which no
    # other command needs, so `gpulab --help` and `gpulab list` stay quick.
    from gpulab.report import card_page

    gpu_dirs = card_folders(results)  # every file checked before the first plot is written; none: refused
    for gpu_dir in gpu_dirs:
        if written := card_page.write(gpu_dir):
            out, plotted = written
            console.print(f"wrote {out} and {plotted} plot(s) in {gpu_dir}/")


@app.command()
def readme(
    readme_path: Path = typer.Option(Path("README.md"), "--readme", help="the file with generated blocks"),
    results: Path = typer.Option(RESULTS_ROOT, "--results", help="the folder of per-GPU results"),
    pages: Optional[Path] = typer.Option(None, "--pages", help="the folder of results pages (default: docs/results beside the README)"),
) -> None:
    """Regenerate the result tables (blocks <!-- gpulab:GPU-TABLE -->) of the README and of every
    results page (docs/results/*.md) from the CSVs."""
    if not readme_path.exists():
        raise GpulabError(f"{readme_path} not found; run from the repository root or pass --readme")
    if readme_path.is_dir():
        raise GpulabError(f"{readme_path} is a folder; pass the README file, e.g. --readme {readme_path / 'README.md'}")
    if pages is not None and not pages.exists():
        raise GpulabError(f"{pages} not found; pass the folder of results pages, e.g. --pages docs/results")
    page_list = page_files(pages if pages is not None else readme_path.parent / "docs" / "results")
    blocks = readme_blocks(results)  # every CSV checked before any file is touched
    done = update_pages([readme_path, *page_list], blocks)
    for path, names in done.items():
        console.print(f"{path}: {len(names)} block(s) regenerated", markup=False, highlight=False)
    if left := unplaced(blocks, done):
        console.print(f"no file holds a place for {', '.join(left)}: add <!-- gpulab:NAME --> and "
                      "<!-- /gpulab:NAME --> lines where each belongs", markup=False, highlight=False)


@app.command()
def ab(
    experiment: str = typer.Argument(..., help="experiment name (gpulab list shows them)"),
    a: str = typer.Argument(..., help="A: a variant, e.g. v13 or v13:BM=128, or the vendor library (cublas)"),
    b: str = typer.Argument(..., help="B: the same kinds; the verdict is said of B against A"),
    param: Optional[list[str]] = typer.Option(None, "--param", "-p", help="NAME=VALUE for each side that has NAME (repeatable)"),
    size: Optional[str] = typer.Option(None, "--size", help="every dimension = size (default: the first default shape)"),
    shape: Optional[str] = typer.Option(None, "--shape", help="e.g. 4096x4096x4096"),
    noise: str = typer.Option("0.5%", "--noise", help="the resolution: a difference within it is 'same within noise'"),
    warm_l2: bool = typer.Option(False, "--warm-l2", help="do not flush L2 before each launch"),
    seed: int = typer.Option(0, "--seed", help="random-number generator start for the inputs"),
    csv_path: Optional[Path] = typer.Option(None, "--csv", help="a CSV the two rows join (default: none written)"),
    lock_clocks: Optional[int] = typer.Option(None, "--lock-clocks", metavar="MHZ", help=LOCK_HELP),
    kernel: Optional[list[Path]] = typer.Option(None, "--kernel", "-k", help=KERNEL_HELP),
) -> None:
    """A against B: both checked, then launched in interleaved rounds on the same inputs (each launch
    behind the L2 flush); each one's median and 95% interval, the ratio B / A with its interval, and
    a verdict: faster, slower, or the same within noise."""
    say_card_state()
    with clocks_locked(lock_clocks), Live("ab") as live:
        records = api.ab(experiment, a, b, single_params(param or []), one_shape_arg(size, shape), noise=noise,
                         seed=seed, warm_l2=warm_l2, kernels=kernels_of(kernel), csv=csv_path, progress=live)
    result = records.result
    state = card_state(result.card)
    console.print(ab_table(records, f"{result.a.experiment.name} at {result.a.shape.label}: interleaved rounds"
                                    + (f" ({state})" if state else "")))
    if result.same_run:
        console.print("A and B are the same run: an A/A test of the timer's noise", markup=False)
    if result.hit_budget:
        console.print(f"the budget ended before the ratio's interval was within ±{result.verdict.resolution / 2:.2%}",
                      markup=False)
    console.print(f"verdict: {result.sentence()}", markup=False, highlight=False, soft_wrap=True)  # one line
    if records.path is not None:
        console.print(f"wrote both rows to {records.path}", markup=False)


def _compile_only(experiments, kernels, arch: str, out_dir: Optional[Path], reason: str) -> None:
    """`run` with no GPU: every variant compiled for `arch`, the resource table (also into
    out_dir/resources-<arch>.csv when --out-dir is given); exit 1 if a kernel did not compile."""
    check_arch(arch)
    target = out_dir / f"resources-{arch}.csv" if out_dir is not None else None
    if target is not None:
        check_writable(target)
    with Live(f"compiling for {arch}") as live:
        records = api.compile_only(experiments, kernels=kernels, arch=arch, progress=live)
    console.print(resources_table(records, f"Resources per thread and block, compiled for {arch} (ptxas)"))
    if target is not None:
        write_csv(target, records)
        console.print(f"wrote the resource table to {target}", markup=False)
    console.print(f"[bold]No NVIDIA GPU here[/] ({reason}).")
    console.print(f"Everything above compiled for {arch}; {no_gpu_hint()}.", markup=False)
    if records.broken:
        raise RunsFailed(f"{len(records.broken)} kernel(s) did not compile (marked in the table): "
                         f"{', '.join(records.broken)}")


# The commands around the counters (profile, compare, predict, fidelity, sanitize) live in
# counters.py; importing it here registers them on `app`.
from gpulab.cli import counters  # noqa: E402, F401

for _command in app.registered_commands:
    _command.epilog = _command.epilog or f"Also takes {PROBLEM_HELP}"


INTERRUPTED = ("interrupted: every file written so far is complete, and the one being written, if any, "
               "was left as it was before this run")
# The exit codes of a run stopped by Ctrl-C (SIGINT), by SIGTERM (`timeout`, a batch scheduler) and by
# SIGHUP (its terminal closed): 128 + the signal.
INTERRUPT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
_stopped_by = [signal.SIGINT]  # the signal that stopped this run, for its exit code


def _terminate(signum, frame) -> None:
    """SIGTERM and SIGHUP take Ctrl-C's way out (KeyboardInterrupt): the same cleanup, every file whole
    or as it was, a tune's unfinished config not marked as one that stopped the process, clocks locked
    by --lock-clocks reset; exit 143 (129)."""
    _stopped_by[0] = signal.Signals(signum)
    raise KeyboardInterrupt


def _interrupted() -> None:
    _fail(INTERRUPTED, INTERRUPT_CODES[_stopped_by[0]])


def main() -> None:
    if sys.stdout is None:  # `gpulab ... >&-`: nowhere to write the tables
        _fail("standard output is closed; send it somewhere, e.g. > results.txt or > /dev/null", 2)
    # Output that cannot carry a character (PYTHONIOENCODING=ascii, a C locale) shows '?' instead
    # of stopping the command halfway.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    try:
        sys.argv[1:] = take_problems(sys.argv[1:])
        code = app(standalone_mode=False)
    except GpulabError as exc:
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:  # raised outside typer's own handling (while it starts, say)
        _interrupted()
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
            _interrupted()
        if isinstance(exc, OSError) and exc.filename:  # the file system refused: say which file and why
            _fail(f"cannot use {exc.filename}: {exc.strerror or exc}; check the path and its permissions", 2)
        raise
    # In non-standalone mode typer turns Ctrl-C into a returned 130 (and typer.Exit into its code);
    # commands themselves return nothing.
    if code == 130:
        _interrupted()
    if isinstance(code, int) and code:
        sys.exit(code)


def take_problems(args: list[str]) -> list[str]:
    """Every command takes `--problem FILE.py` (repeatable, anywhere on the line): the file's
    PROBLEM joins the experiments for this command and the processes it starts
    (gpulab.experiments.load_problem). The other words are left for the command."""
    rest, i = [], 0
    while i < len(args):
        word = args[i]
        if word == "--problem" or word.startswith("--problem="):
            path = word.partition("=")[2] if "=" in word else (args[i + 1] if i + 1 < len(args) else "")
            if not path:
                raise GpulabError("--problem needs a file, e.g. --problem softmax.py")
            load_problem(path)
            i += 1 if "=" in word else 2
            continue
        rest.append(word)
        i += 1
    return rest


def _fail(message: str, code: int) -> None:
    if sys.stderr is None:  # nowhere to say it: the exit code alone
        sys.exit(code)
    err_console.print(f"[red]error:[/] {escape(message)}" if code not in INTERRUPT_CODES.values() else escape(message),
                      soft_wrap=True, highlight=False)
    sys.exit(code)

