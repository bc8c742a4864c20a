"""The Python API: what the command line does, as functions that return records.

    import gpulab
    rows = gpulab.bench("sgemm", variants=["v1", "v9"], shapes=["1024x1024x1024"])
    rows.to_pandas()                      # a DataFrame, where pandas is installed
    gpulab.predict("sgemm", "v1", params={"TILE": 16}, shape="512x512x512")
    gpulab.profile("coalesce", "rows", shape="8192x8192")
    gpulab.ceilings()

Every function takes an experiment by name (built-in, on GPULAB_PATH, or an installed plugin) and
`kernels=[path.cu, ...]` for one-file variants (gpulab.experiments.declared). The command line is a
thin layer over these functions: it parses options, calls one, and prints what it returns. Errors
are gpulab.errors.GpulabError with a message that says what to do.

Progress goes through optional callbacks, so a script stays quiet and the CLI can draw a bar:
on_plan(count) once the runs are known, on_start(label) before each, on_record(record) after each
(the raw record, before comparisons with cuBLAS and the ceilings are added: a caller that writes
rows as they come, or stops early, hooks here), on_status(text) for longer steps.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from gpulab.jobs import ab as ab_job
from gpulab.jobs import fidelity as fid
from gpulab.jobs import new as scaffold
from gpulab.run import sweep
from gpulab.jobs import tune as tuning
from gpulab.jobs.best import picker
from gpulab.records.ceilings import attach, ceilings_for_roofline, ceilings_path, load
from gpulab.jobs.ceilings import ensure, this_card
from gpulab.errors import CompileError, GpulabError
from gpulab.experiments import all_experiments, get_experiment
from gpulab.experiments.base import Shape, parse_positive_int
from gpulab.files import check_writable
from gpulab.gpu.compile import check_arch
from gpulab.gpu.device import probe
from gpulab.gpu.ncu import find_ncu
from gpulab.gpu.stats import parse_noise
from gpulab.gpu.timing import TimingPolicy
from gpulab.run.lab import (
    Lab, LabOptions, RunSpec, compile_record, config_run_key, constraint_reason, derive, parse_param_overrides, plan,
)
from gpulab.records.ceilings import attach_copy
from gpulab.model.predict import check_launch, instruction_table, summarize
from gpulab.jobs.profile import profile as run_profile
from gpulab.jobs.profile import check_profile_csv, save_profiles
from gpulab.records import BEST, Records, card_folder, check_run_file, read_csv, upsert_runs
from gpulab.run.args import single_params, spec_for
from gpulab.jobs.tune import tuned_defaults
from gpulab.run.worker import open_lab

Callback = Callable[..., Any] | None


def _call(callback: Callback, *args) -> None:
    if callback is not None:
        callback(*args)


def card():
    """This machine's GPU (name, arch, memory, ...), or None where there is none: what needs one
    (bench, run, profile, ceilings) raises gpulab.errors.NoGpuError without it."""
    return probe()[0]


# -- naming things --------------------------------------------------------------------------------
def experiment(name: str, kernels: Sequence[str | Path] = ()):
    """The Experiment called `name`, with the one-file variants `kernels` added."""
    return get_experiment(name, kernels=tuple(kernels))


def experiments() -> list:
    """Every experiment: built-in, on GPULAB_PATH, and from the `gpulab.experiments` entry points."""
    return all_experiments()


def variants(name: str | None = None, kernels: Sequence[str | Path] = ()) -> Records:
    """One row per variant (of one experiment, or of all): what `gpulab list` shows."""
    chosen = [experiment(name, kernels)] if name else experiments()
    return Records({"experiment": e.name, "variant": v.name, "summary": v.summary, "file": v.file,
                    "params": " ".join(f"{p.name}={p.default}" for p in v.params),
                    "choices": "; ".join(f"{p.name}: {','.join(map(str, p.choices))}" for p in v.params),
                    "min_sm": v.min_sm, "has_access_model": v.access is not None}
                   for e in chosen for v in e.variants)


def shapes_of(exp, sizes: Sequence[int | str] | None = None, shapes: Sequence[Any] | None = None) -> list:
    """sizes (every dimension n) and shapes ('MxNxK' text, a tuple, or a Shape); else the defaults."""
    out = []
    if sizes is not None:
        if not sizes:
            raise GpulabError("--size needs at least one number, e.g. --size 512,1024")
        out += [exp.square(parse_positive_int(s, "size")) for s in sizes]
    for s in shapes or []:
        out.append(s if isinstance(s, Shape) else exp.parse_shape(s) if isinstance(s, str) else exp.shape(*s))
    return out or exp.default_shape_list()


def one_shape(exp, size: int | str | None = None, shape: Any = None):
    """The one shape a prediction or a profile takes: `size` or `shape`, else the first default."""
    if size is None and shape is None:
        return exp.default_shape_list()[0]
    sizes = None if size is None else [t for t in str(size).split(",") if t.strip()]
    found = shapes_of(exp, sizes, [shape] if shape is not None else None)
    if len(found) != 1:
        raise GpulabError("one shape at a time: give one --size or one --shape")
    return found[0]


def _param_texts(params) -> list[str]:
    """{'TILE': 16} or {'TILE': (8, 16)} or ['TILE=8,16'] -> ['TILE=16'] / ['TILE=8,16']."""
    if params is None:
        return []
    if isinstance(params, dict):
        return [f"{k}={','.join(map(str, v)) if isinstance(v, (tuple, list)) else v}" for k, v in params.items()]
    return list(params)


# -- checking and timing ----------------------------------------------------------------------------
def ensure_ceilings(device, folder: Path, on_status: Callback = None):
    """This card's ceilings from folder/ceilings.csv, measured first (and said so) if missing."""
    if load(ceilings_path(folder)) is None:
        _call(on_status, f"measuring this card's ceilings once (stored in {ceilings_path(folder)}) ...")
    return ensure(device, folder, progress=lambda text: _call(on_status, f"ceilings: {text}"))


def _execute(lab, specs, on_plan: Callback, on_start: Callback, on_record: Callback,
             save: Callback = None) -> list[dict]:
    """Every spec in order; after each, on_record(record) and save(records so far)."""
    _call(on_plan, len(specs))
    records = []
    for spec in specs:
        _call(on_start, spec.label)
        record = lab.execute(spec)
        records.append(record)
        _call(on_record, record)
        _call(save, records)
    return records


def bench(experiment_name: str, variants: Sequence[str] | None = None, params=None,
          sizes: Sequence[int | str] | None = None, shapes: Sequence[Any] | None = None,
          kernels: Sequence[str | Path] = (), warm_l2: bool = False, exact: bool = False, seed: int = 0,
          out: str | Path | None = None, save: bool = True, workers: int | None = None, scheduler: str | None = None,
          on_plan: Callback = None, on_start: Callback = None, on_record: Callback = None,
          on_status: Callback = None, noise: float | str = TimingPolicy.noise,
          retime_throttled: bool = False) -> Records:
    """Check and time variants of one experiment (default: all, with their sweeps, and the vendor
    library beside, and gpulab's best row per shape: gpulab.jobs.best; name it in `variants` as 'best'),
    against this card's ceilings. With `save`, every finished row reaches the CSV
    as the sweep goes (`out`, default results/<gpu>/<experiment>.csv), so a crash late in it keeps
    the rest. Runs go through the isolated worker (gpulab.run.worker): one that faults or hangs is
    marked in its row; `.lab` says which (gpulab.run.worker.unfinished_line). `params`: {'TILE': (8, 16)}
    or ['TILE=8,16']. `workers` (compile processes here) or `scheduler` (a Dask cluster's address):
    compile in parallel and time on every GPU (gpulab.run.sweep); `.per_card` holds the Records of each
    card model, written to its own folder (this Records is the first's). `noise` ('0.5%' or 0.005): each
    row repeats until its median's 95% interval is within it, or its budget ends (gpulab.gpu.timing);
    `retime_throttled`: a row timed under a heat or power slowdown is timed again after a cool-down."""
    exp = experiment(experiment_name, kernels)
    overrides = parse_param_overrides(_param_texts(params))
    chosen_shapes = shapes_of(exp, sizes, shapes)
    names = bench_variant_names(exp, variants)
    with_best = not overrides and (not variants or BEST in variants)
    plan(exp, names, overrides, chosen_shapes)  # names and values are checked before the GPU is touched
    if save and out is not None:
        check_writable(Path(out))  # ... and where the rows go (a folder, no permission)
    options = LabOptions(timing=TimingPolicy(flush_l2=not warm_l2, noise=parse_noise(noise)), seed=seed, exact=exact,
                         retime_throttled=retime_throttled)
    if workers is not None or scheduler:
        return _bench_on_cluster(exp, names, overrides, chosen_shapes, options, workers, scheduler, out, save,
                                 with_best, on_plan, on_start, on_record, on_status)
    lab = open_lab(options)
    folder = card_folder(lab.device.slug)
    specs = _bench_plan(exp, names, overrides, chosen_shapes, folder, with_best)
    lab.preflight(specs)
    path = (Path(out) if out else folder / f"{exp.name}.csv") if save else None
    records = _sweep(exp, lab, specs, folder, path, on_plan, on_start, on_record, on_status)
    records.per_card = [records]
    return records


def bench_variant_names(exp, variants: Sequence[str] | None) -> list[str] | None:
    """The variants `bench` plans from its --variant names (None: all of them). gpulab's best row is
    planned apart, and the vendor library runs beside every shape anyway: naming it is no error, and
    naming it alone benches only it."""
    if not variants:
        return None
    return [n for n in variants if n != BEST and n not in exp.vendor_baselines()]


def _bench_plan(exp, names, overrides, chosen_shapes, folder: Path, with_best: bool) -> list[RunSpec]:
    """bench's runs: the variants (tuned defaults from `folder`) and the vendor rows, and with
    `with_best` gpulab's best row of each shape (gpulab.jobs.best) just before that shape's vendor rows."""
    specs = plan(exp, names, overrides, chosen_shapes, defaults=tuned_defaults(exp, folder))
    if not with_best:
        return specs
    choose = picker(exp, folder)
    libraries = set(exp.vendor_baselines())
    out: list[RunSpec] = []
    for shape in dict.fromkeys(chosen_shapes):  # once each: `mine` already holds every spec of a repeated shape
        mine = [s for s in specs if s.shape == shape]
        chosen = choose(shape)
        best = [RunSpec(exp, chosen.variant, chosen.params, shape, picked=chosen.label)] if chosen else []
        own = [s for s in mine if s.library not in libraries]
        out += own + best + [s for s in mine if s.library in libraries]
    return out


def best(experiment_name: str, shapes: Sequence[Any] | None = None, sizes: Sequence[int | str] | None = None,
         kernels: Sequence[str | Path] = (), results: str | Path | None = None, gpu: str | None = None) -> Records:
    """What gpulab's best row runs at each shape (default: the experiment's default shapes), from the
    tuned.json of card `gpu` (a results folder's name, e.g. 'h200'; default: this machine's card,
    else nothing tuned): one row per shape with `variant`, `params` and `picked` (why); a shape
    with no pick (nothing tuned near, no default) has `picked` saying so. Needs no GPU."""
    exp = experiment(experiment_name, kernels)
    here = card() if gpu is None else None
    slug = gpu or (here.slug if here is not None else None)
    choose = picker(exp, card_folder(slug, results) if slug else None)
    rows = Records()
    for shape in shapes_of(exp, sizes, shapes):
        chosen = choose(shape)
        if chosen is None:
            rows.append({"experiment": exp.name, **shape.as_record(), "variant": "", "params": "",
                         "picked": "nothing tuned near and no default: run gpulab tune"})
            continue
        rows.append({"experiment": exp.name, **shape.as_record(), "variant": chosen.variant.name,
                     "params": chosen.variant.params_label(chosen.params), "picked": chosen.label})
    return rows


def _bench_on_cluster(exp, names, overrides, chosen_shapes, options, workers, scheduler, out, save,
                      with_best, on_plan, on_start, on_record, on_status) -> Records:
    """bench on a Dask cluster (gpulab.run.sweep): every run once per card model among its GPUs."""
    per_card = []
    with sweep.open_cluster(workers, scheduler, options) as cluster:
        groups = cluster.groups()
        if save and out is not None and len(groups) > 1:
            raise GpulabError(f"--out names one CSV and the cluster has {len(groups)} card models; leave it out")
        for group in groups:
            folder = card_folder(group.device.slug)
            specs = _bench_plan(exp, names, overrides, chosen_shapes, folder, with_best)
            group.preflight(specs)
            path = (Path(out) if out else folder / f"{exp.name}.csv") if save else None
            per_card.append(_sweep(exp, group, specs, folder, path, on_plan, on_start, on_record, on_status,
                                   execute=cluster.execute))
    per_card[0].per_card = per_card
    return per_card[0]


def _sweep(exp, lab, specs, folder: Path, path: Path | None, on_plan, on_start, on_record, on_status,
           execute: Callable | None = None) -> Records:
    """Run `specs` of one experiment; the rows, compared (derive) and against the ceilings, merged
    into `path` after every run and at the end: a run's row replaces the file's row of the same run
    (experiment, variant, params, shape), every other row the file holds stays. `execute` runs them (default: one after the other on
    `lab`); one that is given (a cluster's) uses the ceilings already measured on that card, if any,
    since the card may be on another host."""
    if path is not None:
        check_writable(path)
        if path.exists():
            read_csv(path)  # a damaged file is refused before any work, not after the first run
    ceilings = ensure_ceilings(lab.device, folder, on_status) if execute is None else load(ceilings_path(folder))

    def finished(rows: list[dict]) -> list[dict]:
        return attach_copy(attach(derive(rows, exp.baseline), exp, ceilings), exp, ceilings)

    def save(done: list[dict]) -> None:
        if path is not None:
            upsert_runs(path, finished([dict(r) for r in done]), key=config_run_key)

    records = Records(finished((execute or _execute)(lab, specs, on_plan, on_start, on_record, save)), path)
    if path is not None:
        upsert_runs(path, list(records), key=config_run_key)
    records.lab = lab
    return records


def verify(experiment_name: str, variants: Sequence[str] | None = None, params=None,
           shapes: Sequence[Any] | None = None, kernels: Sequence[str | Path] = (), exact: bool = False,
           seed: int = 0) -> Records:
    """Check without timing: each variant (default: all, at its sweep or default params) at each
    shape (default: the experiment's test shapes) against the reference, one record per run with
    `correct`, `max_rel_err`, `wrong_count`, or `skip_reason` where its constraints refuse it."""
    exp = experiment(experiment_name, kernels)
    chosen = shapes_of(exp, None, shapes) if shapes else [exp.shape(*s) for s in exp.test_shapes]
    specs = plan(exp, list(variants) if variants else None, parse_param_overrides(_param_texts(params)), chosen,
                 with_libraries=False)
    lab = Lab(LabOptions(seed=seed, exact=exact))
    records = Records()
    for spec in specs:
        if reason := constraint_reason(spec, lab.arch):
            records.append(spec.base_record() | {"skip_reason": reason})
        else:
            records.append(spec.base_record() | lab.verify(spec).as_record())
    return records


def run(experiment_names: Sequence[str] | None = None, kernels: Sequence[str | Path] = (),
        out_dir: str | Path | None = None, on_plan: Callback = None, on_start: Callback = None,
        on_record: Callback = None, on_status: Callback = None) -> dict[str, Records]:
    """The main job on a GPU: each experiment (default: all) at its default shapes, tuned params
    where tune found them, one CSV each under results/<gpu>/ (or out_dir). {experiment: records};
    each records' `.lab` is the one lab they shared (gpulab.run.worker.unfinished_line)."""
    exps = _chosen(experiment_names, kernels)
    lab = open_lab(LabOptions())
    folder = Path(out_dir) if out_dir else card_folder(lab.device.slug)
    ensure_ceilings(lab.device, folder, on_status)
    out = {}
    for exp in exps:
        specs = _bench_plan(exp, None, {}, exp.default_shape_list(), folder, with_best=True)
        lab.preflight(specs)
        out[exp.name] = _sweep(exp, lab, specs, folder, folder / f"{exp.name}.csv", on_plan, on_start, on_record,
                               on_status)
    return out


def _chosen(names: Sequence[str] | None, kernels: Sequence[str | Path]) -> list:
    if kernels and len(names or ()) != 1:
        raise GpulabError("--kernel adds a variant to one experiment: name it, e.g. gpulab run sgemm --kernel mine.cu")
    return [experiment(n, kernels) for n in names] if names else experiments()


def compile_only(experiment_names: Sequence[str] | None = None, kernels: Sequence[str | Path] = (),
                 arch: str = "sm_90", on_plan: Callback = None, on_start: Callback = None,
                 on_record: Callback = None) -> Records:
    """No GPU needed: compile every variant (its sweep, else its defaults) at the first default
    shape for `arch`; one record per compile with what ptxas reported and the occupancy it allows.
    A kernel that does not compile gets a row saying so (NVRTC's first error); `.broken` names them."""
    check_arch(arch)
    specs = []
    for exp in _chosen(experiment_names, kernels):
        shape = exp.default_shape_list()[0]
        for v in exp.variants:
            grid = v.param_grid(dict(v.sweep)) if v.sweep else [v.default_params()]
            specs += [RunSpec(exp, v, p, shape) for p in grid]
    _call(on_plan, len(specs))
    records = Records()
    records.broken = []
    for spec in specs:
        _call(on_start, spec.label)
        try:
            records.append(compile_record(spec, arch))
        except CompileError as exc:  # one broken kernel: mark it (its message is one line), compile the others
            records.broken.append(spec.label)
            records.append(spec.base_record() | {"skip_reason": f"does not compile: {exc}"})
        _call(on_record, records[-1])
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


def spec_of(experiment_name: str, variant: str, params=None, size=None, shape=None, kernels=()):
    """One run: `variant` may carry params ('v1:TILE=16'); `params` ({'TILE': 16} or ['TILE=16'])
    the rest; each named once."""
    exp = experiment(experiment_name, kernels)
    return spec_for(exp, variant, _param_texts(params), one_shape(exp, size, shape))


def predict(experiment_name: str, variant: str, params=None, size=None, shape=None, gpu: str | None = None,
            exhaustive: bool = False, kernels: Sequence[str | Path] = ()) -> Prediction:
    """The access model's counters for one launch, before any counter is read; needs no GPU."""
    spec = spec_of(experiment_name, variant, params, size, shape, kernels)
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
        check_launch(model, v.launch(spec.params, spec.shape))
        rows = instruction_table(model, exhaustive=exhaustive)
    except ValueError as exc:  # a model the evaluator refuses (too slow without classes, bad classes)
        raise GpulabError(f"{spec.label}: the access model cannot be evaluated: {exc}") from None
    ceiling, ops = exp.ceiling_for(v.name)
    fma, copy, source = ceilings_for_roofline(gpu, compute=ceiling, ops=ops)
    summary = summarize(rows, model, fma, copy)
    return Prediction(spec, model, summary, Records(rows), source, fma, copy, time.perf_counter() - start, exhaustive)


def ab(experiment_name: str, a: str, b: str, params=None, size=None, shape=None, *, noise: float | str = 0.005,
       seed: int = 0, warm_l2: bool = False, kernels: Sequence[str | Path] = (), csv: str | Path | None = None,
       progress=None) -> Records:
    """A against B (gpulab.jobs.ab): two runs of one experiment at one shape (`a`, `b`: 'v13',
    'v13:BM=128' or 'cublas'; `params`, {'BK': 16}, apply to each side that has them), checked, then
    timed in interleaved rounds on the same inputs until the ratio time B / time A is resolved to
    `noise` ('0.5%' or 0.005) or the budget ends. Two records, A's and B's (each with its median, 95%
    interval and range, and both with the ratio, its interval and `ab_verdict`: 'faster', 'slower'
    or 'same within noise', said of B); `.result` is the gpulab.jobs.ab.AbResult. With `csv`, the
    rows join that file. `progress.status(text)`, where given, hears each step."""
    exp = experiment(experiment_name, kernels)
    spec_a, spec_b = ab_job.specs(exp, a, b, single_params(_param_texts(params)), one_shape(exp, size, shape))
    policy = ab_job.AbPolicy(noise=parse_noise(noise), flush_l2=not warm_l2)
    if csv is not None:
        check_run_file(Path(csv))  # a damaged file or a path that cannot be written: refused before any work
    lab = Lab(LabOptions(seed=seed))
    result = ab_job.run(lab, spec_a, spec_b, policy, progress.status if progress is not None else None)
    rows = result.rows(lab.env)
    records = Records(rows, ab_job.save(Path(csv), rows) if csv is not None else None)
    records.result = result
    return records


# -- counters (Nsight Compute) ------------------------------------------------------------------------
def profile(experiment_name: str, variant: str, params=None, size=None, shape=None, full: bool = False,
            out: str | Path | None = None, csv: str | Path | None = None, seed: int = 0,
            kernels: Sequence[str | Path] = (), save: bool = True) -> Records:
    """One launch under Nsight Compute beside the model's prediction; the record (one row) joins
    results/<gpu>/profile.csv (or `csv`) when `save`. `.profiles` holds the full Profile. `variant`
    may name the vendor library ('cublas'): its one call is captured, whatever kernels it picks."""
    if out is not None and not full:
        raise GpulabError("--out is where --full saves its report: add --full")
    spec = spec_of(experiment_name, variant, params, size, shape, kernels)
    if save:
        check_profile_csv(Path(csv) if csv else None)
    prof = run_profile(spec, full=full, report_out=Path(out) if out else None, seed=seed)
    records = Records([prof.record()], save_profiles([prof], Path(csv) if csv else None) if save else None)
    records.profiles = [prof]
    return records


def compare(experiment_name: str, a: str, b: str, params_a=None, params_b=None, size=None, shape=None,
            csv: str | Path | None = None, seed: int = 0, kernels: Sequence[str | Path] = (),
            on_plan: Callback = None, on_start: Callback = None, on_record: Callback = None) -> Records:
    """Two variants (or two configs of one, or a variant and 'cublas') profiled at one shape: two
    records, `.profiles` both."""
    exp = experiment(experiment_name, kernels)
    the_shape = one_shape(exp, size, shape)
    spec_a = spec_of(experiment_name, a, params_a, shape=the_shape, kernels=kernels)
    spec_b = spec_of(experiment_name, b, params_b, shape=the_shape, kernels=kernels)
    if spec_a.label == spec_b.label:
        raise GpulabError(f"A and B are the same run ({spec_a.label}); compare two variants or two configs")
    check_profile_csv(Path(csv) if csv else None)
    profiles = []
    _call(on_plan, 2)
    for spec in (spec_a, spec_b):
        _call(on_start, f"ncu: {spec.label}")
        profiles.append(run_profile(spec, seed=seed))
        _call(on_record, profiles[-1].record())
    records = Records([p.record() for p in profiles], save_profiles(profiles, Path(csv) if csv else None))
    records.profiles = profiles
    return records


def fidelity(experiment_names: Sequence[str] | None = None, variants: Sequence[str] | None = None,
             shapes: str = "both", out: str | Path | None = None, seed: int = 0, on_plan: Callback = None,
             on_start: Callback = None, on_record: Callback = None, shape_list: Sequence[str] | None = None,
             params=None) -> Records:
    """Every variant's access model against Nsight Compute (default and/or ragged shapes, or the
    shapes of `shape_list`, 'MxNxK' texts; `params` as bench's): one row per counted quantity, saved
    after every run into `out` (default results/<gpu>/fidelity.csv).
    on_record gets each run's gpulab.jobs.fidelity.RunResult; `.results` holds them all (a failed run's
    `.error` says why; the rows recorded for it before are kept)."""
    specs = fid.plan(list(experiment_names) if experiment_names else None, list(variants) if variants else None,
                     shapes, shape_list, parse_param_overrides(_param_texts(params)))
    find_ncu()  # fail before the first run when ncu is missing
    if out is not None:
        check_run_file(Path(out))  # ... or when the results could not be saved (a damaged file among them)
    _call(on_plan, len(specs))
    results: list = []
    path = Path(out) if out else None
    for spec in specs:
        _call(on_start, f"ncu: {spec.label}")
        results.append(fid.measure_one(spec, seed=seed))
        if path is None and (slug := fid.gpu_slug_of(results)):
            path = fid.fidelity_path(slug)
        if path is not None:
            fid.save(path, results)  # after every run: an interrupted run keeps what it measured
        _call(on_record, results[-1])
    if path is None:
        raise GpulabError("no run produced counters, so nothing was written; see the errors above")
    records = Records([row for res in results for row in res.rows], path)
    records.results = results
    return records


def tune(experiment_name: str, variant: str, params=None, sizes: Sequence[int | str] | None = None,
         shapes: Sequence[Any] | None = None, limit: int = 120, kernels: Sequence[str | Path] = (),
         workers: int | None = None, scheduler: str | None = None, on_message: Callback = None,
         on_plan: Callback = None, on_start: Callback = None, on_record: Callback = None) -> Records:
    """Search a variant's params (`params` restricts them), time each config on several shapes
    (default: the experiment's tune shapes), saving as it goes (a re-run resumes), and record the
    best config for this card in results/<gpu>/tuned.json. Records: every result of this tune;
    `.result` (scored configs, best per shape), `.plan`. on_message(text): what it found first.
    `workers` or `scheduler`: compiled in parallel, timed on every GPU (gpulab.run.sweep), one tune per
    card model, each in `.per_card` (this Records is the first's)."""
    exp = experiment(experiment_name, kernels)
    v = exp.variant(variant)
    if not v.params:
        raise GpulabError(f"{exp.name} {v.name} has no params to tune")
    if limit < 1:
        raise GpulabError("--limit must be at least 1")
    overrides = parse_param_overrides(_param_texts(params))
    for name, values in overrides.items():
        v.param(name)  # a param the variant does not have would leave the whole search space
        v.param_grid({name: values})  # validates the values with the usual messages
    chosen = shapes_of(exp, sizes, shapes) if (sizes or shapes) else tuning.tune_shapes(exp, v)
    if workers is not None or scheduler:
        with sweep.open_cluster(workers, scheduler, tuning.tune_options()) as cluster:
            per_card = [_tune_plan(plan, lambda plan, **bar: tuning.run_tune_on(cluster, plan, **bar),
                                   on_message, on_plan, on_start, on_record)
                        for plan in tuning.plan_tunes_on(cluster, exp, v, overrides, chosen, limit)]
    else:
        per_card = [_tune_plan(tuning.plan_tune(exp, v, overrides, chosen, limit), tuning.run_tune,
                               on_message, on_plan, on_start, on_record)]
    per_card[0].per_card = per_card
    return per_card[0]


def _tune_plan(plan, run_tune: Callable, on_message, on_plan, on_start, on_record) -> Records:
    """One tune plan, timed by `run_tune(plan, on_start=, on_end=)` (gpulab.jobs.tune's, or a cluster's)."""
    v, chosen = plan.variant, plan.shapes
    _call(on_message, f"{plan.experiment.name} {v.name}: {plan.space_size} configs, {len(plan.rejected)} rejected "
                      f"by constraints, timing {len(plan.configs)} on {', '.join(s.label for s in chosen)}")
    for p, reason in plan.rejected[:5]:
        _call(on_message, f"  skipped {v.params_label(p)}: {reason}")
    if done := plan.resume():
        _call(on_message, f"resuming: {len(done)} config x shape results already in {plan.path}")
    if plan.stale:
        _call(on_message, f"timing {len(plan.stale)} results again: {v.name}'s source changed since they were timed "
                          f"(now {plan.source_sha}, they record {', '.join(sorted({r['source_sha'] for r in plan.stale}))})")
    plan.preflight()
    _call(on_plan, plan.runs)
    result = run_tune(plan, on_start=lambda label: _call(on_start, label), on_end=lambda: _call(on_record, None))
    records = Records(plan.rows, plan.path)
    records.result, records.plan, records.lab = result, plan, plan.lab
    return records


# -- a new experiment -----------------------------------------------------------------------------------
def new(name: str, directory: str | Path = ".", like: str = "copy") -> Path:
    """Scaffold a working experiment package DIR/NAME (see gpulab.jobs.new); its folder."""
    return scaffold.new(name, directory, like)


# -- the card -----------------------------------------------------------------------------------------
def ceilings(refresh: bool = False, on_status: Callback = None) -> Records:
    """This card's own limits (copy bandwidth, FP32 FMA, cuBLAS), measured once into
    results/<gpu>/ceilings.csv and reused until `refresh`. `.measured` says which it was."""
    return this_card(refresh, on_status)
