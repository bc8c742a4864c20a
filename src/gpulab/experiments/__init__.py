"""The registry: every experiment by name, in the order `gpulab run` takes them.

Four places hold experiments, all under the same contract (an importable package whose
`EXPERIMENT` is an `Experiment` instance; see docs/contract.md):
  1. the built-ins below, shipped in this package;
  2. every package in a folder named by the GPULAB_PATH environment variable (folders separated by
     os.pathsep, as PATH is), imported by its folder's name with that folder on sys.path;
  3. every entry point of the group `gpulab.experiments` (a pip-installable plugin), whose value is
     the package (or its EXPERIMENT object): `[project.entry-points."gpulab.experiments"]
     transpose = "transpose"`;
  4. every problem file named by GPULAB_PROBLEMS (files separated by os.pathsep): one .py file whose
     PROBLEM is an experiment (gpulab.Problem.from_torch); `load_problem` adds one, and the
     command line's `--problem FILE` or a FILE.py in the experiment's place calls it.
A name used twice, a folder that does not exist or a package that fails to import stops every
command with one line naming the file and line to fix. This list is the single source of the CLI's
choices, the reports and the tests.
"""

from __future__ import annotations

import copy
import functools
import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
import traceback
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.experiments.base import Experiment
from gpulab.experiments.declared import variant_from_file
from gpulab.experiments.torch_problem import INSTALL_HINT as TORCH_HINT

EXPERIMENT_MODULES = ("sgemm", "coalesce", "stencil", "grayscale", "gemm_bf16")
PATH_VARIABLE = "GPULAB_PATH"
PROBLEMS_VARIABLE = "GPULAB_PROBLEMS"
ENTRY_POINT_GROUP = "gpulab.experiments"


def all_experiments() -> list[Experiment]:
    """The built-ins, then GPULAB_PATH's packages, the entry points' and GPULAB_PROBLEMS' files
    (each name once)."""
    return list(_discover(os.environ.get(PATH_VARIABLE, ""), os.environ.get(PROBLEMS_VARIABLE, "")))


def load_problem(path) -> Experiment:
    """The experiment a problem file defines (its PROBLEM), added to every experiment this process
    and the processes it starts know (the file joins GPULAB_PROBLEMS)."""
    if not isinstance(path, (str, Path)) or not str(path).strip():
        raise GpulabError(f"a problem is a .py file, e.g. load_problem('softmax.py'); got {path!r:.60}")
    path = Path(path).expanduser().resolve()
    if path.suffix != ".py" or not path.is_file():
        raise GpulabError(f"{path}: no such .py file (a problem file defines PROBLEM = gpulab.Problem.from_torch(...))")
    loaded = _problems(str(path))  # first: a file that fails to load joins nothing
    before = os.environ.get(PROBLEMS_VARIABLE)
    known = [p for p in (before or "").split(os.pathsep) if p.strip()]
    if str(path) not in known:
        os.environ[PROBLEMS_VARIABLE] = os.pathsep.join([*known, str(path)])
        try:
            all_experiments()  # a name another experiment has: refused, and the registry left as it was
        except GpulabError:
            if before is None:
                del os.environ[PROBLEMS_VARIABLE]
            else:
                os.environ[PROBLEMS_VARIABLE] = before
            raise
    return next(exp for exp, where in loaded if where == str(path))


def get_experiment(name: str, kernels=()) -> Experiment:
    """The experiment called `name` (or defined by the problem file `name`, a .py path); with
    `kernels` (paths of .cu files that declare themselves, see gpulab.experiments.declared), a copy
    that has those variants beside its own."""
    if isinstance(name, str) and name.endswith(".py"):
        exp = load_problem(name)
        return with_kernels(exp, kernels) if kernels else exp
    for exp in all_experiments():
        if exp.name == name:
            return with_kernels(exp, kernels) if kernels else exp
    for folder in (f for f in os.environ.get(PATH_VARIABLE, "").split(os.pathsep) if f.strip()):
        package = Path(folder).expanduser() / str(name)
        if package.is_dir():  # a folder of that name, not a package: discovery passes it by
            raise GpulabError(f"unknown experiment '{name}': {package} is on {PATH_VARIABLE} but has no __init__.py; "
                              "an experiment is a package whose __init__.py sets EXPERIMENT (`gpulab new` writes one)")
    raise GpulabError(
        f"unknown experiment '{name}'; choose from " + ", ".join(e.name for e in all_experiments())
        + f" (experiments of your own: a folder of packages on {PATH_VARIABLE}, see `gpulab new`)"
    )


def with_kernels(exp: Experiment, kernels) -> Experiment:
    """A copy of `exp` with the variants declared in the .cu files `kernels` added after its own;
    the package and its files are untouched. The copy remembers the files (`kernel_files`) so a
    child process (the profiler's) can rebuild it."""
    mine = copy.copy(exp)
    added = []
    for path in kernels:
        v = variant_from_file(Path(path), experiment=exp)
        if any(v.name == x.name for x in (*exp.variants, *added)):
            raise GpulabError(f"{path}: variant name '{v.name}' is already a variant of {exp.name}; "
                              "give the file another name (a `name:` line in its gpulab block)")
        added.append(v)
    mine.variants = (*exp.variants, *added)
    mine.kernel_files = tuple(str(Path(p).resolve()) for p in (*exp.kernel_files, *kernels))
    return mine


# -- discovery ----------------------------------------------------------------------------------
@functools.cache
def _discover(path_value: str, problems_value: str = "") -> tuple[Experiment, ...]:
    """Cached per GPULAB_PATH and GPULAB_PROBLEMS value, so a test (or a user) that changes them
    sees the change."""
    found: dict[str, tuple[Experiment, str]] = {}
    for m in EXPERIMENT_MODULES:
        exp = importlib.import_module(f"gpulab.experiments.{m}").EXPERIMENT
        found[exp.name] = (exp, "built-in")
    for folder in (f for f in path_value.split(os.pathsep) if f.strip()):
        for exp, where in _from_folder(Path(folder).expanduser()):
            _add(found, exp, where)
    for ep in _entry_points():
        _add(found, *_from_entry_point(ep))
    for file in (f for f in problems_value.split(os.pathsep) if f.strip()):
        for exp, where in _problems(file):
            _add(found, exp, where)
    return tuple(exp for exp, _ in found.values())


@functools.cache
def _problems(file: str) -> tuple[tuple[Experiment, str], ...]:
    """The experiment of one problem file, imported once per process under a name of its own."""
    path = Path(file).expanduser()
    if not path.is_file():
        raise GpulabError(f"{PROBLEMS_VARIABLE} names {path}, which is not a file; fix or remove that entry")
    name = "gpulab_problem_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except GpulabError as exc:
        del sys.modules[name]
        raise GpulabError(f"{path}: {exc}") from None
    except SyntaxError as exc:
        del sys.modules[name]
        raise GpulabError(f"{exc.filename}:{exc.lineno}: {exc.msg}") from None
    except ModuleNotFoundError as exc:
        del sys.modules[name]
        if exc.name == "torch":
            raise GpulabError(f"{_where(exc, path)}: this problem is written in PyTorch, which is not installed here; "
                              f"{TORCH_HINT}") from None
        raise GpulabError(f"{_where(exc, path)}: loading the problem file failed: {exc}") from None
    except Exception as exc:
        del sys.modules[name]
        raise GpulabError(f"{_where(exc, path)}: loading the problem file failed: {type(exc).__name__}: {exc}") from None
    exp = getattr(module, "PROBLEM", None) or getattr(module, "EXPERIMENT", None)
    if not isinstance(exp, Experiment):
        raise GpulabError(f"{path}:1: defines no PROBLEM; end the file with PROBLEM = gpulab.Problem.from_torch(...)")
    return ((exp, str(path.resolve())),)


def _add(found: dict, exp: Experiment, where: str) -> None:
    if exp.name in found:
        other = found[exp.name][1]
        raise GpulabError(f"{_name_line(exp, where)}: experiment '{exp.name}' clashes with the "
                          f"{'built-in' if other == 'built-in' else 'one in ' + other} of that name; "
                          "rename it (its `name = ...`)")
    found[exp.name] = (exp, where)


def _from_folder(folder: Path) -> list[tuple[Experiment, str]]:
    if not folder.is_dir():
        raise GpulabError(f"{PATH_VARIABLE} names {folder}, which is not a folder; fix or remove that entry")
    packages = sorted(p for p in folder.iterdir() if (p / "__init__.py").is_file())
    # Appended, not prepended: a package named like an installed module (json, copy) must not
    # shadow it for everything else; the check below says to rename it instead.
    if packages and str(folder.resolve()) not in [str(Path(s).resolve()) for s in sys.path if s]:
        sys.path.append(str(folder.resolve()))
    out = []
    for package in packages:
        init = package / "__init__.py"
        module = _import(package.name, init)
        loaded = Path(getattr(module, "__file__", "") or "").resolve()
        if loaded != init.resolve():
            raise GpulabError(f"{init}:1: the package name '{package.name}' is already taken by {loaded or 'a module'}; "
                              "rename the folder")
        out.append((_experiment_of(module, init), str(init)))
    return out


def _import(name: str, init: Path):
    try:
        return importlib.import_module(name)
    except GpulabError as exc:  # a declaration error in one of its .cu files, already located
        raise GpulabError(f"{init}: {exc}") from None
    except SyntaxError as exc:
        raise GpulabError(f"{exc.filename}:{exc.lineno}: {exc.msg}") from None
    except KeyboardInterrupt:  # Ctrl-C while it imported: the command's own interrupt
        raise
    except SystemExit as exc:  # would end every command, silently, with the package's code
        raise GpulabError(f"{_where(exc, init)}: importing {name} called sys.exit({exc.code!r}); a package on "
                          f"{PATH_VARIABLE} must not exit: remove the call") from None
    except BaseException as exc:
        raise GpulabError(f"{_where(exc, init)}: importing {name} failed: {type(exc).__name__}: {exc}") from None


def _where(exc: BaseException, fallback: Path) -> str:
    """file:line of the deepest frame of the traceback outside Python's own import machinery."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename
              and not f.filename.startswith("<")]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else f"{fallback}:1"


def _experiment_of(module, where) -> Experiment:
    exp = getattr(module, "EXPERIMENT", module)
    if not isinstance(exp, Experiment):
        raise GpulabError(f"{where}:1: defines no EXPERIMENT (an instance of gpulab.experiments.base.Experiment); "
                          "end the package with EXPERIMENT = MyExperiment()")
    if not exp.name:
        raise GpulabError(f"{where}:1: {type(exp).__name__} has no name; set name = '...' in the class")
    return exp


def _entry_points():
    return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)


def _from_entry_point(ep) -> tuple[Experiment, str]:
    where = f"entry point '{ep.name} = {ep.value}' of {ep.dist.name if ep.dist else 'an installed package'}"
    try:
        loaded = ep.load()
    except SyntaxError as exc:
        raise GpulabError(f"{exc.filename}:{exc.lineno}: {exc.msg} ({where})") from None
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:
        raise GpulabError(f"{_where(exc, Path(ep.value))}: loading the {where} called sys.exit({exc.code!r}); a "
                          "plugin must not exit: remove the call") from None
    except BaseException as exc:
        raise GpulabError(f"{_where(exc, Path(ep.value))}: loading the {where} failed: "
                          f"{type(exc).__name__}: {exc}") from None
    return _experiment_of(loaded, where), where


def _name_line(exp: Experiment, where: str) -> str:
    """'file:line' of the `name = ...` line of the experiment's class, or where it came from."""
    module = sys.modules.get(type(exp).__module__)
    path = Path(getattr(module, "__file__", "") or "")
    if path.is_file():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.match(r"\s*name\s*=", line):
                return f"{path}:{number}"
        return f"{path}:1"
    return where
