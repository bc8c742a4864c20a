"""A problem written in PyTorch, its kernels written in CUDA.

The way KernelBench and GPU MODE describe a problem: a PyTorch reference and the inputs it takes.
Everything else is gpulab's as for any experiment: the declared .cu variants, checking, timing
against the card's ceilings, predictions where an access model is given, profiles, sanitizing.

    import torch
    from gpulab import Problem

    def reference(x):                        # the answer, and torch's own row in every bench
        return torch.softmax(x, dim=-1)

    def make_inputs(shape, generator):       # fresh inputs for each check, from gpulab's seed
        return {"x": torch.randn(shape["M"], shape["N"], generator=generator, device=generator.device)}

    PROBLEM = Problem.from_torch("softmax", reference, make_inputs, dims=("M", "N"),
                                 kernels=["naive.cu", "online.cu"], default_shapes=[(8192, 4096)],
                                 out_shape=lambda s: (s["M"], s["N"]), tolerance=1e-5)

Put that in a file and name it on the command line (`gpulab bench softmax --problem softmax.py`,
or the file in the experiment's place: `gpulab bench softmax.py`), or load it from Python with
`gpulab.load_problem("softmax.py")`. Every kernel of a problem has the same arguments: each input
in make_inputs' order (a tensor as its device pointer, a Python float as float, an int as int),
then the output, then each dimension as an int:
`extern "C" __global__ void softmax(const float* x, float* out, int M, int N)`.

Inputs reach the kernels without a copy: torch makes them on the GPU and CuPy takes the same memory
through DLPack; the check hands CuPy's output back to torch the same way. The reference's output,
in float64, is the check (max-norm relative error within `tolerance`; NaN never passes and the
output is poisoned first, so every element must be written). torch's own time is its row, `torch`,
beside the kernels: the reference call alone, timed like any run.

torch is optional (the `torch` extra): without it, one line says what to install.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from gpulab.check import FP32_TOLERANCE, compare_float
from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment, Params, Shape
from gpulab.experiments.declared import variant_from_file
from gpulab.gpu import seam

INSTALL_HINT = "install PyTorch for problems written in torch: pip install 'gpulab[torch]' (or torch itself)"
LIBRARY_ROW = "torch"


def torch_module():
    """PyTorch, or one line saying how to get it."""
    try:
        import torch  # noqa: PLC0415  (optional: only problems written in torch need it)
    except ImportError:
        raise GpulabError(f"this problem is written in PyTorch, which is not installed here; {INSTALL_HINT}") from None
    return torch


class Problem:
    """The public face: Problem.from_torch(...) makes an experiment from a PyTorch reference."""

    @staticmethod
    def from_torch(name: str, reference: Callable[..., Any], make_inputs: Callable[..., dict], *,
                   dims: Sequence[str], kernels: Sequence[str | Path] = (), out_shape: Callable[[Shape], tuple],
                   out_dtype: str = "float32", default_shapes: Sequence[tuple[int, ...]] = (),
                   test_shapes: Sequence[tuple[int, ...]] = (), tolerance: float = FP32_TOLERANCE,
                   flops: Callable[[Shape], float] | None = None,
                   bytes_moved: Callable[[Shape], int] | None = None, bound: str = "memory", title: str = "",
                   baseline: str = "", folder: str | Path | None = None) -> "TorchProblem":
        """An experiment called `name` whose answer is `reference(**inputs)` and whose inputs are
        `make_inputs(shape, generator)` (a dict of torch tensors made with the torch.Generator gpulab
        seeds; a third argument, if the function takes one, is `exact`: small integers asked for).

        kernels: the .cu files of its variants, each declaring itself (/* gpulab variant */), found
        beside the file that calls this (or in `folder`). out_shape(shape) and out_dtype: the output
        gpulab poisons and hands to every kernel. tolerance: the largest max-norm relative error
        that passes. bytes_moved(shape): the bytes the problem must move (default: every input read
        once and the output written once); flops(shape) for a compute-bound problem (bound='compute')."""
        home = Path(folder) if folder is not None else _caller_folder()
        return TorchProblem(name=name, reference=reference, make=make_inputs, dims=tuple(dims),
                            kernel_files=tuple(kernels), out_shape=out_shape, out_dtype=out_dtype,
                            default_shapes=tuple(tuple(s) for s in default_shapes),
                            test_shapes=tuple(tuple(s) for s in test_shapes), tolerance=tolerance, flops_of=flops,
                            bytes_of=bytes_moved, bound=bound, title=title, baseline=baseline, home=home)


def _caller_folder() -> Path:
    """The folder of the file that called Problem.from_torch (two frames up: from_torch's caller)."""
    frame = inspect.stack()[2]
    return Path(frame.filename).resolve().parent


class TorchProblem(Experiment):
    """An experiment whose problem is a PyTorch reference (see the module's docstring)."""

    def __init__(self, *, name, reference, make, dims, kernel_files, out_shape, out_dtype, default_shapes,
                 test_shapes, tolerance, flops_of, bytes_of, bound, title, baseline, home: Path):
        if not (isinstance(name, str) and name.isidentifier() and name.islower()):
            raise GpulabError(f"problem name {name!r}: use lower-case letters, digits and _ (it names the "
                              "kernels' entry function too), e.g. 'softmax'")
        if not callable(reference) or not callable(make):
            raise GpulabError(f"{name}: reference and make_inputs must be functions")
        if not dims or not all(isinstance(d, str) and d.isidentifier() for d in dims):
            raise GpulabError(f"{name}: dims names the shape's dimensions, e.g. dims=('M', 'N')")
        if not isinstance(tolerance, (int, float)) or not tolerance > 0:
            raise GpulabError(f"{name}: tolerance {tolerance!r} must be a number above 0, e.g. 1e-5")
        if bound not in ("memory", "compute") or (bound == "compute" and flops_of is None):
            raise GpulabError(f"{name}: bound is 'memory' or 'compute' (a compute-bound problem gives flops=)")
        try:
            self.out_dtype = np.dtype(out_dtype)
        except TypeError:
            raise GpulabError(f"{name}: out_dtype {out_dtype!r} is not a dtype, e.g. 'float32'") from None
        self.name, self.dims, self.entry, self.bound = name, dims, name, bound
        self.title = title or f"{name}, checked against its PyTorch reference"
        self.reference, self.make, self.out_shape = reference, make, out_shape
        self.tolerance, self.flops_of, self.bytes_of, self.home = float(tolerance), flops_of, bytes_of, home
        self.default_shapes = default_shapes
        if not default_shapes:
            raise GpulabError(f"{name}: give default_shapes, e.g. default_shapes=[(4096, 4096)]")
        self.test_shapes = test_shapes or default_shapes
        files = [Path(f) if Path(f).is_absolute() else home / f for f in kernel_files]
        self.variants = tuple(variant_from_file(f, experiment=self) for f in files)
        self.baseline = baseline or (self.variants[0].name if self.variants else LIBRARY_ROW)
        self._takes_exact = len(inspect.signature(make).parameters) >= 3

    @property
    def directory(self) -> Path:
        return self.home

    def source(self, variant) -> Path:
        path = Path(variant.file)
        return path if path.is_absolute() else self.home / path

    # -- the numbers gpulab reports -------------------------------------------------------------
    def flops(self, shape: Shape) -> float:
        return float(self.flops_of(shape)) if self.flops_of else 0.0

    def bytes_moved(self, shape: Shape) -> int:
        if self.bytes_of is not None:
            return int(self.bytes_of(shape))
        out = int(np.prod(self._out_dims(shape))) * self.out_dtype.itemsize
        return out + sum(int(t.nelement()) * int(t.element_size()) for t in self._tensors(shape).values())

    def device_bytes(self, shape: Shape) -> int:
        # Inputs and output, torch's reference and the check's float64 copy of it, with room to spare.
        return 4 * self.bytes_moved(shape) + 8 * int(np.prod(self._out_dims(shape)))

    def _out_dims(self, shape: Shape) -> tuple[int, ...]:
        dims = self.out_shape(shape)
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        if not dims or not all(isinstance(d, (int, np.integer)) and d >= 1 for d in dims):
            raise GpulabError(f"{self.name}: out_shape({shape.label}) gave {dims!r}; it must be positive whole numbers")
        return dims

    # -- inputs, output, kernels ------------------------------------------------------------------
    def _tensors(self, shape: Shape, rng: np.random.Generator | None = None, exact: bool = False) -> dict:
        torch = torch_module()
        device = "cuda" if torch.cuda.is_available() else "cpu"
        generator = torch.Generator(device=device)
        generator.manual_seed(int((rng or np.random.default_rng(0)).integers(2**62)))
        made = self.make(shape, generator, exact) if self._takes_exact else self.make(shape, generator)
        if not isinstance(made, dict) or not made:
            raise GpulabError(f"{self.name}: make_inputs must return a dict of named inputs, e.g. {{'x': tensor}}")
        return made

    def make_inputs(self, shape: Shape, rng, exact: bool) -> dict:
        """torch's tensors, handed over without a copy: as CuPy arrays on the GPU (DLPack), as numpy
        arrays on the CPU; numbers pass as they are."""
        torch = torch_module()
        out = {}
        for key, value in self._tensors(shape, rng, exact).items():
            if isinstance(value, torch.Tensor):
                value = value.contiguous()
                out[key] = seam.cupy().from_dlpack(value) if value.is_cuda else np.from_dlpack(value)
            else:
                out[key] = value
        return out

    def output(self, shape: Shape, xp):
        poison = xp.nan if self.out_dtype.kind == "f" else np.iinfo(self.out_dtype).max
        return xp.full(self._out_dims(shape), poison, dtype=self.out_dtype)

    def kernel_args(self, inputs: dict, out, shape: Shape, params: Params) -> tuple:
        def arg(value):
            if isinstance(value, bool):
                return np.int32(value)
            if isinstance(value, int):
                return np.int32(value)
            if isinstance(value, float):
                return np.float32(value)
            return value
        return (*[arg(v) for v in inputs.values()], out, *[np.int32(shape[d]) for d in self.dims])

    # -- the reference and torch's row --------------------------------------------------------------
    def _answer(self, inputs: dict):
        """The reference on the same memory as the kernels' inputs (DLPack, no copy)."""
        torch = torch_module()
        tensors = {k: (torch.from_dlpack(v) if hasattr(v, "__dlpack__") else v) for k, v in inputs.items()}
        return self.reference(**tensors)

    def check(self, out, inputs: dict, shape: Shape, exact: bool, xp):
        ref = self._answer(inputs)
        ref = xp.from_dlpack(ref.detach().contiguous()).astype(xp.float64)
        if tuple(ref.shape) != tuple(out.shape):
            raise GpulabError(f"{self.name}: the reference returned shape {tuple(ref.shape)} and out_shape says "
                              f"{tuple(out.shape)}; make out_shape({shape.label}) match the reference")
        return compare_float(out, ref, xp, self.tolerance)

    def vendor_baselines(self) -> dict[str, Callable]:
        return {LIBRARY_ROW: self._torch_row}

    def _torch_row(self, inputs: dict, out, shape: Shape) -> None:
        """torch's row when it is checked: its answer copied into gpulab's output."""
        torch = torch_module()
        torch.from_dlpack(out).copy_(self._answer(inputs))

    def vendor_work(self, library: str, inputs: dict, shape: Shape) -> Callable[[], None] | None:
        """What torch's row times: the reference call alone. Copying its result into gpulab's
        output, as the check needs, would add a pass over memory that torch does not make."""
        return (lambda: self._answer(inputs)) if library == LIBRARY_ROW else None
