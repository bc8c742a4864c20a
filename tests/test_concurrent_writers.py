"""Two writers of one file at once, as real processes: each read-modify-write holds the file's lock,
so no update is lost, and every writer has its own temporary name, so none trips over another's.

Each writer waits at a barrier (both start their update together) and is slowed between writing
its temporary file and renaming it, which makes a lost update certain wherever the lock is missing."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PRELUDE = """
import os, sys, time
from pathlib import Path

barrier, me = Path(sys.argv[1]), sys.argv[2]
(barrier / me).touch()
deadline = time.monotonic() + 60
while len(list(barrier.iterdir())) < 2 and time.monotonic() < deadline:
    time.sleep(0.01)

_replace = os.replace
def slow_replace(src, dst):
    time.sleep(0.4)
    return _replace(src, dst)
os.replace = slow_replace
"""


def together(tmp_path, body: str, args: list[list[str]], cwd=None) -> list[subprocess.CompletedProcess]:
    """Run `body` (after PRELUDE) in two processes that start their update at the same moment."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    script = PRELUDE + textwrap.dedent(body)
    env = {**os.environ, "GPULAB_NO_GPU": "1"}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(barrier), str(i), *a], cwd=cwd or tmp_path,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, a in enumerate(args)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def no_temporary_files(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.name.endswith(".tmp") or ".tmp." in p.name]


def test_two_readme_updates_of_different_blocks_both_land(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# x\n<!-- gpulab:a -->\nold a\n<!-- /gpulab:a -->\n\n<!-- gpulab:b -->\nold b\n<!-- /gpulab:b -->\n")
    body = """
        from gpulab.report.markdown import update_readme
        name = sys.argv[3]
        update_readme(Path("README.md"), {name: f"new {name}\\n"})
    """
    for r in together(tmp_path, body, [["a"], ["b"]]):
        assert r.returncode == 0, r.stderr
    text = readme.read_text()
    assert "new a" in text and "new b" in text, text
    assert no_temporary_files(tmp_path)


def test_two_fidelity_savers_lose_no_rows(tmp_path):
    body = """
        from gpulab.jobs import fidelity
        from gpulab.experiments import get_experiment
        from gpulab.run.lab import RunSpec
        from types import SimpleNamespace

        exp = get_experiment("stencil")
        v = exp.variant(sys.argv[3])
        s = RunSpec(exp, v, v.default_params(), exp.shape(100_003))
        rows = [dict(s.base_record(), quantity=q, predicted=1, measured=1, exact=True, verdict="exact")
                for q in fidelity.COUNTED]
        fidelity.save(Path("fidelity.csv"), [fidelity.RunResult(s, rows, 0.0)])
    """
    from gpulab.experiments import get_experiment

    names = [v.name for v in get_experiment("stencil").variants][:2]
    for r in together(tmp_path, body, [[names[0]], [names[1]]]):
        assert r.returncode == 0, r.stderr
    from gpulab.records import read_csv

    rows = read_csv(tmp_path / "fidelity.csv")
    assert sorted({r["variant"] for r in rows}) == sorted(names)
    assert no_temporary_files(tmp_path)


def test_two_report_runs_at_once_both_finish(tmp_path):
    shutil.copytree(REPO / "results" / "h200", tmp_path / "results" / "h200",
                    ignore=shutil.ignore_patterns("*.png", "*.html", "fidelity.csv", "profile.csv", "tune-*"))
    body = """
        sys.argv = ["gpulab", "report"]
        from gpulab.cli import main
        main()
    """
    for r in together(tmp_path, body, [[], []]):
        assert r.returncode == 0, r.stderr
    folder = tmp_path / "results" / "h200"
    assert (folder / "report.html").exists() and (folder / "sgemm.png").read_bytes().startswith(b"\x89PNG")
    assert no_temporary_files(tmp_path)


def test_two_tunes_of_one_variant_at_once_lose_no_rows(tmp_path):
    """Two `gpulab tune`s of one variant, each timing its own config, saving into one tune CSV."""
    body = """
        from gpulab.jobs import tune
        from gpulab.experiments import get_experiment

        class StandIn:
            arch = "sm_90"
            env = {"gpu": "Stand-in", "driver": "0", "date": "2026-12-02"}

            def execute(self, spec):
                return spec.base_record() | {"correct": True, "time_ms": 1.0, "gflops": 1.0}

        exp = get_experiment("sgemm")
        tile = int(sys.argv[3])
        plan = tune.TunePlan(exp, exp.variant("v1"), [exp.shape(64, 64, 64)], StandIn(), Path("."),
                             {"TILE": tile}, 1, [{"TILE": tile}], [])
        plan.resume()
        tune.run_tune(plan)
    """
    for r in together(tmp_path, body, [["8"], ["32"]]):
        assert r.returncode == 0, r.stderr
    from gpulab.records import read_csv

    rows = read_csv(tmp_path / "tune-sgemm-v1.csv")
    assert sorted(r["params"] for r in rows) == ["TILE=32", "TILE=8"]
    assert all(not r.get("skip_reason") for r in rows)  # no pending row left behind
    assert no_temporary_files(tmp_path)
