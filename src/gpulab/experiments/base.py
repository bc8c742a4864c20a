"""What an experiment and a variant are, as data.

An experiment is one problem with a reference answer; a variant is one `.cu` file that solves it,
compiled with params as -D defines. Everything the harness, the CLI, the tests and the reports need
to know about a kernel is declared here, once: adding a variant is one `.cu` file plus one `Variant`
entry in its experiment's `__init__.py`, or one `.cu` file that declares itself in a gpulab block
(gpulab.experiments.declared.variant_from_file).

This module knows nothing about CUDA: device arrays arrive as objects of an array module `xp`
(numpy or cupy) chosen by the harness.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import re
from pathlib import Path
from typing import Any, Callable

from gpulab.errors import GpulabError
from gpulab.params import params_label

Params = dict[str, int]


@dataclasses.dataclass(frozen=True)
class Shape:
    """A problem size: named dimensions, e.g. ('M', 'N', 'K') -> (4096, 4096, 4096)."""

    names: tuple[str, ...]
    values: tuple[int, ...]

    def __getitem__(self, name: str) -> int:
        return self.values[self.names.index(name)]

    @property
    def label(self) -> str:
        return "x".join(str(v) for v in self.values)

    def as_record(self) -> dict[str, Any]:
        return {"shape": self.label, **{n.lower(): v for n, v in zip(self.names, self.values)}}


@dataclasses.dataclass(frozen=True)
class Param:
    """One compile-time value of a variant: its name, the values it accepts, its default."""

    name: str
    choices: tuple[int, ...]
    default: int
    help: str = ""

    def __post_init__(self) -> None:
        if self.default not in self.choices:
            raise ValueError(f"default {self.name}={self.default} is not among {self.choices}")


@dataclasses.dataclass(frozen=True)
class Launch:
    """Grid and block for one launch, computed from params and shape."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem_dynamic_bytes: int = 0
    # Blocks per thread-block cluster, as the kernel's __cluster_dims__ fixes them at compile time
    # (the launch itself passes nothing): a cluster's blocks run on SMs of one GPC, so fewer SMs may
    # run a clustered grid at once than the card has (gpulab.gpu.clusters), which the best row's
    # model counts its waves over.
    cluster: int = 1

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


def no_constraints(params: Params, shape: Shape | None) -> str | None:
    return None


def no_extra_args(inputs: dict, out: Any, shape: Shape, params: Params) -> tuple:
    return ()


@dataclasses.dataclass(frozen=True)
class Staged:
    """What a variant's `stage` step gives the harness: `inputs` replace the experiment's inputs of
    the same names in the kernel's arguments (copies in a layout the kernel can read, allocated once
    for the run), and `copy()` refills them from the originals. The harness calls `copy()` right
    before every launch of the kernel (the check, each timed repetition, the launches ncu and the
    sanitizer see), so the copy is part of the run's time, as it is of a user's. `moved_bytes`: what
    one copy reads plus writes, for its cost against the copy ceiling. With `dependent_launch` the
    kernel is launched as a programmatic dependent of the copy (gpulab.gpu.launch): it may start
    while the copy finishes, so it must wait for the copy's writes itself (griddepcontrol.wait)."""

    inputs: dict[str, Any]
    copy: Callable[[], None]
    moved_bytes: int = 0
    dependent_launch: bool = False


def no_staging(inputs: dict, shape: Shape, params: Params, arch: str) -> Staged | None:
    return None


def no_stage_bytes(params: Params, shape: Shape) -> int:
    return 0


def as_given(params: Params, shape: Shape) -> Params:
    return params


def no_warp_steps(params: Params, shape: Shape) -> int:
    return 0


def any_shape(shape: Shape) -> str | None:
    return None


@dataclasses.dataclass(frozen=True)
class Variant:
    """One kernel of an experiment.

    `launch(params, shape)` gives the grid and block. `constraints(params, shape)` returns the reason
    a config cannot run (shape None: checks that depend on params alone), or None. A variant with
    `expected_wrong` is a demonstration (a race, say): its wrong outputs are reported, never passed.
    `access` is the variant's memory-access model for `gpulab predict` (see gpulab.model), if any.
    `min_sm` is the oldest architecture whose instructions it uses (80: sm_80, for cp.async), with
    `min_sm_for` saying which; on an older card it is skipped with that reason. With `arch_specific`
    it uses instructions of that architecture's `a` target alone (sm_90a: wgmma, setmaxnreg): it is
    compiled for sm_XYa, whose code runs on that one architecture, and skipped on any other.
    `extra_args(inputs, out, shape, params)` gives the arguments its entry takes after the
    experiment's common ones (`Experiment.kernel_args`), e.g. TMA tensor maps built from the
    inputs' device pointers and the tile params; none by default.
    `stage(inputs, shape, params, arch)` gives a gpulab.experiments.base.Staged where the kernel cannot
    read the inputs as they are (a TMA rung's operands whose rows are not 16-byte aligned: it
    copies them into padded buffers), or None where it can; none by default. `stage_bytes(params,
    shape)` is what that step reads plus writes at a shape, known without a GPU (0 where it copies
    nothing): its Staged.moved_bytes, and what the best row's model (gpulab.jobs.cost) charges it at
    the copy ceiling before the kernel's own time.
    """

    name: str
    file: str
    summary: str
    launch: Callable[[Params, Shape], Launch]
    params: tuple[Param, ...] = ()
    constraints: Callable[[Params, Shape | None], str | None] = no_constraints
    expected_wrong: bool = False
    access: Callable[..., Any] | None = None
    # The param values `bench` and `run` sweep when none are given, e.g. {"TILE": (8, 16, 32)}.
    sweep: dict[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)
    min_sm: int = 0
    min_sm_for: str = ""
    # The shapes `gpulab tune` scores this variant on when none are given (empty: the experiment's
    # tune shapes): a variant made for one shape class (skinny products) is tuned on that class.
    tune_shapes: tuple[tuple[int, ...], ...] = ()
    arch_specific: bool = False
    extra_args: Callable[..., tuple] = no_extra_args
    stage: Callable[..., Staged | None] = no_staging
    stage_bytes: Callable[[Params, Shape], int] = no_stage_bytes
    # A rung of the experiment's ladder (its table and picture in the README and the report); False
    # for a kernel made for one shape class (a GEMV, split-K), which the best row's table shows.
    rung: bool = True
    # The param that tells the launch how many blocks an SM runs at once (a grid planned in waves,
    # sgemm v13's RESIDENT). Only the compiled kernel's registers say what is true; where the two
    # differ the run is still right but planned for waves the card does not run, and its record says
    # so (gpulab.run.lab.resident_note).
    resident_param: str = ""
    # The param that splits each output tile's K over that many blocks, for a split whose partials
    # never reach global memory (kc adds them in its cluster's shared memory): the best row's model
    # tells a split from a cluster padded past M by the partials it stores, else by the blocks that
    # store, and where N is under the blocks' bands of columns (kc at 2048x31x4096) only one block a
    # tile stores. A split with a workspace in global memory needs no declaration.
    split_param: str = ""
    # The param that turns a persistent grid's stream-K share on (nonzero: its last tiles' k-tiles
    # shared evenly over the blocks) or off (0: whole tiles, round by round). Where the best row's
    # model has no access model to say which (its cheap bound; a config the access model declines),
    # a persistent grid is taken to share its tiles evenly unless this param says 0: t4's
    # SCHEDULE=0 configs were bounded as stream-K, came first in the order the access model is
    # evaluated in, and used up t4's turns at 1024x6144x4096 (192 tiles, 1.45 rounds), where its
    # 192-wide tiles, never weighed, ran fastest (H200). "" where no param says.
    stream_k_param: str = ""
    # Whether the block that adds a split tile's partials reads them one slice after another, each
    # slice's loads issued only once the last one's have come back (v12's first segment waits on each
    # later segment's flag; v13's and d0's fixups loop over the slices rolled): the tile's fixup is
    # then a series on one SM, which the best row's model counts (gpulab.jobs.cost.serial_fixup_s).
    # False where the slices' loads are in flight at once (sx, gv: their S loads unrolled).
    serial_fixup: bool = False
    # The param that is the K depth of one step of a k-loop that waits for its own loads every step
    # (loads, a barrier, the math, a barrier; nothing prefetched, or one tile in registers whose
    # wait a small tile's math does not cover, as sgemm's sk): its steps are a chain no other
    # work of the block hides, each at least what the variant's runs on the card allow, which the
    # best row's model counts (gpulab.jobs.calibration.StepFloors). "" for a pipelined k-loop.
    k_step_param: str = ""
    # The steps one after another that a warp's share of K takes at `shape`, where a block's warps
    # split K among them (gemm_bf16's d0: KW warps, each a k range), with any partials its block then
    # reads one slice after another; 0 where the variant does not say. At a launch of one or two
    # rounds these chains, not the bytes, set the order of configs: d0 in KW = 4 runs twice KW = 8's
    # steps a warp, and ran 0.94 of its efficiency at 1x4096x4096 (256 blocks, one round of either),
    # but at 1x6144x4096, where KW = 8 runs two rounds of half the steps, the faster (H200). The best
    # row's model reads a config's standing beside its variant's fastest only where the two chains
    # stood as they stand at the shape (gpulab.jobs.best_efficiency.EfficiencyReader.config_factor).
    warp_k_steps: Callable[[Params, Shape], int] = no_warp_steps
    # The params that size the output tile where they are not named BM and BN (gemm_bf16's ks: TN,
    # the tokens a tile holds). A persistent grid's launch does not change with them, but the work
    # does: the best row's model weighs a move of one (gpulab.jobs.candidates.one_param_moves).
    tile_params: tuple[str, ...] = ()
    # The measured ceiling (gpulab.ceilings) this variant is held to where it is not its experiment's
    # compute_ceiling ("": the experiment's), and how many of that ceiling's operations each FLOP of
    # the problem costs: sgemm's v14 runs FP32 GEMM as three TF32 products ("tensor_tf32", 3).
    compute_ceiling: str = ""
    ceiling_ops: int = 1
    # The config that runs the same work at `shape` in the form its timed runs most likely have: a
    # param that does nothing at that shape at its default (gemm_bf16's t4: EDGE where no rows or
    # columns lie past whole tiles). The best row's model cannot tell such configs apart, so without
    # it a tie went to whichever a tune had recorded, timed or not (gpulab.jobs.best).
    canonical: Callable[[Params, Shape], Params] = as_given
    # Why the best row's model leaves the variant out at `shape` (None: it weighs it): a kernel made
    # for one shape class, far outside it, where its runs inside the class lend it an efficiency its
    # launch there does not reach (sgemm's gv, a GEMV for a few rows). bench and tune still run it.
    best_refusal: Callable[[Shape], str | None] = any_shape

    def arch_reason(self, arch: str) -> str | None:
        """Why this variant cannot run on `arch` ('sm_75'), or None."""
        number = int("".join(ch for ch in arch.split("_")[-1] if ch.isdigit()) or 0)
        if self.arch_specific and number != self.min_sm:
            return f"needs sm_{self.min_sm}a ({self.min_sm_for}), whose code runs on sm_{self.min_sm} only; this is {arch}"
        if self.min_sm and number < self.min_sm:
            return f"needs sm_{self.min_sm} or newer ({self.min_sm_for}); this is {arch}"
        return None

    @property
    def arch_label(self) -> str:
        """Where it runs: 'sm_90a' (that architecture alone), 'sm_80+' (it and newer), '' (anywhere)."""
        if not self.min_sm:
            return ""
        return f"sm_{self.min_sm}a" if self.arch_specific else f"sm_{self.min_sm}+"

    def compile_arch(self, arch: str) -> str:
        """The target its cubin is compiled for on `arch`: the arch-specific sm_XYa where it needs
        one, else `arch` itself."""
        return arch.rstrip("a") + "a" if self.arch_specific else arch

    def default_params(self) -> Params:
        return {p.name: p.default for p in self.params}

    def completed_params(self, given: dict) -> Params | None:
        """Params recorded earlier (a tune's pick, a result row's label) as this variant takes them
        today: every param named, one added since at its declared default (a new param defaults to
        the kernel the variant had before it: t4's SCHEDULE=0, EDGE=0). None where the variant no
        longer takes them: a name it lost, a value it no longer offers, a value that is no integer."""
        known = {p.name: p for p in self.params}
        if not set(given) <= set(known):
            return None
        try:
            given = {k: int(v) for k, v in given.items()}
        except (TypeError, ValueError):
            return None
        if not all(given[k] in known[k].choices for k in given):
            return None
        return {p.name: given.get(p.name, p.default) for p in self.params}

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise GpulabError(
            f"variant '{self.name}' has no param {name}; its params are: "
            + (", ".join(p.name for p in self.params) or "none")
        )

    def param_grid(self, overrides: dict[str, tuple[int, ...]] | None = None) -> list[Params]:
        """Every combination of the given param values (defaults for the rest), validated."""
        overrides = overrides or {}
        axes = []
        for p in self.params:
            values = overrides.get(p.name, (p.default,))
            for v in values:
                if v not in p.choices:
                    raise GpulabError(
                        f"{self.name}: {p.name}={v} is not accepted; choose from "
                        + ", ".join(str(c) for c in p.choices)
                    )
            axes.append([(p.name, v) for v in values])
        return [dict(combo) for combo in itertools.product(*axes)]

    def params_label(self, params: Params) -> str:
        return params_label(params)


class Experiment:
    """One problem with a reference answer. Subclasses fill in the data and the numerics.

    Class attributes to set: name, title, dims (shape dimension names), entry (the extern "C"
    kernel name every variant defines), variants, baseline (the variant speedups are against),
    default_shapes (what `gpulab run` and `bench` use), test_shapes, bound ('compute' or 'memory',
    which ceiling a record is shown against).
    """

    name: str = ""
    title: str = ""
    dims: tuple[str, ...] = ()
    entry: str = ""
    variants: tuple[Variant, ...] = ()
    baseline: str = ""
    bound: str = "memory"
    # The measured ceiling (gpulab.ceilings) a compute-bound record is shown against: the FP32 FMA
    # rate by default; a tensor-core experiment names its own (gemm_bf16: "tensor_bf16").
    compute_ceiling: str = "fma_fp32"
    default_shapes: tuple[tuple[int, ...], ...] = ()
    test_shapes: tuple[tuple[int, ...], ...] = ()
    tune_shapes: tuple[tuple[int, ...], ...] = ()  # what `gpulab tune` scores on; default_shapes if empty
    readme_variants: tuple[str, ...] = ()  # the variants of the README's per-shape table (empty: all)
    ragged_shapes: tuple[tuple[int, ...], ...] = ()  # what `gpulab fidelity` measures beside the first default shape
    # The one shape that stands for the experiment: where the README's ladder table reads each rung
    # and where `gpulab run`'s tour runs it (tour_shape); none: the last default shape for the tour,
    # and no ladder table.
    headline_shape: tuple[int, ...] = ()
    max_dim: int = 1 << 31
    # The .cu files of one-file variants added to this experiment for one command (`--kernel`);
    # set on a copy by gpulab.experiments.with_kernels, never on the package's own instance.
    kernel_files: tuple[str, ...] = ()

    @property
    def tour_shape(self) -> tuple[int, ...]:
        """Where `gpulab run` (the tour) runs the ladder: the headline shape, else the last default."""
        return self.headline_shape or self.default_shapes[-1]

    # -- where the kernels live -------------------------------------------------------------
    @property
    def directory(self) -> Path:
        module = importlib.import_module(type(self).__module__)
        return Path(module.__file__).resolve().parent

    def source(self, variant: Variant) -> Path:
        return self.directory / variant.file

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        if name in self.vendor_baselines():
            raise GpulabError(f"{name} is the vendor library {self.name} runs beside its variants, not one of them: "
                              "bench runs it beside every shape, and profile and compare take it by name")
        raise GpulabError(
            f"experiment '{self.name}' has no variant '{name}'; choose from "
            + ", ".join(v.name for v in self.variants)
        )

    def ceiling_for(self, variant: str | None) -> tuple[str, int]:
        """(compute ceiling, its operations per FLOP of the problem) that records of `variant` are held
        to: the variant's own where it names one, else the experiment's (a vendor library, a name not
        among the variants)."""
        v = next((v for v in self.variants if v.name == variant), None)
        if v is not None and v.compute_ceiling:
            return v.compute_ceiling, v.ceiling_ops
        return self.compute_ceiling, 1

    # -- shapes -----------------------------------------------------------------------------
    def shape(self, *values: int) -> Shape:
        shape = Shape(self.dims, tuple(int(v) for v in values))
        self.validate_shape(shape)
        return shape

    def square(self, n: int) -> Shape:
        """The shape `--size n` means: every dimension n."""
        return self.shape(*([n] * len(self.dims)))

    def parse_shape(self, text: str) -> Shape:
        parts = re.split(r"[x,×]", text.strip().lower())
        if len(parts) != len(self.dims):
            count = f"{len(self.dims)} number{'s' if len(self.dims) > 1 else ''}"
            raise GpulabError(
                f"shape '{text}' for {self.name} needs {count} "
                f"({'x'.join(self.dims)}), e.g. {'x'.join(['1024'] * len(self.dims))}"
            )
        return self.shape(*(parse_positive_int(p, f"{text.strip()}: {name}")
                            for p, name in zip(parts, self.dims)))

    def validate_shape(self, shape: Shape) -> None:
        for name, value in zip(shape.names, shape.values):
            if value < 1:
                raise GpulabError(f"{self.name}: {name}={value} must be at least 1")
            if value > self.max_dim:
                raise GpulabError(f"{self.name}: {name}={value} is larger than {self.max_dim}")

    def default_shape_list(self) -> list[Shape]:
        return [self.shape(*s) for s in self.default_shapes]

    # -- numerics (subclasses implement) -----------------------------------------------------
    def flops(self, shape: Shape) -> float:
        return 0.0

    def bytes_moved(self, shape: Shape) -> int:
        """The bytes the problem must move through DRAM: each input read once, output written once."""
        raise NotImplementedError

    def device_bytes(self, shape: Shape) -> int:
        """Device memory one run needs (inputs, output, and the reference when it is on the GPU)."""
        raise NotImplementedError

    def make_inputs(self, shape: Shape, rng, exact: bool) -> dict[str, Any]:
        """Host (numpy) inputs, fresh for each check; `exact` gives small integers."""
        raise NotImplementedError

    def make_device_inputs(self, shape: Shape, seed: int, exact: bool, xp) -> dict[str, Any] | None:
        """Inputs drawn straight on the device (`xp` is CuPy) from `seed`, where the experiment can
        and the host would be slow; None (the default): make_inputs draws them on the host."""
        return None

    def output(self, shape: Shape, xp) -> Any:
        """A fresh output array filled with a poison value (NaN for floats)."""
        raise NotImplementedError

    def kernel_args(self, inputs: dict[str, Any], out: Any, shape: Shape, params: Params) -> tuple:
        raise NotImplementedError

    def check(self, out: Any, inputs: dict[str, Any], shape: Shape, exact: bool, xp):
        """Compare `out` with the reference; returns a gpulab.check.CheckResult."""
        raise NotImplementedError

    def vendor_baselines(self) -> dict[str, Callable]:
        """Library implementations timed beside the variants: {row name: fn(inputs, out, shape)}."""
        return {}

    def vendor_work(self, library: str, inputs: dict[str, Any], shape: Shape) -> Callable[[], None] | None:
        """What a library row times, where that is not the call its check runs (None: the same
        call). A library that returns a new array (torch) is checked by copying its answer into the
        output, a pass over memory its own time must not include."""
        return None

    def best_default(self, shape: Shape) -> tuple[str, Params, str] | None:
        """What gpulab's best row runs at `shape` when no tuned shape is near (gpulab.jobs.best):
        (variant name, params, why), or None for no best row there."""
        return None

    def records_extra(self, shape: Shape, params: Params) -> dict[str, Any]:
        """Experiment-specific columns for a record (e.g. the napkin-math bytes)."""
        return {}


def parse_positive_int(text: str, what: str) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise GpulabError(f"{what} '{text}' is not a whole number") from None
    if value < 1:
        raise GpulabError(f"{what} {value} must be at least 1")
    return value


