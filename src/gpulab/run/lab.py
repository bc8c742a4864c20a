"""The pipeline, written once for every experiment: plan runs -> compile -> check -> time -> record.

A run is (experiment, variant, params, shape). Vendor-library rows (cuBLAS) are runs too, with no
kernel file: they are checked and timed by the same code. Each stage produces a flat dict; a record
is their merge. Nothing here knows a particular experiment or variant by name.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

import numpy as np

from gpulab.check import CheckResult
from gpulab.arith import whole
from gpulab.errors import GpulabError
from gpulab.experiments import all_experiments, get_experiment
from gpulab.experiments.base import Experiment, Params, Shape, Variant
from gpulab.gpu import nvml, seam
from gpulab.gpu.compile import DEFAULT_ARCH, Compiled, compile_kernel, source_fingerprint
from gpulab.gpu.device import free_memory_bytes, require_gpu
from gpulab.gpu.launch import cuda_errors, load, out_of_memory, synchronize
from gpulab.gpu.occupancy import SM_LIMITS, card_limits, occupancy
from gpulab.gpu.timing import L2Flusher, Timing, TimingPolicy, time_it
from gpulab.params import parse_params_label
from gpulab.records import BEST, environment, run_key


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One run. `variant` is None for a vendor-library row, named by `library`."""

    experiment: Experiment
    variant: Variant | None
    params: Params
    shape: Shape
    library: str = ""
    # Set on gpulab's best row (gpulab.jobs.best): what was picked and why, e.g. 'sk (tuned at 1x8192x8192)';
    # the row is then named `best` and carries this in its `picked` column.
    picked: str = ""

    @property
    def name(self) -> str:
        if self.picked:
            return BEST
        return self.variant.name if self.variant else self.library

    @property
    def label(self) -> str:
        p = self.variant.params_label(self.params) if self.variant else ""
        return f"{self.experiment.name} {self.name}{' ' + p if p else ''} {self.shape.label}"

    def __reduce__(self):
        # A spec crosses into the worker process (gpulab.run.worker) by reference: the experiment by its
        # registry name (or, for one outside the registry, pickled by its importable class), the
        # variant by its name among the experiment's variants. Variants hold lambdas (launch,
        # constraints), which do not pickle; one that is not among its experiment's variants must
        # itself be picklable.
        variant = self.variant
        if variant is not None and any(v is variant for v in self.experiment.variants):
            variant = variant.name
        return _spec_from_refs, (_experiment_ref(self.experiment), variant, self.params, self.shape, self.library,
                                 self.picked)

    def source_sha(self) -> str:
        """Which kernel this run times (gpulab.gpu.compile.source_fingerprint); '' for a library's."""
        return source_fingerprint(self.experiment.source(self.variant)) if self.variant else ""

    def base_record(self) -> dict:
        return {
            "experiment": self.experiment.name,
            "variant": self.name,
            "params": self.variant.params_label(self.params) if self.variant else "",
            **self.shape.as_record(),
            "expected_wrong": bool(self.variant and self.variant.expected_wrong),
            **({"picked": self.picked} if self.picked else {}),
        }


def _experiment_ref(experiment: Experiment):
    if experiment.kernel_files:  # a copy with one-file variants (--kernel): rebuilt from the files
        return (experiment.name, tuple(experiment.kernel_files))
    try:
        if get_experiment(experiment.name) is experiment:
            return experiment.name
    except GpulabError:
        pass
    return experiment


def _spec_from_refs(experiment, variant, params: Params, shape: Shape, library: str, picked: str = "") -> RunSpec:
    if isinstance(experiment, tuple):  # (name, .cu files of its one-file variants)
        exp = get_experiment(experiment[0], kernels=experiment[1])
    else:
        exp = get_experiment(experiment) if isinstance(experiment, str) else experiment
    return RunSpec(exp, exp.variant(variant) if isinstance(variant, str) else variant, params, shape, library, picked)


def config_run_key(row: dict) -> tuple[str, ...]:
    """records.run_key with the params as the variant takes them today (Variant.completed_params:
    every param named, one the row predates at its default). So a row recorded before a variant
    gained a param and one recorded after, of the same kernel, are one run, and the newer replaces
    the older in the result files. A row of a vendor library, a best row, a row without a params
    column, or one whose experiment, variant or params no longer exist keeps its recorded key."""
    key = run_key(row)
    if row.get("variant") == BEST or "params" not in row:
        return key
    try:
        variant = get_experiment(str(row["experiment"])).variant(str(row["variant"]))
        given = parse_params_label(row["params"])
    except (GpulabError, KeyError, ValueError):
        return key
    completed = variant.completed_params(given)
    return key if completed is None else key[:2] + (variant.params_label(completed),) + key[3:]


def parse_param_overrides(texts: Iterable[str]) -> dict[str, tuple[int, ...]]:
    """['TILE=8,16', 'BM=128'] -> {'TILE': (8, 16), 'BM': (128,)}. Anything that would change what
    runs without saying so is refused: a name in lower case, a name given twice, no value."""
    out: dict[str, tuple[int, ...]] = {}
    for text in texts:
        name, sep, values = text.partition("=")
        name = name.strip()
        if not sep or not name or not values.strip():
            raise GpulabError(f"--param '{text}' must look like NAME=V1,V2 (e.g. --param TILE=8,16,32)")
        if name != name.upper():
            raise GpulabError(f"--param '{text}': param names are upper case; write --param {name.upper()}={values.strip()}")
        try:
            parsed = tuple(int(v) for v in values.split(",") if v.strip())
        except ValueError:
            raise GpulabError(f"--param '{text}': values must be whole numbers, e.g. --param {name}=8,16") from None
        if not parsed:
            raise GpulabError(f"--param '{text}' gives no value; write e.g. --param {name}=8,16")
        if name in out:
            every = ",".join(str(v) for v in out[name] + parsed)
            raise GpulabError(f"--param {name} is given twice; give its values once: --param {name}={every}")
        out[name] = parsed
    return out


def param_values(params) -> dict[str, tuple[int, ...]]:
    """The params a caller asks for, as the pipeline takes them: {'TILE': 16} or {'TILE': (8, 16)} ->
    {'TILE': (16,)} / {'TILE': (8, 16)}. What would change what runs without saying so is refused
    with one line: not a dict, a name not in upper case, a value that is not a whole number, no value."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise GpulabError(f"params must be a dict of NAME: value(s), e.g. {{'TILE': 16}} or {{'TILE': (8, 16)}}; "
                          f"got {type(params).__name__} {params!r:.60}")
    out: dict[str, tuple[int, ...]] = {}
    for name, values in params.items():
        if not isinstance(name, str) or not name.strip() or name != name.upper():
            raise GpulabError(f"param name {name!r}: names are upper case text, e.g. {{'TILE': 16}}")
        items = tuple(values) if isinstance(values, (tuple, list, range)) else (values,)
        if not items:
            raise GpulabError(f"param {name} gives no value; give one or more, e.g. {{'{name}': (8, 16)}}")
        if any(whole(v) is None for v in items):
            raise GpulabError(f"param {name}={values!r:.60}: values must be whole numbers, e.g. {{'{name}': 16}}")
        out[name] = tuple(whole(v) for v in items)  # numpy's integers as Python's: labels and -D defines alike
    return out


def plan(
    experiment: Experiment,
    variant_names: list[str] | None,
    overrides: dict[str, tuple[int, ...]],
    shapes: list[Shape],
    with_libraries: bool = True,
    defaults: Callable[[Variant, Shape], Params] | None = None,
    sweep: bool = True,
) -> list[RunSpec]:
    """Every (variant, params, shape) asked for, plus the vendor-library rows for each shape.

    A param override applies to every chosen variant that has that param; naming a param no chosen
    variant has is an error. With no overrides, each variant sweeps its declared `sweep` values.
    `defaults(variant, shape)` may supply tuned defaults (per shape) for params not overridden.
    """
    variants = [experiment.variant(n) for n in variant_names] if variant_names is not None else list(experiment.variants)
    known = {p.name for v in variants for p in v.params}
    for name in overrides:
        if name not in known:
            raise GpulabError(
                f"no chosen variant of {experiment.name} has a param {name}; params: "
                + (", ".join(sorted(known)) or "none")
            )
    specs: list[RunSpec] = []
    for shape in shapes:
        for v in variants:
            mine = {k: vals for k, vals in overrides.items() if any(p.name == k for p in v.params)}
            if not overrides and sweep:
                mine = dict(v.sweep)
            base = defaults(v, shape) if defaults else v.default_params()
            for params in v.param_grid({k: (val,) for k, val in base.items()} | mine):
                specs.append(RunSpec(experiment, v, params, shape))
        if with_libraries:
            for lib in experiment.vendor_baselines():
                specs.append(RunSpec(experiment, None, {}, shape, library=lib))
    return specs


def compile_spec(spec: RunSpec, arch: str = DEFAULT_ARCH) -> Compiled:
    assert spec.variant is not None
    return compile_kernel(spec.experiment.source(spec.variant), spec.experiment.entry, spec.params,
                          spec.variant.compile_arch(arch))


def constraint_reason(spec: RunSpec, arch: str | None = None) -> str | None:
    """Why `spec` cannot run (on `arch`, where given), or None."""
    if spec.variant is None:
        return None
    return (spec.variant.arch_reason(arch) if arch else None) or spec.variant.constraints(spec.params, spec.shape)


def compile_record(spec: RunSpec, arch: str) -> dict:
    """The record of a compile-only run: what ptxas reported and the occupancy it allows (used with
    no GPU)."""
    record = spec.base_record()
    reason = (spec.variant.arch_reason(arch) or spec.variant.constraints(spec.params, None)) if spec.variant else None
    if reason:
        return record | {"skip_reason": reason}
    try:
        launch = spec.variant.launch(spec.params, spec.shape)
    except GpulabError as exc:  # a launch CUDA would refuse at this shape (a declared block too big): skipped
        return record | {"skip_reason": str(exc)}
    compiled = compile_spec(spec, arch)
    return (record | compiled.resources.as_record() | occupancy_columns(spec, compiled.resources, launch, SM_LIMITS.get(arch))
            | {"arch": arch})


def occupancy_columns(spec: RunSpec, resources, launch, limits) -> dict:
    """A run's occupancy columns (occupancy_record) and, where they contradict the variant's resident
    param, its plan note (resident_note)."""
    occ = occupancy_record(resources, launch, limits)
    return occ | resident_note(spec, occ)


def resident_note(spec: RunSpec, occ: dict) -> dict:
    """{'plan_note': why} where the variant's resident param (Variant.resident_param) is not the
    number of blocks the compiled kernel fits on an SM (`occ`: occupancy_record's columns), else {}."""
    name = spec.variant.resident_param if spec.variant else ""
    fits = occ.get("theoretical_blocks_per_sm")
    if not name or fits is None or spec.params.get(name) == fits:
        return {}
    return {"plan_note": f"{name}={spec.params.get(name)}, but {fits} block(s) fit on an SM with these registers: the "
                         f"grid is planned for waves the card does not run (right, but slower); set {name}={fits}"}


def occupancy_record(resources, launch, limits) -> dict:
    """Theoretical blocks per SM, occupancy and what limits it, for an SM's `limits` (a
    gpulab.gpu.occupancy.SmLimits; None, where they are not known, gives nothing)."""
    if limits is None:
        return {}
    smem = resources.smem_static_bytes + launch.smem_dynamic_bytes
    return occupancy(launch.threads_per_block, resources.registers, smem, limits).as_record()


@dataclasses.dataclass(frozen=True)
class LabOptions:
    timing: TimingPolicy = TimingPolicy()
    seed: int = 0
    exact: bool = False
    check: bool = True
    # A row timed under a heat or power slowdown (gpulab.gpu.nvml.THERMAL_OR_POWER) is timed once
    # more after the card has idled (nvml.cool_down); its `retimed` column names what the first saw.
    retime_throttled: bool = False


# The seeds of a timing's inputs, and of the fresh inputs of its last, checked launch (Lab.time),
# offsets from the lab's seed.
TIMING_SEED, RECHECK_SEED = 7, 8
# How many places a timing's buffers take in turn, one per block of repetitions (Lab.time): where
# they land moved an sgemm's median by up to 0.5% on the H200 (2026-12-04), so a row's blocks
# sample several placements and its interval holds that spread.
PLACEMENTS = 6


class Lab:
    """Runs specs on the GPU. Holds the device, the L2 flusher and the environment columns."""

    def __init__(self, options: LabOptions = LabOptions()):
        self.device = require_gpu()
        self.arch = self.device.arch
        self.options = options
        self.env = environment(self.device, self.arch)
        self._flusher: L2Flusher | None = None
        self._check_count = 0
        self._sm_limits = None

    @property
    def sm_limits(self):
        """This card's SM limits, from the driver's attributes (any NVIDIA GPU, listed or not)."""
        if self._sm_limits is None:
            cupy = seam.cupy()

            self._sm_limits = card_limits(self.device, cupy.cuda.Device().attributes)
        return self._sm_limits

    def healthy(self) -> bool:
        """Whether this process's CUDA context still works (a fault leaves it unusable)."""
        cupy = seam.cupy()
        try:
            cupy.cuda.Device().synchronize()
        except cuda_errors():
            return False
        return True

    # -- the pieces --------------------------------------------------------------------------
    def _flush(self):
        return self.l2_flusher() if self.options.timing.flush_l2 else None

    def l2_flusher(self) -> L2Flusher:
        """The lab's one L2 flusher (a buffer twice the L2), made on first use."""
        if self._flusher is None:
            self._flusher = L2Flusher(self.device.l2_bytes)
        return self._flusher

    def ensure_fits(self, spec: RunSpec) -> None:
        """Refuse, before allocating, a shape whose buffers exceed the card's free memory."""
        need = spec.experiment.device_bytes(spec.shape) + 2 * self.device.l2_bytes
        free = free_memory_bytes()
        if need > free:
            raise GpulabError(
                f"{spec.experiment.name} {spec.shape.label} needs {need / 2**30:.1f} GiB of device memory "
                f"and the card has {free / 2**30:.1f} GiB free; choose a smaller shape"
            )

    def preflight(self, specs: list[RunSpec]) -> None:
        """Check every shape against free memory before the first run, so a sweep that cannot
        finish stops at once instead of after minutes of work."""
        seen = set()
        for spec in specs:
            if spec.shape.label not in seen:
                seen.add(spec.shape.label)
                self.ensure_fits(spec)

    def launcher(self, spec: RunSpec, inputs: dict, out) -> Callable[[], None]:
        """A zero-argument callable that performs the run's work once on the device (checks, timings
        and the program ncu profiles, gpulab.run.ncu_child, all launch through this)."""
        exp = spec.experiment
        if spec.variant is None:
            fn = exp.vendor_baselines()[spec.library]
            return lambda: fn(inputs, out, spec.shape)
        kernel = load(compile_spec(spec, self.arch))
        launch = spec.variant.launch(spec.params, spec.shape)
        # A variant that cannot read the inputs as they are stages copies it can (Variant.stage):
        # allocated here, once; refilled before every launch, inside whatever times or profiles it.
        staged = spec.variant.stage(inputs, spec.shape, spec.params, self.arch)
        reads = inputs if staged is None else {**inputs, **staged.inputs}
        args = (*exp.kernel_args(reads, out, spec.shape, spec.params),
                *spec.variant.extra_args(reads, out, spec.shape, spec.params))

        programmatic = staged is not None and staged.dependent_launch

        def once() -> None:
            if staged is not None:
                staged.copy()
            kernel(launch.grid, launch.block, args, launch.smem_dynamic_bytes, programmatic=programmatic)
        return once

    def device_inputs(self, spec: RunSpec, exact: bool, seed: int) -> dict:
        """The run's inputs drawn from `seed` (small integers when `exact`), on the device."""
        cupy = seam.cupy()

        made = spec.experiment.make_device_inputs(spec.shape, seed, exact, cupy)
        if made is not None:
            return made
        rng = np.random.default_rng(seed)
        host = spec.experiment.make_inputs(spec.shape, rng, exact)
        return {k: (cupy.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in host.items()}

    def verify(self, spec: RunSpec, exact: bool | None = None, seed: int | None = None) -> CheckResult:
        """Fresh inputs, a poisoned output, one launch (two for integer outputs, see merge_poisoned),
        compared with the reference."""
        cupy = seam.cupy()
        exact = self.options.exact if exact is None else exact
        if seed is None:  # fresh inputs for every check, reproducible from the lab's seed
            seed = self.options.seed * 1_000_003 + self._check_count
            self._check_count += 1
        self.ensure_fits(spec)
        inputs = self.device_inputs(spec, exact, seed)
        out = spec.experiment.output(spec.shape, cupy)
        # Integer outputs have no NaN: a second launch into the complement poison (merge_poisoned).
        second = cupy.invert(out) if out.dtype.kind in "iu" else None
        self.launcher(spec, inputs, out)()
        if second is not None:
            self.launcher(spec, inputs, second)()
        synchronize(spec.label)
        unwritten = 0
        if second is not None:
            out, unwritten = merge_poisoned(out, second, cupy)
        result = spec.experiment.check(out, inputs, spec.shape, exact, cupy)
        if unwritten:
            note = f"{unwritten} differ between two launches into differently poisoned outputs (never written)"
            result = dataclasses.replace(result, detail="; ".join(filter(None, (result.detail, note))))
        return result

    def time(self, spec: RunSpec) -> tuple[Timing, CheckResult | None]:
        """Time the run (gpulab.gpu.timing.time_it) and, when the lab checks, check the output its
        last timed launch left: that launch ran on fresh inputs drawn in place of the timed ones,
        into a poisoned output (both outside its window). A kernel that did its work only once, or
        replays a result kept from an earlier launch, fails this check where the first passed.
        Returns the timing and that check's result (None when the lab does not check)."""
        cupy = seam.cupy()

        inputs = self.device_inputs(spec, exact=False, seed=self.options.seed + TIMING_SEED)
        out = spec.experiment.output(spec.shape, cupy)
        # A library whose own call returns a new array (torch) is timed on that call alone
        # (Experiment.vendor_work): it leaves the output unwritten, so there is no output to check
        # after timing; the row was checked before it, by the call that copies its answer there.
        work = spec.experiment.vendor_work(spec.library, inputs, spec.shape) if spec.variant is None else None
        library_call = work is not None

        def work_on(inputs: dict, out) -> Callable[[], None]:
            if library_call:
                return spec.experiment.vendor_work(spec.library, inputs, spec.shape)
            return self.launcher(spec, inputs, out)

        # Each block of repetitions after the first runs on a placement of its own (time_it's
        # `moved`): copies of the inputs and a new output, all held to the end of the timing so each
        # lands at new addresses; after PLACEMENTS, or where they would take more than half the free
        # memory, the placements are used again in turn.
        placed = [(inputs, out)]
        room = free_memory_bytes() - 2 * self.device.l2_bytes

        def moved() -> Callable[[], None]:
            if len(placed) < PLACEMENTS and (len(placed) + 1) * spec.experiment.device_bytes(spec.shape) < room / 2:
                try:
                    copies = {k: v.copy(order="K") if isinstance(v, cupy.ndarray) else v for k, v in inputs.items()}
                    placed.append((copies, spec.experiment.output(spec.shape, cupy)))
                    return work_on(*placed[-1])
                except out_of_memory():  # the buffers took more than device_bytes said: use those placed
                    pass
            placed.append(placed.pop(0))
            return work_on(*placed[-1])

        last = None
        if self.options.check and not library_call:
            def last() -> None:  # on the placement the last repetition runs on
                now_in, now_out = placed[-1]
                refill_inputs(now_in, self.device_inputs(spec, exact=False, seed=self.options.seed + RECHECK_SEED))
                cupy.copyto(now_out, spec.experiment.output(spec.shape, cupy))
        timing = time_it(work or self.launcher(spec, inputs, out), self.options.timing, self._flush(), last, moved)
        if last is None:
            return timing, None
        synchronize(spec.label)
        now_in, now_out = placed[-1]
        return timing, spec.experiment.check(now_out, now_in, spec.shape, False, cupy)

    def timed_record(self, spec: RunSpec) -> tuple[dict, CheckResult | None]:
        """The timing's columns (Lab.time) and the check after it; a row timed under a heat or power
        slowdown timed again after a cool-down where the options ask (retime_throttled)."""
        timing, after = self.time(spec)
        record = timing.as_record()
        first = nvml.thermal_or_power(timing.card.get("throttle"))
        if first and self.options.retime_throttled:
            nvml.cool_down()
            timing, after = self.time(spec)
            record = timing.as_record() | {"retimed": " ".join(first)}
        return record, after

    # -- one run -> one record -----------------------------------------------------------------
    def execute(self, spec: RunSpec) -> dict:
        record = spec.base_record()
        reason = constraint_reason(spec, self.arch)
        if reason:
            return record | {"skip_reason": reason} | self.env
        if spec.variant is not None:
            compiled = compile_spec(spec, self.arch)
            launch = spec.variant.launch(spec.params, spec.shape)
            record |= compiled.resources.as_record() | {
                "smem_dynamic_bytes": launch.smem_dynamic_bytes,
                "grid": launch.grid,
                "block": launch.block,
            } | occupancy_columns(spec, compiled.resources, launch, self.sm_limits)
            if launch.smem_dynamic_bytes + compiled.resources.smem_static_bytes > self.device.smem_per_block_optin_bytes:
                return record | {"skip_reason": "needs more shared memory than a block may have"} | self.env
        if self.options.check:
            result = self.verify(spec)
            record |= result.as_record()
            if record["expected_wrong"]:
                record["correct"] = False  # a demonstration never passes, even on a run the race hid
            if not result.ok and not record["expected_wrong"]:
                return record | {"skip_reason": f"wrong output: {result.describe()}"} | self.env
        timed, after = self.timed_record(spec)
        if after is not None and not after.ok and not record["expected_wrong"]:
            return record | {"correct": False, "skip_reason": (
                f"wrong output after timing: the last timed launch, on fresh inputs into a poisoned output, gave "
                f"{after.describe()} (a kernel must do all its work on every launch; the timed median "
                f"{timed['time_ms']:.4g} ms is not a time of the work)")} | self.env
        record |= timed
        seconds = timed["time_ms"] / 1e3
        flops = spec.experiment.flops(spec.shape)
        if flops:
            record["gflops"] = flops / seconds / 1e9
        record["gbps"] = spec.experiment.bytes_moved(spec.shape) / seconds / 1e9
        record |= spec.experiment.records_extra(spec.shape, spec.params)
        return record | self.env


def refill_inputs(inputs: dict, fresh: dict) -> None:
    """Copy the arrays of `fresh` (the same experiment's inputs at the same shape, another seed) into
    those of `inputs` in place, so every launcher already built on them reads the new values; values
    that are not arrays (flags, offsets) stay as they are."""
    cupy = seam.cupy()
    for name, value in fresh.items():
        if isinstance(value, cupy.ndarray) and isinstance(inputs.get(name), cupy.ndarray):
            cupy.copyto(inputs[name], value)


NOT_WRITTEN = -(1 << 62)


def merge_poisoned(first, second, xp):
    """The every-element-written check for integer outputs, which have no NaN.

    `first` was poisoned with some value P and `second` with its complement ~P (every bit differs)
    before the same launch: an element the kernel wrote holds the same value in both, one it never
    wrote holds P in one and ~P in the other, whatever its true value. Returns the agreed values as
    int64 with NOT_WRITTEN (no 32-bit integer) where they differ, and how many differ.
    """
    differ = first != second
    merged = xp.where(differ, xp.int64(NOT_WRITTEN), first.astype(xp.int64))
    return merged, int(xp.count_nonzero(differ))


def derive(records: list[dict], baseline_variant: str, match: tuple[str, ...] | None = None) -> list[dict]:
    """Add the columns that compare runs of one shape: % of cuBLAS and speedup over the baseline.

    The speedup is over the baseline's best config; `match` names params that change the problem
    rather than the implementation (the stencil's radius R), so a row is compared only with
    baseline configs of the same values. None: the experiment's own `problem_params`.
    """
    if match is None:
        match = _problem_params(records)
    by_shape: dict[str, list[dict]] = {}
    for r in records:
        by_shape.setdefault(r["shape"], []).append(r)
    for rows in by_shape.values():
        timed = [r for r in rows if r.get("time_ms") and not r.get("expected_wrong")]
        cublas = [r for r in timed if r["variant"] == "cublas"]
        base = [r for r in timed if r["variant"] == baseline_variant]
        for r in rows:
            if not r.get("time_ms"):
                continue
            if cublas and r.get("gflops"):
                r["pct_of_cublas"] = 100.0 * r["gflops"] / cublas[0]["gflops"]
            mine = parse_params_label(r.get("params"))
            same = [b for b in base if all(parse_params_label(b.get("params")).get(k) == mine.get(k)
                                           for k in match if k in mine)]
            base_ms = min((b["time_ms"] for b in same), default=None)
            if base_ms:
                r["speedup_vs_baseline"] = base_ms / r["time_ms"]
    return records


def _problem_params(records: list[dict]) -> tuple[str, ...]:
    names = {r.get("experiment") for r in records}
    return tuple(p for e in all_experiments() if e.name in names for p in getattr(e, "problem_params", ()))
