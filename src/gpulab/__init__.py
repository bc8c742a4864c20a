"""gpulab: a laboratory for GPU kernel performance.

Importing gpulab never touches the GPU or the CUDA driver: CuPy is imported lazily by the modules
that launch kernels, so the CPU commands (list, predict, compile-only run) work anywhere.

The Python API (gpulab.api) is here by name, loaded on first use:

    import gpulab
    rows = gpulab.bench("coalesce", variants=["rows"], shapes=["8192x8192"])   # needs a GPU
    rows.to_pandas()
    gpulab.predict("sgemm", "v1:TILE=16", shape="512x512x512").summary        # no GPU needed
"""

from gpulab.version import __version__  # noqa: F401  (gpulab.__version__)

# name -> the gpulab.api function it is; resolved by __getattr__ so `import gpulab` stays light.
# None of them is also the name of a module of the package (those live in run/ and jobs/), so an
# import of a submodule never replaces one of these names with a module.
_API = ("card", "bench", "best", "verify", "run", "compile_only", "predict", "profile", "compare", "experiment",
        "experiments", "variants", "ceilings", "tune", "tune_replay", "fidelity", "sanitize", "Records", "new",
        "BenchOptions", "Progress", "MainRun", "ab", "Problem", "load_problem", "suite")


def __getattr__(name: str):
    if name in _API:
        from gpulab import api

        return getattr(api, name)
    raise AttributeError(f"module 'gpulab' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_API])
