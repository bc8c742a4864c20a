"""The package's layers, checked on its source: every `import gpulab...` (at the top of a module or
inside a function) goes down the layers, never back up, and no two modules import each other, even
through others. The layers, bottom to top, and the folder each one is:

    base        errors, quantities, params, arith, files, check, version (top-level modules): plain
                data, rules and the atomic, locked file writes
    gpu         gpu/: NVRTC, the device, launches, timing, ncu's driver: knows nothing of experiments
    model       model/: the access model, pure Python and numpy, knows nothing of CUDA
    experiments experiments/: the problems and their variants (data, .cu files, access models)
    records     records/: the CSV contract, where results live, and the card's ceilings as a table
    report      report/: tables, pages and readings, from records and the quantities table
    run         run/: the pipeline (lab), the lab in a worker process, sweeps on a Dask cluster, one
                run named on a command line, and the child programs ncu and compute-sanitizer launch
    jobs        jobs/: one module per command's job (tune, best, ceilings, profile, fidelity,
                sanitize, new), built on run/
    api         the Python API: gpulab.api and the package itself (gpulab/__init__.py hands the API
                out by name), each job called, records returned
    cli         the command line: parse -> api -> print (gpulab.entry: the script that loads it;
                gpulab.__main__: python -m gpulab)

A module may import its own layer and the layers ALLOWED lists for it; within a layer the module
graph has no cycle (test_no_import_cycle)."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gpulab"

LAYER_OF = {
    "gpulab": "api", "gpulab.version": "base", "gpulab.errors": "base", "gpulab.quantities": "base",
    "gpulab.params": "base", "gpulab.arith": "base", "gpulab.files": "base", "gpulab.check": "base",
    "gpulab.gpu": "gpu", "gpulab.model": "model", "gpulab.experiments": "experiments",
    "gpulab.records": "records", "gpulab.report": "report", "gpulab.run": "run", "gpulab.jobs": "jobs",
    "gpulab.api": "api", "gpulab.cli": "cli", "gpulab.entry": "cli", "gpulab.__main__": "cli",
}
ALLOWED = {
    "base": set(),
    "gpu": {"base"},
    "model": {"base"},
    "experiments": {"base", "gpu", "model"},
    "records": {"base", "gpu"},
    "report": {"base", "gpu", "model", "experiments", "records"},
    "run": {"base", "gpu", "model", "experiments", "records"},
    "jobs": {"base", "gpu", "model", "experiments", "records", "run"},
    "api": {"base", "gpu", "model", "experiments", "records", "report", "run", "jobs"},
    "cli": {"base", "gpu", "model", "experiments", "records", "report", "run", "jobs", "api"},
}


def layer(module: str) -> str | None:
    """The layer of a gpulab module name: its longest prefix in LAYER_OF (the package 'gpulab'
    itself only by its own name, or every new module would fall into the package's layer)."""
    parts = module.split(".")
    for n in range(len(parts), 1, -1):
        if ".".join(parts[:n]) in LAYER_OF:
            return LAYER_OF[".".join(parts[:n])]
    return LAYER_OF.get(module)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """The gpulab modules a source file imports, anywhere in it."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "gpulab"}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "gpulab":
            # 'from gpulab import quantities' names a module; 'from gpulab.x import f' names x
            out |= {f"{node.module}.{a.name}" if node.module == "gpulab" else node.module for a in node.names}
    return out


def edges() -> list[tuple[str, str]]:
    return [(module_name(p), target) for p in sorted(PACKAGE.rglob("*.py")) for target in sorted(imported(p))]


def test_every_module_has_a_layer():
    unplaced = sorted({m for m, _ in edges() if layer(m) is None} | {t for _, t in edges() if layer(t) is None})
    assert not unplaced, f"place these modules in a layer of LAYER_OF: {unplaced}"


def test_no_import_goes_back_up_the_layers():
    bad = [f"{m} ({layer(m)}) imports {t} ({layer(t)})" for m, t in edges()
           if layer(m) != layer(t) and layer(t) not in ALLOWED[layer(m)]]
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_the_rules_themselves_have_no_cycle():
    """The allowed edges between layers form no cycle, so the layers have an order."""
    done = set()

    def visit(node, path):
        assert node not in path, f"cycle: {' -> '.join(path + [node])}"
        if node in done:
            return
        for nxt in ALLOWED[node]:
            visit(nxt, path + [node])
        done.add(node)

    for node in ALLOWED:
        visit(node, [])
    assert done == set(ALLOWED)


def test_the_checker_sees_an_import_inside_a_function(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from gpulab.cli import app\n    import gpulab.run.lab\n    from gpulab import quantities\n")
    assert imported(source) == {"gpulab.cli", "gpulab.run.lab", "gpulab.quantities"}
    assert layer("gpulab.run.lab") == "run" and layer("gpulab") == "api" and layer("gpulab.something_new") is None


def _module_of(target: str, modules: set[str]) -> str | None:
    """The module an import names: 'gpulab.run.lab.Lab' is not a module, 'gpulab.run.lab' is."""
    parts = target.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in modules:
            return ".".join(parts[:n])
    return None


def test_no_import_cycle():
    """No module reaches itself through the modules it imports (a package imports its own
    submodules' names by design: the edge package -> its submodule is left out)."""
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for m, target in edges():
        t = _module_of(target, modules)
        if t and t != m and not t.startswith(m + "."):
            graph[m].add(t)
    state: dict[str, int] = {}

    def visit(node, path):
        if state.get(node) == 1:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(node):] + [node]))
        if state.get(node) == 2:
            return
        state[node] = 1
        for nxt in sorted(graph[node]):
            visit(nxt, path + [node])
        state[node] = 2

    for node in sorted(graph):
        visit(node, [])


def test_the_top_level_stays_small():
    """The package's own top level holds the two faces, the entry point and the base layer; every
    job and every stage of the pipeline lives in its folder."""
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(top) <= 12, top


def test_no_module_is_over_800_lines():
    """A module past 800 lines holds more than one job: split it (sgemm's declarations went by family,
    the command line's counters commands into cli/counters.py)."""
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 800}
    assert not long, long
