"""Damaged results files (issue: nothing lost, nothing silent): `gpulab readme` and `gpulab report`
check every CSV before writing anything; a damaged one is named with its line and column, exit 2,
and nothing is written. Also the reader itself, row by row, and other inputs that used to end in a
traceback: each is one line on stderr saying what to do, exit 2."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpulab import records
from gpulab.errors import GpulabError

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "GPULAB_NO_GPU": "1"}


def gpulab(*args, cwd, env=ENV):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def drop_column(text: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    i = lines[0].rstrip("\n").split(",").index(name)
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([r[:i] + r[i + 1:] for r in rows])
    return buf.getvalue()


def set_cell(text: str, line: int, name: str, value: str) -> str:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    rows[line - 1][rows[0].index(name)] = value
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


# (file, how it is damaged, words the message must carry)
DAMAGES = {
    "truncated": ("sgemm.csv", lambda t: t[: t.rstrip("\n").rfind(",") - 3], "cut off"),
    "no correct column": ("sgemm.csv", lambda t: drop_column(t, "correct"), "column correct"),
    "header only": ("stencil.csv", lambda t: t.splitlines(keepends=True)[0], "no rows"),
    "empty": ("coalesce.csv", lambda t: "", "empty"),
    "nan rate": ("sgemm.csv", lambda t: set_cell(t, 3, "gflops", "nan"), "line 3, column gflops"),
    "short row": ("grayscale.csv", lambda t: t + "grayscale,v0\n", "cells"),
    "garbage row": ("grayscale.csv", lambda t: t + "\x00\x01,\"unclosed\n", "line"),
    "text in a number": ("sgemm.csv", lambda t: set_cell(t, 2, "time_ms", "fast"), "line 2, column time_ms"),
    "not utf-8": ("ceilings.csv", lambda t: t.encode() + b"\xff\xfe,\n", "UTF-8"),
    "fidelity without measured": ("fidelity.csv", lambda t: drop_column(t, "measured"), "column measured"),
    # Each of these used to change the README without a word (issue 42): a second `variant` column
    # won over the first (an empty table), a NUL or an unknown 100,000-character name blanked cells,
    # a negative rate was published.
    "a column named twice": ("sgemm.csv", lambda t: t.replace(",picked,", ",variant,", 1), "line 1, column variant"),
    "NUL in the header": ("sgemm.csv", lambda t: t.replace("gflops", "gfl\x00ops", 1), "line 1"),
    "NUL in a cell": ("sgemm.csv", lambda t: set_cell(t, 3, "params", "TILE=8\x00"), "line 3, column params"),
    "100,000-character variant": ("sgemm.csv", lambda t: set_cell(t, 2, "variant", "v" * 100_000),
                                  "line 2, column variant"),
    "negative rate": ("sgemm.csv", lambda t: set_cell(t, 2, "gflops", "-5000.0"), "line 2, column gflops"),
}


@pytest.fixture
def workdir(tmp_path):
    shutil.copytree(REPO / "results" / "h200", tmp_path / "results" / "h200",
                    ignore=shutil.ignore_patterns("*.png", "*.html"))
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    return tmp_path


def damage(workdir: Path, name: str) -> Path:
    file, how, _ = DAMAGES[name]
    path = workdir / "results" / "h200" / file
    data = how(path.read_text())
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_readme_refuses_a_damaged_csv_and_writes_nothing(workdir, name):
    path = damage(workdir, name)
    before = snapshot(workdir)
    r = gpulab("readme", cwd=workdir)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert str(Path("results") / "h200" / path.name) in r.stderr and DAMAGES[name][2] in r.stderr
    after = snapshot(workdir)

    def unlocked(files):  # a lock file left by an earlier run of gpulab is no content
        return {k: v for k, v in files.items() if not k.name.endswith(".lock")}
    assert unlocked(after) == unlocked(before)


@pytest.mark.parametrize("name", ["truncated", "no correct column", "header only", "nan rate", "fidelity without measured"])
def test_report_refuses_a_damaged_csv_and_writes_no_plot(workdir, name):
    path = damage(workdir, name)
    before = snapshot(workdir)
    r = gpulab("report", cwd=workdir)
    assert r.returncode == 2, r.stdout + r.stderr
    assert path.name in r.stderr and DAMAGES[name][2] in r.stderr and "Traceback" not in r.stderr
    assert snapshot(workdir) == before  # not one plot, no page


def test_readme_and_report_on_a_missing_or_empty_results_folder_both_exit_2(tmp_path):
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    (tmp_path / "empty").mkdir()  # readme said "0 block(s) regenerated" for every page, exit 0
    for command in ("readme", "report"):
        for folder in ("nonexistent", "empty"):
            r = gpulab(command, "--results", str(tmp_path / folder), cwd=tmp_path)
            assert r.returncode == 2 and "no results under" in r.stderr, (command, folder, r.stderr)
            assert "pass --results" not in r.stderr  # it was passed
    assert (tmp_path / "README.md").read_text() == (REPO / "README.md").read_text()


def test_the_committed_results_read_clean(workdir):
    from gpulab.report.markdown import card_folders

    assert card_folders(workdir / "results") == [workdir / "results" / "h200"]


# -- the reader, row by row -------------------------------------------------------------------
def test_a_short_row_names_its_line(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("experiment,variant,time_ms\nsgemm,v1,0.5\nsgemm\n")
    with pytest.raises(records.DamagedFile, match=r"line 3: the row has 1 cells, the header 3"):
        records.read_csv(path)


def test_a_boolean_column_holds_true_or_false(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("experiment,correct\nsgemm,maybe\n")
    with pytest.raises(records.DamagedFile, match="line 2, column correct"):
        records.read_csv(path)


def test_nan_stays_allowed_where_gpulab_writes_it(tmp_path):
    path = tmp_path / "x.csv"
    records.write_csv(path, [{"experiment": "sgemm", "max_rel_err": float("nan"), "time_ms": 1.0}])
    (row,) = records.read_csv(path)
    assert row["max_rel_err"] != row["max_rel_err"] and row["time_ms"] == 1.0


def test_a_folder_or_an_unreadable_file_is_one_line(tmp_path):
    with pytest.raises(GpulabError, match="is a folder"):
        records.read_csv(tmp_path)


# -- other inputs that used to end in a traceback ------------------------------------------------
def one_line_exit_2(r, *words):
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


def test_a_folder_as_readme(workdir):
    one_line_exit_2(gpulab("readme", "--readme", "results", cwd=workdir), "is a folder", "--readme")


def test_a_folder_as_fidelity_out(workdir):
    ncu = workdir / "ncu"
    ncu.write_text("#!/bin/sh\nexit 3\n")
    ncu.chmod(0o755)
    r = gpulab("fidelity", "stencil", "--out", "results", cwd=workdir, env={**ENV, "GPULAB_NCU": str(ncu)})
    one_line_exit_2(r, "results is a folder")


def test_a_readme_that_is_not_utf8(workdir):
    readme = workdir / "README.md"
    readme.write_bytes(readme.read_bytes() + b"\n\xe9t\xe9\n")
    before = readme.read_bytes()
    one_line_exit_2(gpulab("readme", cwd=workdir), "README.md", "not UTF-8")
    assert readme.read_bytes() == before


def test_a_results_folder_gpulab_may_not_write(workdir, monkeypatch, capsys):
    """As a read-only folder answers (root ignores permissions, so the refusal is stood in for)."""
    from gpulab import cli
    from gpulab import files

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files.tempfile, "mkstemp", refuse)
    monkeypatch.chdir(workdir)
    monkeypatch.setattr(sys, "argv", ["gpulab", "report"])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "cannot write results/h200/" in err and "Permission denied" in err
    assert len(err.strip().splitlines()) == 1
    assert not list((workdir / "results" / "h200").glob("*.png"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_read_only_results_folder(workdir):
    folder = workdir / "results" / "h200"
    folder.chmod(0o555)
    try:
        one_line_exit_2(gpulab("report", cwd=workdir), "cannot write", "Permission denied")
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize("args", [["list"], ["predict", "sgemm", "v1"], ["bench", "sgemm", "--size", "0"]])
def test_an_ascii_terminal_gets_output_not_a_traceback(tmp_path, args):
    r = gpulab(*args, cwd=tmp_path, env={**ENV, "PYTHONIOENCODING": "ascii"})
    assert "Traceback" not in r.stdout + r.stderr and "UnicodeEncodeError" not in r.stderr, r.stderr
    assert r.returncode == (2 if "--size" in args else 0), r.stderr
