"""Shape suites: the shapes a user brings, as data. A suite is a small TOML file that names shapes
of one or more experiments and says what each is (a model's layer, say); `gpulab bench EXP --suite
NAME`, `gpulab run --suite NAME`, `gpulab best` and `gpulab tune` run or pick at its shapes, and
every row they write carries the suite's name (`suite`) and the entry's own columns (`layer`), so
the reports group by them. The format is section 5 of docs/contract.md; the built-in suites are
the files in src/gpulab/suites/ (`llm`: the linear layers of Llama-3-8B and -70B).

    [suite]
    name = "mine"                         # [a-z0-9_]; default: the file's name
    title = "what the shapes are"
    experiments = ["gemm_bf16", "sgemm"]  # which experiments it is for (default: any whose
                                          # dimensions it gives)
    sources = ["where the sizes come from"]

    [defaults]                            # dimensions every [[shape]] takes unless it gives its own
    M = [1, 16, 128]

    [[shape]]                             # one entry: whole numbers (or lists of them, expanded as
    layer = "qkv"                         # a product) are dimensions, text is a column of the rows
    N = 6144
    K = 4096

A bad file is refused before anything runs, in one line that names the file and the line: TOML it
cannot read, a key it does not know, an experiment gpulab does not have, a dimension the experiment
does not have or lacks, a shape the experiment refuses (too big), a shape listed twice, no shapes.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import tomllib
from pathlib import Path
from typing import Any

from gpulab.errors import GpulabError
from gpulab.experiments import all_experiments
from gpulab.experiments.base import Experiment, Shape

# The built-in suites: package data beside the experiments (src/gpulab/suites/NAME.toml).
BUILTIN_DIR = Path(__file__).resolve().parents[1] / "suites"
SUFFIX = ".toml"
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_]*")
# Columns a row already has: an entry may not name one (its value would overwrite the run's).
RESERVED_COLUMNS = frozenset({"experiment", "variant", "params", "picked", "chosen_by", "shape", "suite",
                              "correct", "skip_reason", "time_ms", "gflops", "gbps"})
SUITE_KEYS = {"name": str, "title": str, "experiments": list, "sources": list}
Scalar = str | int | float | bool


@dataclasses.dataclass(frozen=True)
class Entry:
    """One [[shape]] of the file: its dimensions (each a tuple of values, expanded as a product),
    its columns, and the lines they are on (for the one-line errors)."""

    dims: dict[str, tuple[int, ...]]
    columns: dict[str, Scalar]
    line: int
    key_lines: dict[str, int]


@dataclasses.dataclass(frozen=True)
class SuiteShape:
    """One shape of a suite for one experiment, with the columns its rows carry."""

    shape: Shape
    columns: dict[str, Scalar]


@dataclasses.dataclass(frozen=True)
class Suite:
    name: str
    title: str
    path: Path
    experiments: tuple[str, ...]  # empty: any experiment whose dimensions it gives
    sources: tuple[str, ...]
    entries: tuple[Entry, ...]

    def where(self, line: int) -> str:
        return f"{self.path}, line {line}"

    def is_for(self, experiment: Experiment) -> bool:
        return not self.experiments or experiment.name in self.experiments

    def shapes(self, experiment: Experiment) -> list[SuiteShape]:
        """Every shape of the suite for `experiment`, in file order (each entry's dimensions expanded
        in the experiment's order, the first slowest), each checked by the experiment (Shape: too
        big, below 1 refused); a GpulabError naming the file and line for the first problem."""
        if not self.is_for(experiment):
            raise GpulabError(f"suite {self.name} ({self.path}) is for {', '.join(self.experiments)}, "
                              f"not {experiment.name}")
        out: list[SuiteShape] = []
        seen: dict[tuple[int, ...], int] = {}
        for entry in self.entries:
            unknown = [d for d in entry.dims if d not in experiment.dims]
            if unknown:
                raise GpulabError(f"{self.where(entry.key_lines.get(unknown[0], entry.line))}: {experiment.name} has "
                                  f"no dimension {unknown[0]} (its dimensions are {', '.join(experiment.dims)}); "
                                  "text values are columns, whole numbers dimensions")
            missing = [d for d in experiment.dims if d not in entry.dims]
            if written := [d for d in missing if d in entry.columns]:  # M = 1.5 or "a" was read as a column
                raise GpulabError(f"{self.where(entry.key_lines.get(written[0], entry.line))}: {written[0]}: "
                                  f"{entry.columns[written[0]]!r} is not a whole number; a dimension takes whole "
                                  "numbers (or a list of them)")
            if missing:
                raise GpulabError(f"{self.where(entry.line)}: this shape gives no {', '.join(missing)}; "
                                  f"{experiment.name} needs {', '.join(experiment.dims)} (here or in [defaults])")
            for d in experiment.dims:  # each value alone first: the error names its line
                for value in entry.dims[d]:
                    try:
                        experiment.validate_shape(Shape((d,), (value,)))
                    except GpulabError as exc:
                        raise GpulabError(f"{self.where(entry.key_lines.get(d, entry.line))}: {exc}") from None
            for values in itertools.product(*(entry.dims[d] for d in experiment.dims)):
                try:
                    shape = experiment.shape(*values)
                except GpulabError as exc:
                    raise GpulabError(f"{self.where(entry.line)}: {exc}") from None
                if values in seen:
                    raise GpulabError(f"{self.where(entry.line)}: shape {shape.label} is listed twice (first at line "
                                      f"{seen[values]}); name each shape once")
                seen[values] = entry.line
                out.append(SuiteShape(shape, {"suite": self.name, **entry.columns}))
        return out

    def points(self, experiment: Experiment) -> tuple[str, list[tuple[str, str, int]]]:
        """(the dimension the suite varies within an entry, [(the entry's group, shape label, that
        dimension's value)]) in the suite's order: what a picture of a suite draws, one line per
        group (a layer's name, from the entry's text columns) against that dimension (M)."""
        varied = next((d for d in experiment.dims for e in self.entries if len(e.dims.get(d, ())) > 1),
                      experiment.dims[0])
        out = []
        for i, entry in enumerate(self.entries):
            group = " ".join(str(v) for v in entry.columns.values()) or f"entry {i + 1}"
            for values in itertools.product(*(entry.dims[d] for d in experiment.dims)):
                shape = Shape(experiment.dims, tuple(values))
                out.append((group, shape.label, shape[varied]))
        return varied, out

    def csv_name(self, experiment_name: str) -> str:
        """The file its rows of one experiment go to in results/<gpu>/: '<experiment>-<suite>.csv'."""
        return csv_name(experiment_name, self.name)


def csv_name(experiment_name: str, suite_name: str) -> str:
    return f"{experiment_name}-{suite_name}.csv"


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob(f"*{SUFFIX}"))


def builtin_suites() -> list[Suite]:
    return [load(name) for name in builtin_names()]


def load(name_or_path: str | Path) -> Suite:
    """A built-in suite by name ('llm'), or a suite file by path ('mine.toml'), read and checked."""
    text = str(name_or_path)
    if isinstance(name_or_path, str) and NAME_RE.fullmatch(text) and not Path(text + SUFFIX).exists():
        path = BUILTIN_DIR / f"{text}{SUFFIX}"
        if not path.exists():
            raise GpulabError(f"no built-in suite {text!r}: the built-ins are {', '.join(builtin_names())}; "
                              "or give the path of your own suite file (mine.toml)")
    else:
        path = Path(name_or_path)
        if path.suffix != SUFFIX and not path.exists():
            path = path.with_name(path.name + SUFFIX)
    if path.is_dir():
        raise GpulabError(f"{path} is a folder; give a suite file in it (a .toml file) or a built-in's name "
                          f"({', '.join(builtin_names())})")
    if not path.is_file():
        raise GpulabError(f"suite file {path} not found; give a built-in's name ({', '.join(builtin_names())}) "
                          "or the path of a .toml file")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GpulabError(f"cannot read suite file {path}: {exc}") from None
    return parse(source, path)


def parse(source: str, path: Path) -> Suite:
    """The suite written in `source` (the text of `path`), checked on its own: syntax, keys, values.
    What depends on an experiment (its dimensions, its limits) is checked by Suite.shapes."""
    lines = _Lines(source)

    def fail(line: int, what: str):
        raise GpulabError(f"{path}, line {line}: {what}")

    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column (\d+)\)", message)
        text = re.sub(r"\s*\(at line \d+, column \d+\)", "", message) or "not valid TOML"
        fail(int(found.group(1)) if found else 1, f"not valid TOML: {text}"
             + (f" (column {found.group(2)})" if found else ""))
    for key in data:
        if key not in ("suite", "defaults", "shape"):
            fail(lines.header(key) or lines.key(0, key) or 1,
                 f"unknown table or key {key!r}; a suite has [suite], [defaults] and [[shape]] entries")
    head = data.get("suite", {})
    head_line = lines.header("suite") or 1
    if not isinstance(head, dict):
        fail(head_line, "suite must be a table: [suite]")
    for key, value in head.items():
        kind = SUITE_KEYS.get(key)
        at = lines.key(head_line, key) or head_line
        if kind is None:
            fail(at, f"unknown key {key!r} in [suite]; it takes {', '.join(SUITE_KEYS)}")
        if not isinstance(value, kind) or (kind is list and not all(isinstance(v, str) for v in value)):
            fail(at, f"[suite] {key} must be {'text' if kind is str else 'a list of text'}")
    known = {e.name for e in all_experiments()}
    if unknown := [e for e in head.get("experiments", ()) if e not in known]:
        fail(lines.key(head_line, "experiments") or head_line,
             f"no experiment {unknown[0]!r}; gpulab has {', '.join(sorted(known))} (gpulab list shows them)")
    name = head.get("name", path.stem)
    if not NAME_RE.fullmatch(name):
        fail(lines.key(head_line, "name") or head_line,
             f"suite name {name!r} must be lower-case letters, digits and _ (it names the results file)")
    defaults_line = lines.header("defaults") or 1
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        fail(defaults_line, "defaults must be a table: [defaults]")
    base = {k: _dimension(v, lambda what, k=k: fail(lines.key(defaults_line, k) or defaults_line, f"{k}: {what}"))
            for k, v in defaults.items()}
    raw = data.get("shape", [])
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        fail(lines.header("shape") or 1, "shape must be entries written [[shape]]")
    if not raw:
        fail(lines.header("suite") or 1, "the suite names no shapes: add at least one [[shape]] entry")
    starts = lines.headers("shape")
    entries = []
    for i, item in enumerate(raw):
        start = starts[i] if i < len(starts) else 1
        dims, columns, key_lines = dict(base), {}, {}
        for key, value in item.items():
            at = lines.key(start, key) or start
            key_lines[key] = at
            if isinstance(value, bool) or not isinstance(value, (int, list)):
                if not isinstance(value, (str, int, float, bool)):
                    fail(at, f"{key}: a column's value is text or a number, not {type(value).__name__}")
                if key.lower() in RESERVED_COLUMNS or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
                    fail(at, f"{key!r} cannot name a column (a row already has it, or it is not a plain name); "
                             "choose another name")
                columns[key] = value
            else:
                dims[key] = _dimension(value, lambda what, key=key, at=at: fail(at, f"{key}: {what}"))
        clash = [c for c in columns if c.lower() in {d.lower() for d in dims}]
        if clash:
            fail(key_lines[clash[0]], f"{clash[0]!r} is a dimension's name; a column needs another")
        entries.append(Entry(dims, columns, start, key_lines))
    return Suite(name, head.get("title", ""), path, tuple(head.get("experiments", ())),
                 tuple(head.get("sources", ())), tuple(entries))


def _dimension(value: Any, fail) -> tuple[int, ...]:
    """A dimension's values: a whole number, or a non-empty list of them, each at least 1."""
    values = value if isinstance(value, list) else [value]
    if not values:
        fail("an empty list: give at least one value")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            fail(f"{v!r} is not a whole number")
        if v < 1:
            fail(f"{v} must be at least 1")
    return tuple(values)


class _Lines:
    """Where tables and keys sit in the file's text (tomllib gives values, not lines): enough to
    name the line of a bad value in a hand-written suite."""

    HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\"'-]+?)\s*\]\]?\s*(#.*)?$")

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.found = []  # (line number, name, is an array entry)
        for n, line in enumerate(self.lines, 1):
            m = self.HEADER.match(line)
            if m:
                self.found.append((n, m.group(2).strip("\"'"), m.group(1) == "[["))

    def header(self, name: str) -> int | None:
        return next((n for n, found, _ in self.found if found == name), None)

    def headers(self, name: str) -> list[int]:
        return [n for n, found, array in self.found if found == name and array]

    def key(self, start: int, key: str) -> int | None:
        """The line of `key = ...` in the table that starts at line `start` (0: the file's top)."""
        pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
        headers = {n for n, _, _ in self.found}
        for n in range(start + 1, len(self.lines) + 1):
            if n in headers:  # the next table: the key is not in this one
                return None
            if pattern.match(self.lines[n - 1]):
                return n
        return None
