"""A variant that declares itself: a `/* gpulab variant ... */` block at the top of its `.cu` file.

It says, in the file, what a `Variant(...)` line in an experiment's `__init__.py` says, so one file
is a whole variant (`gpulab bench sgemm --kernel mine.cu`, or `variant_from_file` in a package):

    /* gpulab variant
    name:     tiled                                   optional; default: the file name without .cu
    summary:  32x32 shared tile, 8 rows of threads    one line for `gpulab list`
    param:    ROWS = 8 in 4, 8, 16 | thread rows      NAME = DEFAULT in EVERY, ACCEPTED, VALUE | help
    sweep:    ROWS = 4, 8                              optional: what bench runs with no --param
    grid:     ceil_div(N, 32), ceil_div(M, 32)         1 to 3 expressions (missing ones are 1)
    block:    32, ROWS
    smem:     0                                       optional: dynamic shared memory, bytes
    cluster:  2                                       optional: blocks per cluster, as the kernel's
                                                      __cluster_dims__(x) says (1 to 8; the grid's x
                                                      a multiple of it)
    min_sm:   80 | cp.async                           optional: oldest architecture, and why
                                                      (90a | wgmma: that arch-specific target alone)
    require:  32 % ROWS == 0 | ROWS must divide 32    optional, repeatable: else skipped with the text
    access:   access.py:tiled_access                  optional: the access model, FILE.py:FUNCTION
    */

`param`, `require` may repeat; every other key appears at most once; `grid` and `block` are
required. Expressions are integer arithmetic over the params and the experiment's dimensions (M, N,
K, ...): + - * / // % (division is C's integer division), parentheses, min() and max() of two or
more values, ceil_div(a, b), comparisons, `and`, `or`, `not`; at most 500 characters, nested at
most 32 deep. Nothing else is evaluated: no Python runs from a .cu file (the `access:` file is
Python the user wrote for the purpose, imported only when a prediction needs it). A `require` that
names a dimension is checked per shape; one over params alone rejects the config before anything
compiles. The launch must be one CUDA takes (launch_problem): a grid, block, smem or cluster that names
nothing is checked here, one that names a dimension at each shape, where a launch outside the
limits skips that config with the reason.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import operator
import re
import traceback
from pathlib import Path
from typing import Any, Callable

from gpulab.arith import cdiv
from gpulab.errors import GpulabError
from gpulab.experiments.base import Launch, Param, Params, Shape, Variant
from gpulab.quantities import NAME

BLOCK_START = re.compile(r"/\*\s*gpulab\s+variant\b")
KEYS = ("name", "summary", "experiment", "param", "sweep", "grid", "block", "smem", "cluster", "min_sm",
        "require", "access", "expected_wrong")
REPEATABLE = ("param", "sweep", "require")
EXAMPLE = """/* gpulab variant
summary: what this kernel does, in one line
param:   TILE = 32 in 8, 16, 32 | the tile side
grid:    ceil_div(N, TILE), ceil_div(M, TILE)
block:   TILE, TILE
*/"""


class DeclarationError(GpulabError):
    """A missing or malformed gpulab block: the message names the file and line and what to write."""


# -- the expression language --------------------------------------------------------------------
def _c_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def ceil_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("ceil_div by zero")
    return cdiv(a, b)


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: _c_div,
           ast.FloorDiv: _c_div, ast.Mod: operator.mod}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
FUNCTIONS: dict[str, Callable[..., int]] = {"min": min, "max": max, "ceil_div": ceil_div}
# How many values each function takes: (fewest, most, in words).
ARITY = {"min": (2, 64, "two or more values"), "max": (2, 64, "two or more values"), "ceil_div": (2, 2, "two values")}
MAX_EXPR_CHARS = 500
MAX_EXPR_DEPTH = 32


def _depth(tree: ast.AST) -> int:
    """How deeply the tree nests, counted without recursion."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        todo += [(child, depth + 1) for child in ast.iter_child_nodes(node)]
    return deepest


@dataclasses.dataclass(frozen=True)
class Expr:
    """One parsed expression: evaluated over a dict of names, never through Python's eval."""

    text: str
    tree: ast.expression

    @classmethod
    def parse(cls, text: str) -> "Expr":
        text = text.strip()
        # Python's parser and _eval recurse per level: a long or deep expression would end in a
        # RecursionError or MemoryError, so it is refused before either sees it.
        if len(text) > MAX_EXPR_CHARS:
            raise ValueError(f"'{text[:40]}...' is longer than {MAX_EXPR_CHARS} characters ({len(text):,}); "
                             "a launch expression is a line of arithmetic")
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            raise ValueError(f"'{text}' is not an expression") from None
        except (RecursionError, MemoryError):
            raise ValueError(f"'{text[:40]}...' is nested too deeply to read") from None
        if (depth := _depth(tree)) > MAX_EXPR_DEPTH:
            raise ValueError(f"'{text[:40]}...' is nested deeper than {MAX_EXPR_DEPTH} levels ({depth})")
        for node in ast.walk(tree):
            if not isinstance(node, _ALLOWED):
                raise ValueError(f"'{text.strip()}': {type(node).__name__.lower()} is not allowed "
                                 "(only integers, names, + - * / // %, comparisons, and/or/not, min, max, ceil_div)")
            if isinstance(node, ast.Call) and (not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS
                                               or node.keywords):
                raise ValueError(f"'{text.strip()}': only min(), max() and ceil_div() may be called")
            if isinstance(node, ast.Call) and not ARITY[node.func.id][0] <= len(node.args) <= ARITY[node.func.id][1]:
                raise ValueError(f"'{text.strip()}': {node.func.id}() takes {ARITY[node.func.id][2]}, "
                                 f"not {len(node.args)}")
            if isinstance(node, ast.Constant) and (type(node.value) is not int):
                raise ValueError(f"'{text.strip()}': {node.value!r} is not a whole number")
        return cls(text.strip(), tree)

    def names(self) -> set[str]:
        called = {n.func.id for n in ast.walk(self.tree) if isinstance(n, ast.Call)}
        return {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name)} - called

    def __call__(self, values: dict[str, int]) -> int:
        return _eval(self.tree.body, values)


_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call, ast.Name, ast.Load,
            ast.Constant, ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or, *_BINARY, *_COMPARE)


def _eval(node, values: dict[str, int]):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise NameError(node.id)
        return values[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_eval(node.left, values), _eval(node.right, values))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, values)
        return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}[type(node.op)](v)
    if isinstance(node, ast.BoolOp):
        results = (_eval(v, values) for v in node.values)
        return all(results) if isinstance(node.op, ast.And) else any(results)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, values)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, values)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Call):
        return FUNCTIONS[node.func.id](*(_eval(a, values) for a in node.args))
    raise ValueError(f"cannot evaluate {type(node).__name__}")  # unreachable: parse() refused it


# -- what CUDA launches --------------------------------------------------------------------------
# The CUDA C++ Programming Guide's limits for every architecture gpulab compiles for (sm_75 on):
# grid x up to 2^31 - 1 blocks and y, z up to 65535; a block up to 1024 threads (x, y up to 1024, z
# up to 64); dynamic shared memory up to 227 KiB a block (sm_90's, the largest).
GRID_MAX = (2**31 - 1, 65535, 65535)
BLOCK_MAX = (1024, 1024, 64)
THREADS_MAX = 1024
SMEM_MAX = 227 * 1024
CLUSTER_MAX = 8  # the portable cluster size: a larger one needs an opt-in gpulab's launch does not make


def launch_problem(grid: tuple[int, ...], block: tuple[int, ...], smem: int = 0,
                   cluster: int = 1) -> tuple[str, str, str] | None:
    """What CUDA would refuse in a launch: (the value, the rule it breaks, the key that sets it:
    'grid', 'block', 'smem' or 'cluster'); None for a launch it takes."""
    for key, dims, limits, unit in (("grid", grid, GRID_MAX, "blocks"), ("block", block, BLOCK_MAX, "threads")):
        for axis, value, most in zip("xyz", dims, limits):
            if not 1 <= value <= most:
                return f"{key} {axis} = {value}", f"a {key} has 1 to {most} {unit} in {axis}", key
    if (threads := block[0] * block[1] * block[2]) > THREADS_MAX:
        return f"a block of {threads} threads", f"a block has at most {THREADS_MAX}", "block"
    if not 0 <= smem <= SMEM_MAX:
        return f"smem = {smem}", f"dynamic shared memory is 0 to {SMEM_MAX} bytes a block", "smem"
    if not 1 <= cluster <= CLUSTER_MAX:
        return f"cluster = {cluster}", f"a cluster has 1 to {CLUSTER_MAX} blocks", "cluster"
    if grid[0] % cluster:
        return (f"grid x = {grid[0]}", f"a grid in clusters of {cluster} has a multiple of {cluster} blocks in x",
                "cluster")
    return None


# -- the block ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Requirement:
    expr: Expr
    reason: str


@dataclasses.dataclass(frozen=True)
class Declaration:
    """What a gpulab block declares, parsed; `launch` and `constraints` evaluate it."""

    path: Path
    name: str
    summary: str
    experiment: str
    params: tuple[Param, ...]
    sweep: dict[str, tuple[int, ...]]
    grid: tuple[Expr, ...]
    block: tuple[Expr, ...]
    smem: Expr | None
    cluster: Expr | None
    min_sm: int
    min_sm_for: str
    arch_specific: bool
    requires: tuple[Requirement, ...]
    access: str
    expected_wrong: bool
    lines: dict[str, int] = dataclasses.field(default_factory=dict)  # the line of each key's first entry

    def _values(self, params: Params, shape: Shape | None) -> dict[str, int]:
        return {**(dict(zip(shape.names, shape.values)) if shape is not None else {}), **params}

    def _evaluate(self, expr: Expr, params: Params, shape: Shape | None, what: str) -> int:
        try:
            value = expr(self._values(params, shape))
        except NameError as exc:
            raise GpulabError(f"{self.path}: {what} '{expr.text}' names {exc}, which is neither a param nor a "
                              "dimension") from None
        except ZeroDivisionError:
            raise GpulabError(f"{self.path}: {what} '{expr.text}' divides by zero at "
                              f"{' '.join(f'{k}={v}' for k, v in self._values(params, shape).items())}") from None
        return int(value)

    def _launch(self, params: Params, shape: Shape) -> tuple[Launch, tuple[str, str, str] | None]:
        """The launch, and what CUDA would refuse in it (launch_problem)."""
        def three(exprs, what):
            dims = [self._evaluate(e, params, shape, what) for e in exprs]
            return tuple(dims + [1] * (3 - len(dims)))

        smem = self._evaluate(self.smem, params, shape, "smem") if self.smem else 0
        cluster = self._evaluate(self.cluster, params, shape, "cluster") if self.cluster else 1
        launch = Launch(grid=three(self.grid, "grid"), block=three(self.block, "block"), smem_dynamic_bytes=smem,
                        cluster=cluster)
        return launch, launch_problem(launch.grid, launch.block, smem, cluster)

    def launch(self, params: Params, shape: Shape) -> Launch:
        launch, problem = self._launch(params, shape)
        if problem:
            what, rule, key = problem
            raise GpulabError(f"{self.path}:{self.lines.get(key, 1)}: {what} at {self._at(params, shape)}: {rule}")
        return launch

    def _at(self, params: Params, shape: Shape | None) -> str:
        return " ".join(f"{k}={v}" for k, v in self._values(params, shape).items())

    def constraints(self, params: Params, shape: Shape | None) -> str | None:
        values = self._values(params, shape)
        for req in self.requires:
            if not req.expr.names() <= set(values):
                continue  # names a dimension: checked once a shape is known
            if not self._evaluate(req.expr, params, shape, "require"):
                return req.reason
        if shape is not None:  # a launch CUDA would refuse at this shape: skipped, saying why
            _, problem = self._launch(params, shape)
            if problem:
                return f"{problem[0]} at {self._at(params, shape)}: {problem[1]}"
        return None

    def variant(self, access: Callable | None = None) -> Variant:
        # The file by its absolute path: the compile joins it to the experiment's own folder, where a
        # relative path (`--kernel mine.cu`, the README's form) would name a file that is not there.
        return Variant(name=self.name, file=str(self.path.resolve()), summary=self.summary, launch=self.launch,
                       params=self.params, constraints=self.constraints, expected_wrong=self.expected_wrong,
                       access=access or (_lazy_access(self.path, self.access) if self.access else None),
                       sweep=self.sweep, min_sm=self.min_sm, min_sm_for=self.min_sm_for,
                       arch_specific=self.arch_specific)


def read_block(path: Path) -> list[tuple[int, str, str]]:
    """The block's (line number, key, value) entries; a DeclarationError saying what to add if
    there is none."""
    text = _read(path)
    match = BLOCK_START.search(text)
    if match is None:
        raise DeclarationError(
            f"{path}:1: no gpulab block; put one at the top of the file saying what the variant needs, e.g. "
            + " / ".join(EXAMPLE.splitlines()) + " (docs/contract.md lists every key)")
    first_line = text.count("\n", 0, match.start()) + 1
    end = text.find("*/", match.end())
    if end < 0:
        raise DeclarationError(f"{path}:{first_line}: the gpulab block is not closed: end it with */ on its own line")
    entries = []
    for offset, line in enumerate(text[match.end():end].splitlines()):
        stripped = line.strip().lstrip("*").strip()
        if not stripped:
            continue
        number = first_line + offset
        key, sep, value = stripped.partition(":")
        key = key.strip().lower()
        if not sep or key not in KEYS:
            raise DeclarationError(f"{path}:{number}: '{stripped}' is not KEY: VALUE with KEY one of "
                                   + ", ".join(KEYS))
        entries.append((number, key, value.strip()))
    return entries


def parse_declaration(path: Path, dims: tuple[str, ...] | None = None) -> Declaration:
    """Parse and check the block of `path`. With `dims` (the experiment's dimension names), every
    name an expression uses must be a param or a dimension."""
    path = Path(path)
    entries = read_block(path)
    seen: dict[str, int] = {}
    for number, key, _ in entries:
        if key in seen and key not in REPEATABLE:
            raise DeclarationError(f"{path}:{number}: '{key}' is given twice (first on line {seen[key]}); keep one")
        seen.setdefault(key, number)
    for key in ("grid", "block"):
        if key not in seen:
            example = {"grid": "grid: ceil_div(N, 256)", "block": "block: 256"}[key]
            raise DeclarationError(f"{path}:{_first_line(path)}: the gpulab block has no '{key}:' line; add one, "
                                   f"e.g. '{example}' (expressions of the params and {', '.join(dims or ('the dimensions',))})")

    def one(key, default=""):
        return next((v for _, k, v in entries if k == key), default)

    def line_of(key):
        return seen.get(key, _first_line(path))

    params, sweep, requires = [], {}, []
    for number, key, value in entries:
        try:
            if key == "param":
                params.append(_parse_param(value))
            elif key == "sweep":
                name, values = _parse_values(value, "sweep: NAME = V1, V2, ...")
                sweep[name] = values
            elif key == "require":
                text, _, reason = value.partition("|")
                expr = Expr.parse(text)
                requires.append(Requirement(expr, reason.strip() or f"needs {expr.text}"))
        except ValueError as exc:
            raise DeclarationError(f"{path}:{number}: {exc}") from None
    names = {p.name for p in params}
    if len(names) != len(params):
        raise DeclarationError(f"{path}:{line_of('param')}: a param is declared twice; keep one line per param")
    for number, key, value in entries:
        if key == "sweep":
            name, values = _parse_values(value, "")
            if name not in names:
                raise DeclarationError(f"{path}:{number}: sweep names {name}, which no 'param:' line declares")
            bad = [v for v in values if v not in next(p for p in params if p.name == name).choices]
            if bad:
                raise DeclarationError(f"{path}:{number}: sweep {name}={bad[0]} is not among the param's values")

    def exprs(key, count):
        try:
            out = tuple(Expr.parse(t) for t in _split_top(one(key)))
        except ValueError as exc:
            raise DeclarationError(f"{path}:{line_of(key)}: {key}: {exc}") from None
        if not 1 <= len(out) <= count:
            raise DeclarationError(f"{path}:{line_of(key)}: {key} takes 1 to {count} comma-separated expressions")
        return out

    grid, block = exprs("grid", 3), exprs("block", 3)
    smem = exprs("smem", 1)[0] if "smem" in seen else None
    cluster = exprs("cluster", 1)[0] if "cluster" in seen else None
    _check_constants(path, grid, block, smem, cluster, line_of)
    min_sm, min_sm_for, arch_specific = 0, "", False
    if "min_sm" in seen:
        number_text, _, min_sm_for = one("min_sm").partition("|")
        if not re.fullmatch(r"\d+a?", number_text.strip()):
            raise DeclarationError(f"{path}:{line_of('min_sm')}: min_sm is a number and a reason, e.g. 'min_sm: 80 | cp.async' "
                                   "(or 'min_sm: 90a | wgmma' for an arch-specific target)")
        arch_specific = number_text.strip().endswith("a")
        min_sm, min_sm_for = int(number_text.strip().rstrip("a")), min_sm_for.strip() or "declared"
    access = one("access")
    if access and not re.fullmatch(r"[^:]+\.py:[A-Za-z_]\w*", access):
        raise DeclarationError(f"{path}:{line_of('access')}: access is FILE.py:FUNCTION (the file beside the .cu), "
                               "e.g. 'access: access.py:tiled_access'")
    wrong = one("expected_wrong", "no").lower()
    if wrong not in ("yes", "no", "true", "false"):
        raise DeclarationError(f"{path}:{line_of('expected_wrong')}: expected_wrong is yes or no")
    name = one("name") or path.stem
    if not NAME.fullmatch(name):
        raise DeclarationError(f"{path}:{line_of('name')}: name '{name[:40]}' must be letters, digits, _ . -, "
                               "at most 64 characters")
    if dims is not None:
        known = names | set(dims)
        for number, key, value in entries:
            if key not in ("grid", "block", "smem", "cluster", "require"):
                continue
            text = value.partition("|")[0] if key == "require" else value
            for e in _split_top(text):
                unknown = Expr.parse(e).names() - known
                if unknown:
                    raise DeclarationError(
                        f"{path}:{number}: {key} uses {', '.join(sorted(unknown))}, which is neither a param "
                        f"(declared: {', '.join(sorted(names)) or 'none'}) nor a dimension ({', '.join(dims)})")
    return Declaration(path=path, name=name, summary=one("summary") or f"{name} ({path.name})",
                       experiment=one("experiment"), params=tuple(params), sweep=sweep, grid=grid, block=block,
                       smem=smem, cluster=cluster, min_sm=min_sm, min_sm_for=min_sm_for, arch_specific=arch_specific,
                       requires=tuple(requires), access=access,
                       expected_wrong=wrong in ("yes", "true"), lines=dict(seen))


def variant_from_file(path: Path, experiment=None, access: Callable | None = None) -> Variant:
    """The Variant a .cu file declares. With `experiment`, its names are checked against the
    experiment's dimensions (and its `experiment:` line, if any, against the experiment's name).
    A relative path is taken from the working directory (the variant keeps it absolute: its
    experiment finds the source at directory / file, which an absolute file overrides)."""
    path = Path(path).absolute()
    if path.suffix != ".cu":
        raise GpulabError(f"{path}: a kernel file is CUDA C++ source ending in .cu")
    if not path.is_file():
        raise GpulabError(f"{path}: no such file")
    decl = parse_declaration(path, experiment.dims if experiment is not None else None)
    if experiment is not None and decl.experiment and decl.experiment != experiment.name:
        raise GpulabError(f"{path}: its gpulab block says 'experiment: {decl.experiment}', not {experiment.name}")
    return decl.variant(access)


def _check_constants(path: Path, grid, block, smem, cluster, line_of) -> None:
    """A grid, block, smem or cluster that names nothing is the same at every shape: one CUDA would
    refuse is refused here, at its line, before anything compiles (a grid that names a dimension is
    taken as a multiple of a constant cluster: each shape's launch checks it)."""
    def value(e):
        return e({}) if not e.names() else 1

    try:
        dims = {"grid": [value(e) for e in grid], "block": [value(e) for e in block]}
        bytes_ = value(smem) if smem is not None and not smem.names() else 0
        blocks = value(cluster) if cluster is not None and not cluster.names() else 1
    except ZeroDivisionError:
        raise DeclarationError(f"{path}:{line_of('grid')}: a launch expression divides by zero") from None
    # A grid x that names a dimension is checked against the cluster at each shape: here one cluster
    # stands in for it (where the cluster itself is out of range, launch_problem says so first).
    grid_x = blocks if grid[0].names() and 1 <= blocks <= CLUSTER_MAX else dims["grid"][0]
    problem = launch_problem(tuple([grid_x] + dims["grid"][1:] + [1] * 3)[:3], tuple(dims["block"] + [1] * 3)[:3],
                             bytes_, blocks)
    if problem:
        raise DeclarationError(f"{path}:{line_of(problem[2])}: {problem[0]}: {problem[1]}")


def _read(path: Path) -> str:
    """The file's text; one line saying where it is not UTF-8 (NVRTC and gpulab read it as such)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise GpulabError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DeclarationError(f"{path}:{line}: byte 0x{data[exc.start]:02x} is not UTF-8 text; save the file as "
                               "UTF-8") from None


def _first_line(path: Path) -> int:
    text = _read(path)
    match = BLOCK_START.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _split_top(text: str) -> list[str]:
    """Split on the commas outside parentheses: 'ceil_div(N, 32), M' -> ['ceil_div(N, 32)', 'M']."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _parse_values(text: str, form: str) -> tuple[str, tuple[int, ...]]:
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ValueError(f"'{text}' must look like {form}")
    try:
        numbers = tuple(int(v) for v in values.split(","))
    except ValueError:
        raise ValueError(f"'{text}': the values must be whole numbers, as in {form}") from None
    return name, numbers


def _parse_param(text: str) -> Param:
    form = "param: NAME = DEFAULT in V1, V2, ... | help (e.g. 'param: TILE = 32 in 8, 16, 32 | the tile side')"
    body, _, help_text = text.partition("|")
    head, _, choices = body.partition(" in ")
    name, default = _parse_values(head, form)
    if len(default) != 1:
        raise ValueError(f"'{text}': one default value, then 'in' and the accepted values: {form}")
    accepted = tuple(int(v) for v in choices.split(",")) if choices.strip() else default
    if default[0] not in accepted:
        raise ValueError(f"'{text}': the default {default[0]} is not among the accepted values {', '.join(map(str, accepted))}")
    return Param(name, accepted, default[0], help_text.strip())


def _lazy_access(cu_path: Path, spec: str) -> Callable[..., Any]:
    """The access model named `FILE.py:FUNCTION`, imported from beside the .cu on first use."""
    file_name, _, function = spec.partition(":")
    source = (cu_path.parent / file_name).resolve()

    def access(params, shape):
        if not source.is_file():
            raise GpulabError(f"{cu_path}: 'access: {spec}' names {source}, which does not exist")
        module_name = f"gpulab_access_{abs(hash(str(source)))}"
        loaded = importlib.util.spec_from_file_location(module_name, source)
        module = importlib.util.module_from_spec(loaded)
        try:
            loaded.loader.exec_module(module)
        except Exception as exc:
            raise GpulabError(f"{source}: importing the access model failed: {type(exc).__name__}: {exc}") from None
        if not callable(getattr(module, function, None)):
            raise GpulabError(f"{source} defines no function {function} (named by {cu_path}'s 'access:' line)")
        try:
            return getattr(module, function)(params, shape)
        except GpulabError:
            raise
        except Exception as exc:  # a bug in the user's model: where it raised, in one line
            raise GpulabError(f"{where_raised(exc, source)}: {cu_path.name}: the access model {function}() raised "
                              f"{type(exc).__name__}: {exc}") from None

    return access


def where_raised(exc: BaseException, prefer: Path | None = None) -> str:
    """'file:line' where `exc` was raised: the deepest frame in `prefer` (a model's own file) if
    any is, else the deepest frame of all."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if prefer is not None and Path(f.filename).resolve() == Path(prefer).resolve()]
    frame = (mine or frames or [None])[-1]
    return f"{frame.filename}:{frame.lineno}" if frame else str(prefer or "?")
