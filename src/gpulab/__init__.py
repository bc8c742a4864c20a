"""gpulab: a laboratory for GPU kernel performance.

Importing gpulab never touches the GPU or the CUDA driver: CuPy is imported lazily by the modules
that launch kernels, so the CPU commands (list, predict, compile-only run) work anywhere.

The Python API (gpulab.api) is here by name, loaded on first use:

    import gpulab
    rows = gpulab.bench("coalesce", variants=["rows"], shapes=["8192x8192"])   # needs a GPU
    rows.to_pandas()
    gpulab.predict("sgemm", "v1:TILE=16", shape="512x512x512").summary        # no GPU needed
"""

import sys
import types

from gpulab.version import __version__  # noqa: F401  (gpulab.__version__)

# name -> the gpulab.api function it is; resolved by __getattr__ so `import gpulab` stays light.
# `experiments` is the registry package (gpulab.experiments; the API's list is gpulab.api.experiments).
_API = ("card", "bench", "best", "model_error", "model_alone", "verify", "run", "compile_only", "predict", "profile",
        "compare", "experiment", "variants", "ceilings", "tune", "tune_replay", "fidelity", "sanitize", "Records",
        "new", "BenchOptions", "Progress", "MainRun", "ab", "Problem", "load_problem", "suite", "Prediction", "Shape")
# `from gpulab import *` and help(gpulab) name the API (each loaded on first use), not this module's plumbing.
__all__ = [*_API, "__version__"]


class _Package(types.ModuleType):
    """gpulab's module type. `run` is both the API's main job and the pipeline's package (run/), and
    Python's import sets a parent's attribute to each submodule it loads: the first import of
    gpulab.run.lab (any API call makes one) replaced gpulab.run() with the package. Here a submodule
    never takes an API name's place; it stays in sys.modules, where every import finds it."""

    def __setattr__(self, name: str, value) -> None:
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str):
    if name in _API:
        from gpulab import api

        return getattr(api, name)
    raise AttributeError(f"module 'gpulab' has no attribute {name!r}")


def __dir__():
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
