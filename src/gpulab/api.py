"""The Python API: what the command line does, as functions that return records.

    import gpulab
    rows = gpulab.bench("sgemm", variants=["v1", "v9"], shapes=[1024, "1000x3000x777"])
    rows.to_pandas()                      # a DataFrame, where pandas is installed
    gpulab.predict("sgemm", "v1", params={"TILE": 16}, shape=512)
    gpulab.profile("coalesce", "rows", shape="8192x8192")
    gpulab.ceilings()

Every function takes an experiment by name (built-in, on GPULAB_PATH, or an installed plugin) and
`kernels=[path.cu, ...]` for one-file variants (gpulab.experiments.declared). A shape is a number
(every dimension that size), text ('1000x3000x777'), a tuple of numbers or a Shape; params are a
dict, {'TILE': 16} or, where a sweep is meant, {'TILE': (8, 16)}. The command line is a thin layer
over these functions: it parses options, calls one, and prints what it returns. Errors are
gpulab.errors.GpulabError with a message that says what to do.

Long calls report through `progress`, a gpulab.Progress (gpulab.run.progress): pass your own
subclass to see each run as it finishes; by default they stay quiet.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from gpulab.jobs import ab as ab_job
from gpulab.arith import whole
from gpulab.errors import CompileError, GpulabError
from gpulab.experiments import all_experiments, get_experiment
from gpulab.experiments import load_problem as load_problem_file
from gpulab.experiments.torch_problem import Problem
from gpulab.experiments import suites as suite_files
from gpulab.experiments.base import Shape
from gpulab.experiments.declared import parse_declaration, where_raised
from gpulab.gpu.compile import DEFAULT_ARCH, check_arch
from gpulab.gpu.device import probe, require_gpu
from gpulab.gpu.ncu import find_ncu
from gpulab.jobs import bench as bench_job
from gpulab.jobs import fidelity as fid
from gpulab.jobs import new as scaffold
from gpulab.jobs import replay as replaying
from gpulab.jobs import search, suite_plan
from gpulab.jobs import sanitize as sanitizing
from gpulab.jobs import tune as tuning
from gpulab.jobs.bench import BenchOptions
from gpulab.jobs import best as choosing
from gpulab.jobs import best_records
from gpulab.jobs import model_errors as model_check
from gpulab.jobs.ceilings import this_card
from gpulab.jobs.main import MainRun, main_run
from gpulab.jobs.main import suite_experiments as main_suite_experiments
from gpulab.jobs.profile import check_profile_csv, reports_folder, save_profiles
from gpulab.jobs.profile import profile as run_profile
from gpulab.model.predict import check_launch, instruction_table, summarize
from gpulab.records import (BEST, RESULTS_ROOT, DamagedFile, Records, card_folder, check_run_file, only_card,
                            results_folder)
from gpulab.records.ceilings import ceilings_for_roofline
from gpulab.run import sweep
from gpulab.gpu.stats import parse_noise
from gpulab.run.args import one_config, spec_for
from gpulab.run.lab import Lab, LabOptions, RunSpec, compile_record, constraint_reason, param_values, plan
from gpulab.run.progress import QUIET, Progress

# gpulab/__init__.py's _API names the same, less `experiments` (there the registry package's name);
# tests/test_api.py holds the two lists equal.
__all__ = ["BenchOptions", "MainRun", "Prediction", "Problem", "Progress", "Records", "Shape", "ab", "bench", "best", "card",
           "ceilings", "compare", "compile_only", "experiment", "experiments", "fidelity", "load_problem",
           "model_alone", "model_error", "new", "predict", "profile", "run", "sanitize", "suite", "tune", "tune_replay", "variants",
           "verify"]


def card():
    """This machine's GPU (name, arch, memory, ...), or None where there is none: what needs one
    (bench, run, profile, ceilings) raises gpulab.errors.NoGpuError without it."""
    return probe()[0]


# -- naming things --------------------------------------------------------------------------------
def _progress(progress) -> Progress:
    """`progress` as the long calls take it: a gpulab.Progress (its hooks overridden), or None."""
    if progress is None:
        return QUIET
    if not isinstance(progress, Progress):
        raise GpulabError(f"progress is a gpulab.Progress (subclass it and override started, finished, ...); "
                          f"got {progress!r:.60}")
    return progress


def _bench_options(options) -> BenchOptions:
    if options is None:
        return BenchOptions()
    if not isinstance(options, BenchOptions):
        raise GpulabError(f"options is a gpulab.BenchOptions(warm_l2=..., save=..., ...); got {options!r:.60}")
    return options


def experiment(name: str, kernels: Sequence[str | Path] | None = ()):
    """The Experiment called `name`, with the one-file variants `kernels` added."""
    if not isinstance(name, str) or not name.strip():
        raise GpulabError(f"an experiment is named by text, e.g. 'sgemm' (gpulab list shows them); got {name!r:.60}")
    if kernels is None:
        kernels = ()
    if isinstance(kernels, (str, Path)):
        kernels = [kernels]
    if bad := [k for k in kernels if not isinstance(k, (str, Path))]:
        raise GpulabError(f"kernels are paths of .cu files, e.g. kernels=['mine.cu']; got {bad[0]!r:.60}")
    exp = get_experiment(name, kernels=tuple(Path(k) for k in kernels))
    _check_reachable(exp, len(kernels))
    return exp


def _check_reachable(exp, added: int) -> None:
    """The last `added` variants (a kernel file's each) must not take a name that --variant and the
    plan read as the vendor library's or as gpulab's best row: such a variant would be listed and
    never run."""
    taken = {**{lib: "the vendor library" for lib in exp.vendor_baselines()}, BEST: "gpulab's best row"}
    for v in exp.variants[len(exp.variants) - added:]:
        if v.name in taken:
            line = parse_declaration(Path(v.file)).lines.get("name", 1)
            raise GpulabError(f"{v.file}:{line}: variant name '{v.name}' is taken by {taken[v.name]}; give the file "
                              "another name (its `name:` line)")


def load_problem(path: str | Path):
    """The experiment a problem file defines (PROBLEM = gpulab.Problem.from_torch(...)), from now
    on known by its name to every function here and to the processes they start."""
    return load_problem_file(path)


def experiments() -> list:
    """Every experiment: built-in, on GPULAB_PATH, and from the `gpulab.experiments` entry points."""
    return all_experiments()


def variants(name: str | None = None, kernels: Sequence[str | Path] = ()) -> Records:
    """One row per variant (of one experiment, or of all): what `gpulab list` shows."""
    chosen = [experiment(name, kernels)] if name is not None else experiments()  # "" is refused there, not all
    return Records({"experiment": e.name, "variant": v.name, "summary": v.summary, "file": v.file,
                    "params": " ".join(f"{p.name}={p.default}" for p in v.params),
                    "choices": "; ".join(f"{p.name}: {','.join(map(str, p.choices))}" for p in v.params),
                    "min_sm": v.min_sm, "has_access_model": v.access is not None}
                   for e in chosen for v in e.variants)


def shape_of(exp, shape) -> Shape:
    """One shape as a caller gives it: a number (every dimension that size), 'MxNxK' text, a tuple
    of numbers, or a Shape of this experiment."""
    if isinstance(shape, Shape):
        exp.validate_shape(shape)
        return shape
    if whole(shape) is not None:  # an int, or numpy's
        return exp.square(whole(shape))  # a size below 1 is refused there, in one line
    if isinstance(shape, str):
        return exp.square(int(shape)) if shape.strip().isdigit() else exp.parse_shape(shape)
    if isinstance(shape, (tuple, list)) or (hasattr(shape, "tolist") and getattr(shape, "ndim", None) == 1):
        values = [whole(v) for v in (shape.tolist() if hasattr(shape, "tolist") else shape)]
        if len(values) != len(exp.dims) or None in values:
            raise GpulabError(f"shape {tuple(shape)!r:.60} for {exp.name} needs {len(exp.dims)} whole numbers "
                              f"({'x'.join(exp.dims)}), e.g. {tuple([1024] * len(exp.dims))}")
        return exp.shape(*values)
    example = "x".join(["1024"] * len(exp.dims))
    raise GpulabError(f"a shape is a number, text like '{example}', a tuple of {len(exp.dims)} numbers or a Shape; "
                      f"got {shape!r:.60}")


def shapes_of(exp, shapes: Sequence[Any] | Any | None = None) -> list[Shape]:
    """Every shape of `shapes` (see shape_of; one shape alone is taken as a list of one), or the
    experiment's default shapes when none is given."""
    if shapes is None:
        return exp.default_shape_list()
    if isinstance(shapes, (str, Shape)) or whole(shapes) is not None or (
            isinstance(shapes, tuple) and shapes and all(whole(v) is not None for v in shapes)):
        shapes = [shapes]
    elif not isinstance(shapes, Iterable) or isinstance(shapes, (bytes, dict)):
        shapes = [shapes]  # one shape of another kind (2.5, a dict): shape_of says what a shape is
    found = [shape_of(exp, s) for s in shapes]
    if not found:
        raise GpulabError("no shape given: name at least one, e.g. shapes=[1024] (or leave it out for the defaults)")
    return found


def one_shape(exp, shape: Any = None) -> Shape:
    """The one shape a prediction or a profile takes: `shape`, else the first default."""
    if shape is None:
        return exp.default_shape_list()[0]
    found = shapes_of(exp, shape)
    if len(found) != 1:
        raise GpulabError("one shape at a time: give one (shape=512 or shape=\"512x256x128\")")
    return found[0]


# -- checking and timing ----------------------------------------------------------------------------
def suite(name_or_path: str | Path):
    """A shape suite (gpulab.experiments.suites.Suite): a built-in by name ('llm') or a .toml file
    of your own (docs/contract.md, section 5), read and checked."""
    return _load_suite(name_or_path)


def _load_suite(name_or_path):
    """suite(), under a name the functions whose `suite=` argument hides it can call."""
    if not isinstance(name_or_path, (str, Path)) or not str(name_or_path).strip():
        raise GpulabError(f"a suite is named ('llm') or a path ('mine.toml'); got {name_or_path!r:.60}")
    return suite_files.load(name_or_path)


def bench(experiment_name: str, variants: Sequence[str] | None = None, shapes: Sequence[Any] | None = None,
          params: dict | None = None, *, kernels: Sequence[str | Path] = (), options: BenchOptions | None = None,
          progress: Progress | None = None, suite: str | Path | None = None) -> Records:
    """Check and time variants of one experiment (default: all, with their sweeps, the vendor library
    beside, and gpulab's best row per shape, gpulab.jobs.best; name it in `variants` as 'best'),
    against this card's ceilings. Every finished row reaches the CSV as the sweep goes (default
    results/<gpu>/<experiment>.csv; `options` says otherwise, and how to run: BenchOptions), so a
    crash late in it keeps the rest. Runs go through the isolated worker (gpulab.run.worker): one
    that faults or hangs is marked in its row; `.lab` says which (gpulab.run.worker.unfinished_line).
    On a cluster (options.workers or .scheduler) `.per_card` holds the Records of each card model,
    written to its own folder (this Records is the first's). `suite` (a built-in's name or a .toml
    file) gives the shapes instead, and its columns to every row, which go to
    results/<gpu>/<experiment>-<suite>.csv."""
    exp = experiment(experiment_name, kernels)
    names = _names(variants, "variants")
    if suite is not None and shapes is not None:
        raise GpulabError("give shapes or a suite, not both")
    found = _load_suite(suite) if suite is not None else None
    return bench_job.bench(exp, names, param_values(params), shapes_of(exp, shapes) if found is None else [],
                           _bench_options(options), _progress(progress), suite=found)


def _names(names, what: str) -> list[str] | None:
    """A list of names as a caller gives it (one text alone is a list of one); None for 'all'."""
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    if not all(isinstance(n, str) and n.strip() for n in names):
        raise GpulabError(f"{what} are named by text, e.g. ['v1', 'v9']; got {list(names)!r:.60}")
    if not names:
        raise GpulabError(f"no {what} named: name at least one, or leave it out for all of them")
    return list(names)


def best(experiment_name: str, shapes: Sequence[Any] | None = None, *, kernels: Sequence[str | Path] = (),
         results: str | Path | None = None, gpu: str | None = None, suite: str | Path | None = None,
         ranking: bool = False, progress: Progress | None = None) -> Records:
    """What gpulab's best row runs at each shape (default: the experiment's default shapes; or a
    suite's), from what card `gpu` measured (a results folder's name, e.g. 'h200'; default: this
    machine's card, else the one card with results, else, with no GPU, the one card gpulab's
    repository recorded results for, else none): its tune, its runs and its
    ceilings (gpulab.jobs.best). One row per shape with `variant`, `params`, `chosen_by` (why:
    'tuned here', 'tuned at <shape>' or the model's numbers) and `model_ms` (the model's time, where
    it chose), with a suite's columns; a shape no variant runs has an empty `variant` and
    `chosen_by` saying why; `progress` hears of each shape (the model takes a second or more at a
    shape where many variants run); the records' `note` says which card's ceilings and runs the
    model read (Selector.basis). With `ranking`, the records' `.ranking` holds what the model
    weighed at each shape (jobs.best_records.ranking_records): each variant's best config in the model's
    order (by time; a config the card timed there first within best.MEASURED_EDGE), with `rank`,
    `model_ms`, `vs_fastest` (over the fastest modelled), `bound` (compute, DRAM or L2),
    `efficiency` and `efficiency_from`, `timed` ('at this shape', 'on this card' at shapes of its
    kind, 'other kind only', or 'never'; on a card whose runs are lent, 'at this shape on h200' and
    'on h200') and `picked`; and `.not_weighed` the variants the model left out at each shape, with
    `variant` and `why` (the card's architecture, the variant's best_refusal). Needs no GPU."""
    exp = experiment(experiment_name, kernels)
    if suite is not None and shapes is not None:
        raise GpulabError("give shapes or a suite, not both")
    chooser = choosing.selector(exp, results_folder(gpu, results))
    if suite is not None:
        found = [(s.shape, s.columns) for s in _load_suite(suite).shapes(exp)]
    else:
        found = [(s, {}) for s in shapes_of(exp, shapes)]
    progress = _progress(progress)
    progress.planned(len(found))
    rows, ranked, left_out = [], [], []
    for shape, columns in found:
        progress.started(f"best {exp.name} {shape.label}")
        rows.append(best_records.pick_record(exp, chooser, shape, columns))
        if ranking:
            ranked += best_records.ranking_records(exp, chooser, shape, columns)
            left_out += best_records.not_weighed_records(exp, chooser, shape, columns)
        progress.finished(rows[-1])
    records = Records(rows, note=chooser.basis())
    if ranking:
        records.ranking = Records(ranked)
        records.not_weighed = Records(left_out)
    return records


def model_error(experiment_name: str, *, kernels: Sequence[str | Path] = (), results: str | Path | None = None,
                gpu: str | None = None) -> Records:
    """How far the best-row model's times held on a card: for each suite's results CSV of the
    experiment in its folder (results/<gpu>/<experiment>-<suite>.csv: rows the model never
    calibrates on), the model's time for each config timed there over the time measured
    (gpulab.jobs.model_errors). One row per file: `file`, `configs`, `typical_error` (1.13:
    a typical estimate 13% off, either way), `within_10pct`, `within_25pct`; a file that cannot be
    read has `error` instead. No rows where the card has no suite results. Needs no GPU."""
    exp = experiment(experiment_name, kernels)
    folder = results_folder(gpu, results)
    if folder is None:
        return Records([])
    chooser = choosing.selector(exp, folder)
    rows = []
    for path in sorted(folder.glob(suite_files.csv_name(exp.name, "*"))):
        try:
            ratios = [r for found in model_check.model_errors(chooser, path).values() for r in found]
        except DamagedFile as exc:
            rows.append({"file": str(path), "error": str(exc)})
            continue
        if ratios:
            rows.append({"file": str(path), **model_check.error_summary(ratios)})
    return Records(rows)


def model_alone(experiment_name: str, *, kernels: Sequence[str | Path] = (), results: str | Path | None = None,
                gpu: str | None = None) -> Records:
    """How often the best-row model alone picks well on a card: for each suite's results CSV of the
    experiment in its folder, at each shape timed there, the pick of a model that knows nothing at
    or very near that shape (its tunes and runs there left out: gpulab.jobs.model_errors.Unseen),
    against the rows timed there. One row per file: `file`, `experiment`, `shapes`, `within_5pct`
    (the pick's own config timed there within 5% of the fastest row there), `timed` (shapes where
    the pick's config was timed), `misses` (text: timed and slower), `untimed` (text: picks whose
    config was not timed there, counted neither way); a file that cannot be read has `error`
    instead. Needs no GPU."""
    exp = experiment(experiment_name, kernels)
    folder = results_folder(gpu, results)
    if folder is None:
        return Records([])
    rows = []
    for path in sorted(folder.glob(suite_files.csv_name(exp.name, "*"))):
        try:
            found = model_check.picks_alone(exp, folder, path)
        except DamagedFile as exc:
            rows.append({"file": str(path), "error": str(exc)})
            continue
        if found["shapes"]:
            rows.append({"file": str(path), "experiment": exp.name, **found, "misses": "; ".join(found["misses"]),
                         "untimed": "; ".join(found["untimed"])})
    return Records(rows)


def verify(experiment_name: str, variants: Sequence[str] | None = None, shapes: Sequence[Any] | None = None,
           params: dict | None = None, *, kernels: Sequence[str | Path] = (), exact: bool = False,
           seed: int = 0) -> Records:
    """Check without timing: each variant (default: all, at its sweep or default params) at each
    shape (default: the experiment's test shapes) against the reference, one record per run with
    `correct`, `max_rel_err`, `wrong_count`, or `skip_reason` where its constraints refuse it."""
    exp = experiment(experiment_name, kernels)
    chosen = shapes_of(exp, shapes) if shapes is not None else [exp.shape(*s) for s in exp.test_shapes]
    specs = plan(exp, _names(variants, "variants"), param_values(params), chosen, with_libraries=False)
    lab = Lab(LabOptions(seed=seed, exact=exact))
    records = Records()
    for spec in specs:
        if reason := constraint_reason(spec, lab.arch):
            records.append(spec.base_record() | {"skip_reason": reason})
        else:
            records.append(spec.base_record() | lab.verify(spec).as_record())
    return records


def run(experiment_names: Sequence[str] | None = None, *, kernels: Sequence[str | Path] = (), full: bool = False,
        out_dir: str | Path | None = None, progress: Progress | None = None,
        suite: str | Path | None = None) -> MainRun:
    """The main job on a GPU (gpulab.jobs.main): each experiment (default: all) as the tour, its
    ladder at one representative shape beside the vendor library and gpulab's best row, or with
    `full` at every default shape with every sweep, or with `suite` at the suite's shapes (the
    experiments it is for); one CSV each under results/<gpu>/ (or out_dir) and run-summary.csv. A
    MainRun: `.by_experiment` {name: Records}, `.summary`, `.lab`."""
    if suite is not None and full:
        raise GpulabError("full (the default shapes' grid) or suite (a suite's shapes): give one, not both")
    chosen = _chosen(experiment_names, kernels)
    found = None
    if suite is not None:
        found = _load_suite(suite)
        chosen = suite_experiments(found, chosen, named=bool(experiment_names))
    return main_run(chosen, full, out_dir, _progress(progress), suite=found)


def suite_experiments(suite, experiments: Sequence | None = None, *, named: bool = True,
                      kernels: Sequence[str | Path] = ()) -> list:
    """The experiments a run of `suite` covers (those named, each one the suite is for; else all it is
    for), each checked against the suite (its dimensions, its limits): a bad suite is refused here, in
    one line, before anything runs."""
    if isinstance(suite, (str, Path)):
        suite = _load_suite(suite)
    if experiments is None or (experiments and isinstance(experiments[0], str)):
        experiments, named = _chosen(experiments, kernels), bool(experiments)
    chosen = main_suite_experiments(list(experiments), suite, named)
    for exp in chosen:
        suite.shapes(exp)
    return chosen


def _chosen(names: Sequence[str] | None, kernels: Sequence[str | Path]) -> list:
    names = _names(names, "experiments")
    if kernels and len(names or ()) != 1:
        raise GpulabError("a kernel file adds a variant to one experiment: name that one experiment, e.g. sgemm")
    if names and len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise GpulabError(f"{', '.join(twice)} named twice: name each experiment once")
    return [experiment(n, kernels) for n in names] if names else experiments()


def compile_only(experiment_names: Sequence[str] | None = None, *, kernels: Sequence[str | Path] = (),
                 arch: str = DEFAULT_ARCH, progress: Progress | None = None) -> Records:
    """No GPU needed: compile every variant (its sweep, else its defaults) at the first default
    shape for `arch`; one record per compile with what ptxas reported and the occupancy it allows.
    A kernel that does not compile gets a row saying so (NVRTC's first error); `.broken` names them."""
    progress = _progress(progress)
    check_arch(arch)
    specs = []
    for exp in _chosen(experiment_names, kernels):
        shape = exp.default_shape_list()[0]
        for v in exp.variants:
            grid = v.param_grid(dict(v.sweep)) if v.sweep else [v.default_params()]
            specs += [RunSpec(exp, v, p, shape) for p in grid]
    progress.planned(len(specs))
    records = Records()
    records.broken = []
    for spec in specs:
        progress.started(spec.label)
        try:
            records.append(compile_record(spec, arch))
        except CompileError as exc:  # one broken kernel: mark it (its message is one line), compile the others
            records.broken.append(spec.label)
            records.append(spec.base_record() | {"skip_reason": f"does not compile: {exc}"})
        progress.finished(records[-1])
    return records


# -- predictions ------------------------------------------------------------------------------------
@dataclasses.dataclass
class Prediction:
    """What the access model says one launch must do: `summary` (counters, roofline floor), one row
    per memory instruction, and where the ceilings of the floor came from."""

    spec: Any
    model: Any
    summary: dict
    instructions: Records
    ceilings_source: str
    fma_gflops: float  # the compute ceiling's rate in the problem's FLOPs: the FMA rate, or the variant's own
    copy_gbps: float
    seconds: float
    exhaustive: bool

    def record(self) -> dict:
        return self.spec.base_record() | self.summary

    def to_pandas(self):
        return self.instructions.to_pandas()


def spec_of(experiment_name: str, variant: str, params: dict | None = None, shape: Any = None,
            kernels: Sequence[str | Path] = ()) -> RunSpec:
    """One run: `variant` may carry params ('v1:TILE=16'); `params` ({'TILE': 16}) the rest; each
    named once."""
    exp = experiment(experiment_name, kernels)
    return spec_for(exp, variant, params or {}, one_shape(exp, shape))


def predict(experiment_name: str, variant: str, params: dict | None = None, shape: Any = None, *,
            gpu: str | None = None, exhaustive: bool = False, kernels: Sequence[str | Path] = ()) -> Prediction:
    """The access model's counters for one launch, before any counter is read; needs no GPU."""
    spec = spec_of(experiment_name, variant, params, shape, kernels)
    exp, v = spec.experiment, spec.variant
    if v is None:
        raise GpulabError(f"{spec.library} is the vendor library: gpulab does not hold its code, so there is no "
                          f"access model to predict from; `gpulab profile {exp.name} {spec.library}` measures it")
    if v.access is None:
        modelled = [x.name for x in exp.variants if x.access is not None]
        raise GpulabError(f"{exp.name} {v.name} has no access model yet, so there is nothing to predict"
                          + (f"; variants of {exp.name} with one: {', '.join(modelled)}" if modelled else ""))
    start = time.perf_counter()
    try:
        model = v.access(spec.params, spec.shape)
    except GpulabError:
        raise
    except ValueError as exc:  # a config the model refuses to describe
        raise GpulabError(f"{spec.label}: the access model cannot be evaluated: {exc}") from None
    except Exception as exc:  # a bug in the model (a user's, on GPULAB_PATH): where it raised, in one line
        raise GpulabError(f"{where_raised(exc)}: {spec.label}: the access model raised {type(exc).__name__}: "
                          f"{exc}") from None
    try:
        check_launch(model, v.launch(spec.params, spec.shape))
        rows = instruction_table(model, exhaustive=exhaustive)
    except ValueError as exc:  # a model the evaluator refuses (too slow without classes, bad classes)
        raise GpulabError(f"{spec.label}: the access model cannot be evaluated: {exc}") from None
    ceiling, ops = exp.ceiling_for(v.name)
    fma, copy, source = ceilings_for_roofline(gpu, compute=ceiling, ops=ops)
    summary = summarize(rows, model, fma, copy)
    return Prediction(spec, model, summary, Records(rows), source, fma, copy, time.perf_counter() - start, exhaustive)


def ab(experiment_name: str, a: str, b: str, params: dict | None = None, shape: Any = None, *,
       noise: float | str = 0.005, seed: int = 0, warm_l2: bool = False, kernels: Sequence[str | Path] = (),
       csv: str | Path | None = None, progress: Progress | None = None) -> Records:
    """A against B (gpulab.jobs.ab): two runs of one experiment at one shape (`a`, `b`: 'v13',
    'v13:BM=128' or 'cublas'; `params`, {'BK': 16}, apply to each side that has them), checked, then
    timed in interleaved rounds on the same inputs until the ratio time B / time A is resolved to
    `noise` ('0.5%' or 0.005) or the budget ends. Two records, A's and B's (each with its median, 95%
    interval and range, and both with the ratio, its interval and `ab_verdict`: 'faster', 'slower'
    or 'same within noise', said of B); `.result` is the gpulab.jobs.ab.AbResult. With `csv`, the
    rows join that file. progress.status hears each step."""
    exp = experiment(experiment_name, kernels)
    spec_a, spec_b = ab_job.specs(exp, a, b, one_config(params or {}), one_shape(exp, shape))
    policy = ab_job.AbPolicy(noise=parse_noise(noise), flush_l2=not warm_l2)
    if csv is not None:
        check_run_file(Path(csv))  # a damaged file or a path that cannot be written: refused before any work
    lab = Lab(LabOptions(seed=seed))
    result = ab_job.run(lab, spec_a, spec_b, policy, _progress(progress).status)
    rows = result.rows(lab.env)
    records = Records(rows, ab_job.save(Path(csv), rows) if csv is not None else None)
    records.result = result
    return records


# -- counters (Nsight Compute) ------------------------------------------------------------------------
def profile(experiment_name: str, variant: str, params: dict | None = None, shape: Any = None, *,
            full: bool = False, out: str | Path | None = None, csv: str | Path | None = None, seed: int = 0,
            kernels: Sequence[str | Path] = (), save: bool = True) -> Records:
    """One launch under Nsight Compute beside the model's prediction; the record (one row) joins
    results/<gpu>/profile.csv (or `csv`) when `save`; the capture's report is kept in the reports/
    folder beside that CSV either way (gpulab.jobs.profile). `.profiles` holds the full Profile. `variant`
    may name the vendor library ('cublas'): its one call is captured, whatever kernels it picks."""
    if out is not None and not full:
        raise GpulabError("out is where a full profile saves its report: add full")
    spec = spec_of(experiment_name, variant, params, shape, kernels)
    if save:
        check_profile_csv(Path(csv) if csv else None)
    prof = run_profile(spec, full=full, report_out=Path(out) if out else None, seed=seed,
                       reports_dir=reports_folder(csv) if csv else None)
    records = Records([prof.record()], save_profiles([prof], Path(csv) if csv else None) if save else None)
    records.profiles = [prof]
    return records


def compare(experiment_name: str, a: str, b: str, params_a: dict | None = None, params_b: dict | None = None,
            shape: Any = None, *, csv: str | Path | None = None, seed: int = 0, kernels: Sequence[str | Path] = (),
            progress: Progress | None = None) -> Records:
    """Two variants (or two configs of one, or a variant and 'cublas') profiled at one shape: two
    records, `.profiles` both."""
    progress = _progress(progress)
    exp = experiment(experiment_name, kernels)
    the_shape = one_shape(exp, shape)
    spec_a = spec_of(experiment_name, a, params_a, the_shape, kernels)
    spec_b = spec_of(experiment_name, b, params_b, the_shape, kernels)
    if spec_a.label == spec_b.label:
        raise GpulabError(f"A and B are the same run ({spec_a.label}); compare two variants or two configs")
    check_profile_csv(Path(csv) if csv else None)
    profiles = []
    progress.planned(2)
    for spec in (spec_a, spec_b):
        progress.started(f"ncu: {spec.label}")
        profiles.append(run_profile(spec, seed=seed, reports_dir=reports_folder(csv) if csv else None))
        progress.finished(profiles[-1].record())
    records = Records([p.record() for p in profiles], save_profiles(profiles, Path(csv) if csv else None))
    records.profiles = profiles
    return records


def fidelity(experiment_names: Sequence[str] | None = None, variants: Sequence[str] | None = None,
             shapes: str = "both", *, out: str | Path | None = None, seed: int = 0,
             shape_list: Sequence[str] | None = None, params: dict | None = None,
             progress: Progress | None = None) -> Records:
    """Every variant's access model against Nsight Compute (default and/or ragged shapes, or the
    shapes of `shape_list`, 'MxNxK' texts; `params` as bench's): one row per counted quantity, saved
    after every run into `out` (default results/<gpu>/fidelity.csv). progress.finished gets each
    run's gpulab.jobs.fidelity.RunResult; `.results` holds them all (a failed run's `.error` says
    why; the rows recorded for it before are kept)."""
    progress = _progress(progress)
    specs = fid.plan(_names(experiment_names, "experiments"), _names(variants, "variants"),
                     shapes, shape_list, param_values(params))
    find_ncu()  # fail before the first run when ncu is missing
    if out is not None:
        check_run_file(Path(out))  # ... or when the results could not be saved (a damaged file among them)
    progress.planned(len(specs))
    results: list = []
    path = Path(out) if out else None
    for spec in specs:
        progress.started(f"ncu: {spec.label}")
        results.append(fid.measure_one(spec, seed=seed, reports_dir=reports_folder(out) if out else None))
        if path is None and (slug := fid.gpu_slug_of(results)):
            path = fid.fidelity_path(slug)
        if path is not None:
            fid.save(path, results)  # after every run: an interrupted run keeps what it measured
        progress.finished(results[-1])
    if path is None:
        raise GpulabError("no run produced counters, so nothing was written; see the errors above")
    records = Records([row for res in results for row in res.rows], path)
    records.results = results
    return records


def tune(experiment_name: str, variant: str | None = None, params: dict | None = None,
         shapes: Sequence[Any] | None = None, *, budget: int | str = search.DEFAULT_BUDGET, strategy: str | None = None,
         seed: int = 0, kernels: Sequence[str | Path] = (), workers: int | None = None, scheduler: str | None = None,
         progress: Progress | None = None, suite: str | Path | None = None, top: int = 2) -> Records:
    """Search a variant's params (`params` restricts them), time each config on several shapes
    (default: the experiment's tune shapes), saving as it goes (a re-run resumes), and record the
    best config for this card in results/<gpu>/tuned.json. Records: every result of this tune;
    `.result` (scored configs, best per shape), `.plan`. progress.say tells what it found first.
    `strategy`: 'grid', 'random' or 'bayes' (optuna's TPE; the `tune` extra), by default grid when
    the space fits in the budget, else random; `budget`: configs (40) or time ('10m'); `seed`: the random-number
    generator's starting value for random and bayes (gpulab.jobs.search).
    `workers` or `scheduler`: compiled in parallel, timed on every GPU (gpulab.run.sweep), one tune per
    card model, each in `.per_card` (this Records is the first's).

    `suite` (a built-in's name or a .toml file) gives the shapes; with no `variant` named, each of
    the `top` variants the model ranks first at each of its shapes (gpulab.jobs.suite_plan.tune_targets)
    is tuned at the shapes where it ranks so, one tune after the other: Records of every tune's
    results, `.tunes` each tune's Records (with `.plan`, `.result`, `.per_card`)."""
    progress = _progress(progress)
    exp = experiment(experiment_name, kernels)
    if suite is not None:
        if shapes is not None:
            raise GpulabError("give shapes or a suite, not both")
        shapes = [s.shape for s in _load_suite(suite).shapes(exp)]
    if variant is None:
        if suite is None:
            raise GpulabError("name the variant to tune, or give a suite (e.g. llm) to tune the model's "
                              "top variants at each of its shapes")
        return _tune_suite(exp, shapes, params, budget, strategy, seed, kernels, workers, scheduler, progress, top)
    v = exp.variant(variant)
    if not v.params:
        raise GpulabError(f"{exp.name} {v.name} has no params to tune")
    budget = search.Budget.parse(budget)
    search.check_strategy(strategy)
    if strategy == "bayes":
        search.load_optuna()  # missing: one line, before a GPU is opened
    overrides = param_values(params)
    for name, values in overrides.items():
        v.param(name)  # a param the variant does not have would leave the whole search space
        v.param_grid({name: values})  # validates the values with the usual messages
    chosen = shapes_of(exp, shapes) if shapes is not None else tuning.tune_shapes(exp, v)
    if workers is not None or scheduler:
        with sweep.open_cluster(workers, scheduler, tuning.tune_options()) as cluster:
            per_card = [_tune_plan(plan, lambda plan, progress: tuning.run_tune_on(cluster, plan, progress), progress)
                        for plan in tuning.plan_tunes_on(cluster, exp, v, overrides, chosen, budget,
                                                         strategy=strategy, seed=seed)]
    else:
        per_card = [_tune_plan(tuning.plan_tune(exp, v, overrides, chosen, budget, strategy=strategy, seed=seed),
                               tuning.run_tune, progress)]
    per_card[0].per_card = per_card
    return per_card[0]


def tune_replay(csv: str | Path, shapes: Sequence[Any] | Any, evaluations: int | None = None, seeds: int = 20,
                strategies: Sequence[str] | str = replaying.REPLAYED) -> tuple:
    """Replay search strategies against a tune already recorded in `csv` (gpulab.jobs.replay): each
    strategy (`strategies`: 'random', 'bayes' or both) run `seeds` times (random-number generator
    started at 0, 1, ...), `evaluations` configs (default: a quarter of those recorded at every one
    of `shapes`: shapes as everywhere, 4096, '4096x4096x4096', a tuple or a Shape, one or a list),
    each told the rate the CSV holds for it. Nothing is timed. (Recorded, [Replayed])."""
    if not isinstance(csv, (str, Path)) or not str(csv).strip():
        raise GpulabError(f"csv is the path of a tune's CSV (results/<gpu>/tune-<experiment>-<variant>.csv); got {csv!r:.60}")
    tune_file = replaying.tuned_variant(csv)
    rec = replaying.recorded(tune_file, shapes_of(tune_file.experiment, shapes))
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
        raise GpulabError(f"seeds must be a whole number, at least 1; got {seeds!r}")
    if evaluations is not None and (not isinstance(evaluations, int) or isinstance(evaluations, bool)):
        raise GpulabError(f"evaluations must be a whole number of configs; got {evaluations!r}")
    strategies = (strategies,) if isinstance(strategies, str) else tuple(strategies)
    return rec, replaying.replay_seeds(rec, strategies, replaying.quarter(rec) if evaluations is None else evaluations,
                                      seeds)


def _tune_suite(exp, shapes: list[Shape], params, budget, strategy, seed: int, kernels, workers, scheduler,
                progress: Progress, top: int) -> Records:
    """A suite's tune with no variant named: the model's `top` variants at each shape, each tuned at
    its shapes (with a GPU here: this card's folder; else the one card with results)."""
    if not isinstance(top, int) or top < 1:
        raise GpulabError(f"top must be a whole number, at least 1; got {top!r}")
    here = card()
    if here is None and workers is None and not scheduler:
        require_gpu()  # its one line, before the plan is announced as if a tune had begun
    # With no GPU here (the GPUs a scheduler's workers hold), the one card with results, else none:
    # the workers' cards are not known yet, so neither another card's tune nor a guess among several.
    chooser = choosing.selector(exp, card_folder(here.slug) if here is not None else only_card(RESULTS_ROOT))
    targets = suite_plan.tune_targets(chooser, shapes, top)
    for name, mine in targets.items():
        progress.say(f"{exp.name} {name}: tuned at {len(mine)} shape(s) where the model ranks it in the top {top}")
    rows = Records()
    rows.tunes = []
    for name, mine in targets.items():
        if not exp.variant(name).params:
            progress.say(f"{exp.name} {name} has no params to tune; skipped")
            continue
        done = tune(exp.name, name, params={k: v for k, v in (params or {}).items()
                                            if any(p.name == k for p in exp.variant(name).params)} or None,
                    shapes=mine, budget=budget, strategy=strategy, seed=seed, kernels=kernels, workers=workers,
                    scheduler=scheduler, progress=progress)
        rows.tunes.append(done)
        rows.extend(done)
    return rows


def _tune_plan(plan, run_tune, progress: Progress) -> Records:
    """One tune plan, timed by `run_tune(plan, progress)` (gpulab.jobs.tune's, or a cluster's)."""
    v, chosen = plan.variant, plan.shapes
    within = f"{plan.budget.label} of " if plan.search is not None or plan.budget.seconds is not None else ""
    count = len(plan.configs) if plan.search is None else len(plan.candidates)
    progress.say(f"{plan.experiment.name} {v.name}: {plan.space_size} configs, {len(plan.rejected)} rejected "
                 f"by constraints, timing {within}{count} on {', '.join(s.label for s in chosen)} ({plan.strategy})")
    for p, reason in plan.rejected[:5]:
        progress.say(f"  skipped {v.params_label(p)}: {reason}")
    if plan.incumbents:
        progress.say(f"then again, each at its own shape, the fastest config an earlier tune found at "
                     f"{len(plan.incumbents)} of the shapes (tuned.json keeps the faster of both there)")
    if done := plan.resume():
        progress.say(f"resuming: {len(done)} config x shape results already in {plan.path}")
    if plan.search is not None and plan.configs:
        progress.say(f"the search starts from the {len(plan.configs)} configs timed at every shape before "
                     f"(they count in the budget)")
    if plan.stale:
        progress.say(f"timing {len(plan.stale)} results again: {v.name}'s source changed since they were timed "
                     f"(now {plan.source_sha}, they record {', '.join(sorted({r['source_sha'] for r in plan.stale}))})")
    plan.preflight()
    progress.planned(plan.runs)
    result = run_tune(plan, progress)
    records = Records(plan.rows, plan.path)
    records.result, records.plan, records.lab = result, plan, plan.lab
    return records


# -- compute-sanitizer ------------------------------------------------------------------------------------
def sanitize(experiment_names: Sequence[str] | None = None, variants: Sequence[str] | None = None, *,
             tools: Sequence[str] | None = None, params: dict | None = None, kernels: Sequence[str | Path] = (),
             jobs: int = 8, out: str | Path | None = None, logs: str | Path | None = None,
             progress: Progress | None = None) -> Records:
    """Each variant of the experiments (default: all; with `kernels`, name one) at its default params
    and every tuned config, at the experiment's small ragged shape, under compute-sanitizer's tools
    (default: memcheck, racecheck, synccheck, initcheck): one record per (run, tool) with `errors`,
    `first_report` and a `verdict` (clean, ERRORS, TOOL_FAULT with its `evidence`, or what a
    demonstration showed), upserted into `out` (default results/<gpu>/sanitize.csv). `params`
    ({'CLUSTER': 2}) keeps the configs with those values; `logs` keeps every full log in that folder.
    `.skipped`: the runs this card cannot take, with why. Needs a GPU and compute-sanitizer
    (GPULAB_SANITIZER, PATH, $CUDA_HOME/bin or /usr/local/cuda/bin)."""
    chosen = _chosen(experiment_names, kernels)
    return sanitizing.sanitize(chosen, tuning.load_tuned, _names(variants, "variants"),
                               tuple(_names(tools, "tools") or sanitizing.TOOLS), param_values(params), jobs,
                               Path(out) if out else None, Path(logs) if logs else None, _progress(progress))


# -- a new experiment -----------------------------------------------------------------------------------
def new(name: str, directory: str | Path = ".", like: str = "copy") -> Path:
    """Scaffold a working experiment package DIR/NAME (see gpulab.jobs.new); its folder."""
    return scaffold.new(name, directory, like)


# -- the card -----------------------------------------------------------------------------------------
def ceilings(refresh: bool = False, progress: Progress | None = None) -> Records:
    """This card's own limits (copy bandwidth, FP32 FMA, cuBLAS), measured once into
    results/<gpu>/ceilings.csv and reused until `refresh`. `.measured` says which it was."""
    return this_card(refresh, _progress(progress).status)
