"""The package's layers, checked on its source: every `import gpulab...` (at the top of a module or
inside a function) goes down the layers, never back up. The layers, bottom to top:

    base        errors, quantities, params, arith, files, check, version: plain data, rules and the
                atomic, locked file writes
    gpu         NVRTC, the device, launches, timing, ncu's driver: knows nothing of experiments
    model       the access model: pure Python and numpy, knows nothing of CUDA
    experiments the problems and their variants (data, .cu files, access models)
    records     the CSV contract
    report      tables, pages and readings, from records and the quantities table
    lab         the pipeline: plan, compile, check, time
    worker      the lab in a replaceable worker process
    run_args    one run named on a command line
    ncu_child   the program ncu profiles
    ceilings (and memory_bound), tune (and best, which reads its tuned.json), profiling, fidelity,
                sanitize (and its child), scaffold (gpulab new): jobs built on the lab
    sweep       bench and tune on a Dask cluster: compiles spread out, timings on every GPU
    api         the Python API: gpulab.api and the package itself (gpulab/__init__.py hands the API
                out by name), each job called, records returned
    cli         the command line: parse -> api -> print (gpulab.entry: the script that loads it)

A module may import its own layer (its own package) and the layers ALLOWED lists for it."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gpulab"

LAYER_OF = {
    "gpulab": "api", "gpulab.version": "base", "gpulab.errors": "base", "gpulab.quantities": "base", "gpulab.params": "base", "gpulab.arith": "base", "gpulab.files": "base",
    "gpulab.check": "base",
    "gpulab.gpu": "gpu", "gpulab.model": "model", "gpulab.experiments": "experiments",
    "gpulab.records": "records", "gpulab.report": "report", "gpulab.lab": "lab", "gpulab.run_args": "run_args",
    "gpulab.ncu_child": "ncu_child", "gpulab.ceilings": "ceilings", "gpulab.memory_bound": "ceilings",
    "gpulab.tune": "tune", "gpulab.best": "tune",
    "gpulab.profiling": "profiling", "gpulab.fidelity": "fidelity", "gpulab.cli": "cli", "gpulab.entry": "cli",
    "gpulab.worker": "worker", "gpulab.sanitize": "sanitize", "gpulab.sanitize_child": "sanitize",
    "gpulab.scaffold": "scaffold", "gpulab.sweep": "sweep", "gpulab.api": "api",
}
BELOW_LAB = {"base", "gpu", "model", "experiments", "records"}
ALLOWED = {
    "base": set(),
    "gpu": {"base"},
    "model": {"base"},
    "experiments": {"base", "gpu", "model"},
    "records": {"base", "gpu"},
    "report": BELOW_LAB | {"ceilings"},
    "lab": BELOW_LAB,
    "run_args": BELOW_LAB | {"lab"},
    "ncu_child": BELOW_LAB | {"lab", "run_args"},
    "ceilings": BELOW_LAB,
    "worker": BELOW_LAB | {"lab"},
    "tune": BELOW_LAB | {"lab", "worker"},
    "sanitize": BELOW_LAB | {"lab"},
    "profiling": BELOW_LAB | {"lab", "run_args", "ncu_child"},
    "fidelity": BELOW_LAB | {"lab", "run_args", "ncu_child", "profiling"},
    "scaffold": BELOW_LAB,
    "sweep": BELOW_LAB | {"lab", "worker", "tune"},
    "api": set(LAYER_OF.values()) - {"api", "cli"},
    "cli": set(LAYER_OF.values()) - {"cli"},
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
    source.write_text("def f():\n    from gpulab.cli import app\n    import gpulab.lab\n    from gpulab import quantities\n")
    assert imported(source) == {"gpulab.cli", "gpulab.lab", "gpulab.quantities"}
    assert layer("gpulab.lab") == "lab" and layer("gpulab") == "api" and layer("gpulab.something_new") is None
