"""The committed README and results pages (docs/results/*.md) hold exactly the tables `gpulab readme`
makes from the committed CSVs under results/: a CSV changed without `gpulab readme` being run (or a
table edited by hand) fails here, with the command to run. And the README's Python example is
examples/api_example.py, which tests/test_api.py runs."""

import difflib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpulab.records import read_csv, write_csv
from gpulab.report.markdown import BLOCK_RE, fill_blocks, page_files, readme_blocks, unplaced

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *page_files(ROOT / "docs" / "results")]


@pytest.fixture(scope="module")
def blocks() -> dict[str, str]:
    return readme_blocks(ROOT / "results")


def _diff(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), f"{name} (committed)", f"{name} (from the CSVs)",
                                 lineterm="", n=0)
    return "\n".join(list(lines)[:30])


def test_the_results_pages_are_there():
    names = {p.name for p in FILES}
    assert {"README.md", "sgemm.md", "gemm_bf16.md", "coalesce.md", "stencil.md", "grayscale.md",
            "fidelity.md"} <= names, names


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_file_holds_what_gpulab_readme_makes_of_the_committed_csvs(path, blocks):
    text = path.read_text()
    new, done = fill_blocks(text, blocks)
    assert done, f"{path.relative_to(ROOT)} holds no generated table"
    assert new == text, (f"{path.relative_to(ROOT)} is not what the committed CSVs give: run `gpulab readme` "
                         f"and commit the result\n{_diff(text, new, path.name)}")


def test_every_table_the_results_make_has_a_place(blocks):
    done = {path: fill_blocks(path.read_text(), blocks)[1] for path in FILES}
    assert not unplaced(blocks, done)


def test_every_place_names_a_table_the_results_make(blocks):
    """A marker no CSV fills (a typo, an experiment gone) would keep its old text forever."""
    named = {m.group("name") for path in FILES for m in BLOCK_RE.finditer(path.read_text())}
    assert named <= set(blocks), sorted(named - set(blocks))


def test_the_readme_headline_is_the_small_table_and_the_pages_the_full_ones():
    readme = (ROOT / "README.md").read_text()
    in_readme = {m.group("name") for m in BLOCK_RE.finditer(readme)}
    assert all(name.endswith("-headline") for name in in_readme), in_readme
    for exp in ("sgemm", "gemm_bf16", "coalesce", "stencil", "grayscale"):
        assert f"h200-{exp}-headline" in in_readme
        page = (ROOT / "docs" / "results" / f"{exp}.md").read_text()
        assert f"<!-- gpulab:h200-{exp} -->" in page, exp


@pytest.fixture
def workdir(tmp_path):
    """The README, the pages and the card's CSVs, where `gpulab readme` may write."""
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copytree(ROOT / "docs" / "results", tmp_path / "docs" / "results")
    shutil.copytree(ROOT / "results" / "h200", tmp_path / "results" / "h200",
                    ignore=shutil.ignore_patterns("*.png", "*.html"))
    return tmp_path


def readme(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpulab.cli", "readme"], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_a_csv_changed_without_gpulab_readme_is_caught_and_gpulab_readme_brings_it_back(workdir):
    """The rate of sgemm's best row at 4096^3 changes in the CSV: the README's headline and the sgemm
    page no longer match it; `gpulab readme` rewrites both, and a second run changes nothing."""
    csv_path = workdir / "results" / "h200" / "sgemm.csv"
    rows = read_csv(csv_path)
    row = next(r for r in rows if r["variant"] == "best" and r["shape"] == "4096x4096x4096")
    row["gflops"] = 123456.0
    write_csv(csv_path, rows)
    files = [workdir / "README.md", *page_files(workdir / "docs" / "results")]
    before = {p: p.read_text() for p in files}
    blocks = readme_blocks(workdir / "results")
    stale = [p.relative_to(workdir) for p in files if fill_blocks(before[p], blocks)[0] != before[p]]
    assert stale == [Path("README.md"), Path("docs/results/sgemm.md")]

    r = readme(workdir)
    assert r.returncode == 0, r.stderr
    after = {p: p.read_text() for p in files}
    assert "| 4096x4096x4096 | v14 | 123,456 |" in after[workdir / "README.md"]
    assert "123,456" in after[workdir / "docs" / "results" / "sgemm.md"]
    changed = [p.relative_to(workdir) for p in files if after[p] != before[p]]
    assert changed == stale
    assert "no file holds a place" not in r.stdout

    again = readme(workdir)
    assert again.returncode == 0, again.stderr
    assert {p: p.read_text() for p in files} == after


def test_a_page_that_is_not_utf8_stops_the_command_before_any_file_is_written(workdir):
    page = workdir / "docs" / "results" / "stencil.md"
    page.write_bytes(page.read_bytes() + b"\n\xe9t\xe9\n")
    csv_path = workdir / "results" / "h200" / "sgemm.csv"
    rows = read_csv(csv_path)
    rows[0]["gflops"] = 1.0  # the README's and sgemm page's tables would change
    write_csv(csv_path, rows)
    before = {p: p.read_bytes() for p in [workdir / "README.md", *(workdir / "docs" / "results").glob("*.md")]}
    r = readme(workdir)
    assert r.returncode == 2 and "stencil.md" in r.stderr and "not UTF-8" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_a_results_csv_without_its_times_stops_the_command_before_any_file_is_written(workdir):
    """A gemm_bf16.csv that lost its time_ms column would draw every row as not timed: refused, one
    line, exit 2, no page rewritten (before, the README and the gemm_bf16 page were rewritten from it)."""
    csv_path = workdir / "results" / "h200" / "gemm_bf16.csv"
    rows = read_csv(csv_path)
    write_csv(csv_path, [{k: v for k, v in r.items() if k != "time_ms"} for r in rows])
    before = {p: p.read_bytes() for p in [workdir / "README.md", *(workdir / "docs" / "results").glob("*.md")]}
    r = readme(workdir)
    assert r.returncode == 2 and "gemm_bf16.csv" in r.stderr and "time_ms" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_the_readme_example_is_the_example_script():
    """One example, kept in two places a reader looks: the README shows it, the script runs it
    (tests/test_api.py). It must need nothing the set-up commands do not install (no pandas), and
    keep its `__main__` guard (a Dask cluster's worker processes import the script again)."""
    (block,) = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    script = (ROOT / "examples" / "api_example.py").read_text()
    assert script.endswith(block)
    assert 'if __name__ == "__main__":' in block and "pandas" not in block


def test_a_table_without_a_place_is_named_and_a_wrong_pages_folder_refused(workdir):
    (workdir / "docs" / "results" / "coalesce.md").unlink()
    r = readme(workdir)
    assert r.returncode == 0, r.stderr
    assert "no file holds a place for h200-coalesce, h200-coalesce-best:" in r.stdout
    for pages, words in (("docs/nothing", "docs/nothing not found"), ("README.md", "README.md is a file")):
        r = subprocess.run([sys.executable, "-m", "gpulab.cli", "readme", "--pages", pages], cwd=workdir,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
