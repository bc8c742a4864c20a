"""CPU probe: every class of bad input of issue 42 sections 3 (input) run against the gpulab on PATH's
interpreter, each in a fresh copy of the committed results, README and pages, and sorted into ok /
traceback / silent-loss / wrong-exit.

    python notebook/probes/probe_bad_input.py [--python .venv/bin/python] [NAME ...]

ok: the exit code the class should give (2 for bad input, 0 where the input is fine), no traceback,
a refusal in one line on stderr, and no file changed where nothing may change. traceback: a Python
traceback anywhere in the output. silent-loss: exit 0 where the input should have been refused, with
files changed, or files changed by a command that refused. wrong-exit: any other exit code than the
expected one, a refusal of more than one line, or a class-specific check that failed (named).
No GPU is needed (GPULAB_NO_GPU=1 is set for every command).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "GPULAB_NO_GPU": "1"}
GOOD = """/* gpulab variant
name:    good
summary: a copy of v1
param:   TILE = 16 in 8, 16, 32 | tile side
grid:    ceil_div(N, TILE), ceil_div(M, TILE)
block:   TILE, TILE
*/
""" + (REPO / "src/gpulab/experiments/sgemm/v1_smem_tiling.cu").read_text()


def declared(**lines) -> str:
    """GOOD with the given keys' lines replaced (or added before grid:)."""
    text = GOOD
    for key, value in lines.items():
        line = f"{key}: {value}"
        if re.search(rf"^{key}:.*$", text, flags=re.M):
            text = re.sub(rf"^{key}:.*$", lambda m: line, text, count=1, flags=re.M)
        else:
            text = text.replace("grid:", line + "\ngrid:", 1)
    return text


def rewrite_csv(path: Path, change) -> None:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    change(rows)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    path.write_text(buf.getvalue())


def set_cell(path: Path, line: int, column: str, value: str) -> None:
    def change(rows):
        rows[line - 1][rows[0].index(column)] = value
    rewrite_csv(path, change)


def rename_column(path: Path, old: str, new: str) -> None:
    def change(rows):
        rows[0][rows[0].index(old)] = new
    rewrite_csv(path, change)


class Case:
    def __init__(self, name, args=None, *, setup=None, expect=2, unchanged=True, python=None, check=None,
                 env=None, seconds=None, stdout_closed=False, shell=None, quiet=False):
        self.name, self.args, self.setup, self.expect, self.unchanged = name, args, setup, expect, unchanged
        self.python, self.check, self.env, self.seconds = python, check, env or {}, seconds
        self.stdout_closed, self.shell, self.quiet = stdout_closed, shell, quiet


def api(code: str) -> str:
    """A Python snippet: a GpulabError is one line and exit 2, as the command line does."""
    return ("import sys, gpulab\nfrom gpulab.errors import GpulabError\ntry:\n"
            + "".join(f"    {line}\n" for line in code.splitlines())
            + "except GpulabError as exc:\n    print(f'error: {exc}', file=sys.stderr); sys.exit(2)\n")


def write(name: str, text) -> Callable:
    def setup(w: Path):
        (w / name).parent.mkdir(parents=True, exist_ok=True)
        (w / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return setup


def kernel(**lines):
    return write("e.cu", declared(**lines))


def package(name: str, body: str):
    return write(f"pkgs/{name}/__init__.py", body)


def readme_marker(change):
    def setup(w: Path):
        path = w / "docs/results/sgemm.md"
        path.write_text(change(path.read_text()))
    return setup


def nested(text: str) -> str:  # the ladder block moved inside the pivot block
    ladder = re.search(r"<!-- gpulab:h200-sgemm-ladder -->\n.*?<!-- /gpulab:h200-sgemm-ladder -->\n", text, re.S).group(0)
    text = text.replace(ladder, "")
    return text.replace("<!-- gpulab:h200-sgemm -->\n", "<!-- gpulab:h200-sgemm -->\n" + ladder, 1)


def unterminated(text: str) -> str:
    return text.replace("<!-- /gpulab:h200-sgemm -->", "", 1)


def in_results(name: str, how):
    def setup(w: Path):
        how(w / "results" / "h200" / name)
    return setup


def rejudge_check(w: Path, r) -> str:
    return ""


def kept_other_experiments(w: Path, r) -> str:
    """fidelity sgemm --rejudge: the coalesce row whose prediction was damaged stays as it was."""
    rows = list(csv.DictReader(open(w / "results/h200/fidelity.csv")))
    mine = [x for x in rows if x["experiment"] == "coalesce" and x["predicted"] == "12345"]
    return "" if mine else "the coalesce row (not named) was rejudged"


def damage_coalesce_prediction(w: Path):
    path = w / "results/h200/fidelity.csv"
    rows = list(csv.reader(io.StringIO(path.read_text())))
    line = next(i for i, r in enumerate(rows) if r[0] == "coalesce" and r[rows[0].index("quantity")] == "gmem_load_requests")
    set_cell(path, line + 1, "predicted", "12345")


def worker_once(w: Path, r) -> str:
    count = (w / "count.txt").read_text().count("x") if (w / "count.txt").exists() else 0
    return "" if count == 1 else f"the script's top level ran {count} times"


WORKER_SCRIPT = '''
import sys
open("count.txt", "a").write("x")
sys.path.insert(0, ".")
from standin import StandIn
from gpulab.run.worker import LabWorker
with LabWorker(None, StandIn) as w:
    print(w.call("hello"))
'''
STANDIN = '''
class StandIn:
    def __init__(self, options):
        self.device, self.arch, self.env = "none", "sm_00", {}
    def hello(self):
        return "hello"
'''


def worker_setup(w: Path):
    (w / "script.py").write_text(WORKER_SCRIPT)
    (w / "standin.py").write_text(STANDIN)


def no_gpu_hint(w: Path, r) -> str:
    return "tells the user to pip install gpulab[gpu] again" if "gpulab[gpu]" in r.stdout + r.stderr else ""


def plain_help(w: Path, r) -> str:
    found = re.findall(r"<(?:bool|str|int|list\[\w+\]|path|Path)>", r.stdout)
    return f"help shows {', '.join(sorted(set(found)))}" if found else ""


def pngs_unchanged(w: Path, r) -> str:
    stale = [p.name for p in sorted((w / "results/h200").glob("*.png"))
             if (REPO / "results/h200" / p.name).exists() and p.read_bytes() != (REPO / "results/h200" / p.name).read_bytes()]
    return f"report rewrote {', '.join(stale)}" if stale else ""


def negative(path: Path):
    set_cell(path, 2, "gflops", "-5000.0")


def duplicate_header(path: Path):  # a second `variant` column (picked's cells, mostly empty)
    rename_column(path, "picked", "variant")


def duplicate_fidelity_header(path: Path):  # a second `variant` column (note's cells)
    rename_column(path, "note", "variant")


def unknown_quantity(path: Path):
    set_cell(path, 2, "quantity", "no_such_quantity")


def long_variant(path: Path):
    set_cell(path, 2, "variant", "v" * 100_000)


def nul_header(path: Path):
    text = path.read_text()
    path.write_text(text.replace("gflops", "gfl\x00ops", 1))


REJUDGE = ["fidelity", "--rejudge", "--out", "results/h200/fidelity.csv"]
CASES = [
    # -- relative --kernel paths
    Case("relative --kernel (run)", ["run", "sgemm", "--kernel", "e.cu"], setup=kernel(), expect=0, unchanged=False,
         check=lambda w, r: "" if "sgemm good" in r.stdout else "good was not compiled"),
    # -- silent loss
    Case("duplicated header column, readme", ["readme"], setup=in_results("sgemm.csv", duplicate_header)),
    Case("duplicated header column, rejudge", REJUDGE, setup=in_results("fidelity.csv", duplicate_fidelity_header)),
    Case("unknown quantity, rejudge", REJUDGE, setup=in_results("fidelity.csv", unknown_quantity)),
    Case("100k-character variant cell, readme", ["readme"], setup=in_results("sgemm.csv", long_variant)),
    Case("NUL in a header, readme", ["readme"], setup=in_results("sgemm.csv", nul_header)),
    Case("nested README blocks", ["readme"], setup=readme_marker(nested)),
    Case("unterminated README block", ["readme"], setup=readme_marker(unterminated)),
    # -- tracebacks
    Case("min()", ["list", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(grid="min()")),
    Case("max(N)", ["list", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(grid="max(N)")),
    Case("ceil_div(a,b,c)", ["list", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(grid="ceil_div(M, 16, 2)")),
    Case("block: 0", ["run", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(block="0")),
    Case("1,200-term expression", ["list", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(grid="+".join(["M"] * 1200))),
    Case("50,000 unary minus", ["list", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(grid="-" * 50_000 + "M")),
    Case("non-UTF-8 .cu", ["list", "sgemm", "--kernel", "@W@/e.cu"], setup=write("e.cu", GOOD.encode() + b"// \xe9t\xe9\n")),
    Case("access model that raises", ["predict", "sgemm", "good", "--kernel", "@W@/e.cu"],
         setup=lambda w: (kernel(access="acc.py:boom")(w), write("acc.py", "def boom(p, s):\n    raise RuntimeError('x')\n")(w))),
    Case("GPULAB_PATH package raising BaseException", ["list"], setup=package("boom", "raise BaseException('no')\n"),
         env={"GPULAB_PATH": "pkgs"}),
    Case("--scheduler 'not a url'", ["bench", "sgemm", "--scheduler", "not a url"]),
    Case("closed stdout", ["list"], stdout_closed=True),
    Case("stdout closed by its reader", shell="set -o pipefail; {gpulab} list | head -c 1 >/dev/null", expect=1,
         quiet=True),
    Case("new on a full disk", shell="ulimit -f 1; {gpulab} new mine --dir d",
         check=lambda w, r: "d/mine was left behind" if (w / "d" / "mine").exists() else ""),
    Case("predict('sgemm', None)", python=api("gpulab.predict('sgemm', None)")),
    Case("predict shape=(512, 512)", python=api("gpulab.predict('sgemm', 'v1', shape=(512, 512))")),
    Case("predict shape=('a','b','c')", python=api("gpulab.predict('sgemm', 'v1', shape=('a', 'b', 'c'))")),
    Case("predict params=16", python=api("gpulab.predict('sgemm', 'v1', params=16)")),
    Case("predict kernels=[None]", python=api("gpulab.predict('sgemm', 'v1', kernels=[None])")),
    Case("bench shapes=512 (no GPU)", python=api("gpulab.bench('sgemm', shapes=512)")),
    Case("new(None)", python=api("gpulab.new(None)")),
    Case("bench shapes=512.5", python=api("gpulab.bench('sgemm', shapes=512.5)")),
    Case("gpulab.run() after another call", python=api("gpulab.predict('sgemm', 'v1')\ngpulab.run(['stencil', 'stencil'])")),
    # -- gpulab.best() twice
    Case("gpulab.best() twice", python=api("gpulab.best('sgemm', gpu='h200')\ngpulab.best('sgemm', gpu='h200')"),
         expect=0),
    # -- wrong exits
    *[Case(f"new {name}", ["new", name, "--dir", "d"], check=lambda w, r: "" if not (w / "d").exists() else "wrote d/")
      for name in ("json", "numpy", "gpulab", "float")],
    Case("grid: -1", ["run", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(grid="-1")),
    Case("smem: -1", ["run", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(smem="-1")),
    Case("grid: 1e32", ["run", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(grid="100000000000000000000000000000000")),
    Case("variant named cublas", ["list", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(name="cublas")),
    Case("variant named best", ["list", "sgemm", "--kernel", "@W@/e.cu"], setup=kernel(name="best")),
    Case("run coalesce coalesce", ["run", "coalesce", "coalesce"]),
    Case("fidelity sgemm --rejudge", ["fidelity", "sgemm", *REJUDGE[1:]], setup=damage_coalesce_prediction, expect=0,
         unchanged=False, check=kept_other_experiments),
    Case("list ''", ["list", ""]),
    Case("--variant ' , ,'", ["bench", "sgemm", "--variant", " , ,"],
         check=lambda w, r: "" if "--variant" in r.stderr else "the refusal does not name --variant"),
    Case("run --arch ''", ["run", "--arch", ""]),
    Case("GPULAB_PATH package calling sys.exit", ["list"], setup=package("quits", "import sys\nsys.exit(0)\n"),
         env={"GPULAB_PATH": "pkgs"}),
    Case("negative rate in a CSV, readme", ["readme"], setup=in_results("sgemm.csv", negative)),
    Case("--scheduler at a closed port", ["bench", "sgemm", "--scheduler", "tcp://127.0.0.1:9"], seconds=10),
    # -- the README's API example: the worker does not run the caller's script again
    Case("bench's worker and a script without a __main__ guard", shell="{python} script.py", setup=worker_setup,
         expect=0, unchanged=False, check=worker_once),
    # -- first contact
    Case("no-GPU hint", ["bench", "sgemm"], check=no_gpu_hint),
    Case("help shows type names", ["bench", "--help"], expect=0, check=plain_help),
    Case("report rewrites committed PNGs", ["report"], expect=0, unchanged=False, check=pngs_unchanged),
]


def workdir() -> Path:
    w = Path(tempfile.mkdtemp(prefix="gpulab-probe-"))
    shutil.copytree(REPO / "results", w / "results", ignore=shutil.ignore_patterns("*.html"))
    shutil.copy(REPO / "README.md", w / "README.md")
    shutil.copytree(REPO / "docs", w / "docs")
    return w


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith((".lock", ".pyc")) and "__pycache__" not in p.parts}


def run_case(case: Case, python: str) -> tuple[str, str, float]:
    w = workdir()
    try:
        if case.setup:
            case.setup(w)
        before = snapshot(w)
        env = {**ENV, **case.env}
        if "GPULAB_PATH" in case.env:
            env["GPULAB_PATH"] = str(w / case.env["GPULAB_PATH"])
        gpulab = f"{python} -m gpulab.cli"
        start = time.monotonic()
        if case.python is not None:
            argv = [python, "-c", case.python]
        elif case.shell is not None:
            argv = ["bash", "-c", case.shell.format(gpulab=gpulab, python=python)]
        else:
            argv = [python, "-m", "gpulab.cli", *(a.replace("@W@", str(w)) for a in case.args)]  # @W@: the copy's path
        r = subprocess.run(argv, cwd=w, env=env, capture_output=True, text=True, timeout=300,
                           **({"preexec_fn": lambda: os.close(1)} if case.stdout_closed else {}))
        seconds = time.monotonic() - start
        after = snapshot(w)
        changed = sorted(str(k) for k in set(before) | set(after) if before.get(k) != after.get(k)
                         and not str(k).startswith(("count.txt", "d/")))
        out = r.stdout + r.stderr
        if "Traceback" in out:
            return "traceback", out.strip().splitlines()[-1][:160], seconds
        if case.expect != 0 and r.returncode == 0:
            return ("silent-loss" if changed else "wrong-exit"), f"exit 0; changed {changed[:3]}", seconds
        if r.returncode != case.expect:
            return "wrong-exit", f"exit {r.returncode} (expected {case.expect}): {r.stderr.strip()[-160:]}", seconds
        if case.unchanged and changed:
            return "silent-loss", f"changed {changed[:3]}", seconds
        if case.quiet and r.stderr.strip():
            return "wrong-exit", f"said {r.stderr.strip()[-160:]}", seconds
        if case.expect != 0 and not case.quiet and len(r.stderr.strip().splitlines()) != 1:
            return "wrong-exit", f"the refusal is {len(r.stderr.strip().splitlines())} lines", seconds
        if case.seconds is not None and seconds > case.seconds:
            return "wrong-exit", f"took {seconds:.0f} s", seconds
        if case.check and (why := case.check(w, r)):
            return "wrong-exit", why, seconds
        return "ok", (r.stderr.strip() or r.stdout.strip()[-100:]).splitlines()[-1][:160] if (r.stderr.strip() or r.stdout.strip()) else "", seconds
    finally:
        shutil.rmtree(w, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only the classes whose name contains one of these")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    counts: dict[str, int] = {}
    for case in CASES:
        if args.names and not any(n in case.name for n in args.names):
            continue
        verdict, detail, seconds = run_case(case, args.python)
        counts[verdict] = counts.get(verdict, 0) + 1
        print(f"{verdict:12} {case.name:52} {seconds:5.1f}s  {detail}", flush=True)
    print(" / ".join(f"{k} {counts.get(k, 0)}" for k in ("ok", "traceback", "silent-loss", "wrong-exit")))


if __name__ == "__main__":
    main()
