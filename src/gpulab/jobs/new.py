"""`gpulab new NAME`: a working experiment package to start from, outside gpulab's own files.

It writes DIR/NAME/ with the four things an experiment is (docs/contract.md): `__init__.py` (the
problem: inputs, the float64 reference, the check, flops and bytes, default and test shapes),
`v0_naive.cu` (one variant, declaring itself in its gpulab block), `access.py` (that variant's
access model, for predict, profile and fidelity) and `test_NAME.py` (CPU tests that pass as
written, and a GPU test). Three starting points (--like): an elementwise sum of two matrices
(`copy`, memory-bound), a matrix multiply (`sgemm`, compute-bound), a three-point moving average
(`stencil`, neighbours). The files are gpulab/templates/LIKE/*.tmpl and the test, shared by all,
gpulab/templates/test_{{name}}.py.tmpl: each is copied with its `.tmpl` dropped and every
{{name}} (the experiment's name) and {{Class}} (its class name) filled in, in its file name too. Then:

    GPULAB_PATH=DIR gpulab list NAME
    GPULAB_PATH=DIR gpulab run NAME            (compiles and prints resources, with or without a GPU)
    GPULAB_PATH=DIR gpulab predict NAME v0
    GPULAB_PATH=DIR python -m pytest DIR/NAME
"""

from __future__ import annotations

import importlib.util
import keyword
import re
import shutil
import tempfile
from pathlib import Path

from gpulab.errors import CompileError, GpulabError
from gpulab.experiments import all_experiments
from gpulab.gpu.compile import compile_kernel

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
KINDS = ("copy", "sgemm", "stencil")  # the folders of TEMPLATES
SUFFIX = ".tmpl"


def new(name: str, directory: str | Path = ".", like: str = "copy") -> Path:
    """Write the package DIR/NAME from the `like` template; its folder. Refuses to overwrite, and
    refuses a name the package or its kernel could not carry (nothing is written then)."""
    if not isinstance(name, str):
        raise GpulabError(f"an experiment is named by text, e.g. gpulab.new('mine'); got {name!r:.60}")
    if not isinstance(directory, (str, Path)):
        raise GpulabError(f"directory is a folder's path, e.g. '.' or 'kernels'; got {directory!r:.60}")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise GpulabError(f"'{name}' cannot name an experiment: use lower-case letters, digits and _, starting "
                          "with a letter (it is a Python package and a CUDA function name)")
    if like not in KINDS:
        raise GpulabError(f"like {like!r}: choose one of {', '.join(KINDS)}")
    if name in {e.name for e in all_experiments()}:
        raise GpulabError(f"an experiment named '{name}' already exists (gpulab list); choose another name")
    if (spec := importlib.util.find_spec(name)) is not None:  # discovery would import that module instead
        raise GpulabError(f"'{name}' is already the name of a Python module ({spec.origin or 'a namespace package'}), "
                          "and an experiment is imported by its name; choose another name")
    folder = Path(directory).expanduser() / name
    if folder.exists():
        raise GpulabError(f"{folder} already exists; choose another name or folder (nothing was written)")
    check_kernel_name(name)
    files = {fill(path.name.removesuffix(SUFFIX), name): fill(path.read_text(), name) for path in template_files(like)}
    folder.mkdir(parents=True)
    try:
        for file_name, text in files.items():
            (folder / file_name).write_text(text)
    except OSError as exc:  # a full disk, say: no half package to block the next try
        shutil.rmtree(folder, ignore_errors=True)
        raise GpulabError(f"cannot write {exc.filename or folder}: {exc.strerror or exc}; nothing was left behind") from None
    return folder


def check_kernel_name(name: str) -> None:
    """Every variant defines `extern "C" __global__ void NAME(...)`: a C++ keyword (float) or a
    function CUDA already declares (max, sqrt, printf) cannot be that name, so NVRTC is asked first."""
    with tempfile.TemporaryDirectory() as scratch:
        probe = Path(scratch) / f"{name}.cu"
        probe.write_text(f'#include "common.cuh"\nextern "C" __global__ void {name}(float* out) {{ out[0] = 1.0f; }}\n')
        try:
            compile_kernel(probe, name)
        except CompileError as exc:
            raise GpulabError(f"'{name}' cannot be the kernel's name: NVRTC refuses `extern \"C\" __global__ void "
                              f"{name}(...)` ({str(exc).split(': ', 1)[-1][:120]}); choose another name") from None


def template_files(like: str) -> list[Path]:
    """The template's files: its own folder's, then the test every template shares."""
    return [*sorted((TEMPLATES / like).glob(f"*{SUFFIX}")), *sorted(TEMPLATES.glob(f"*{SUFFIX}"))]


def fill(text: str, name: str) -> str:
    """`text` with the placeholders filled in: {{name}} by the experiment's name, {{Class}} by its
    class name (the name's parts title-cased and joined: my_kernels -> MyKernels)."""
    class_name = "".join(part.title() for part in name.split("_"))
    return text.replace("{{name}}", name).replace("{{Class}}", class_name)
