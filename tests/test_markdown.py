"""README tables are generated from the committed CSV: the pivot and best-per-shape lines."""

from pathlib import Path

from gpulab.records import read_csv
from gpulab.report.markdown import experiment_block, pivot, update_readme

ROOT = Path(__file__).resolve().parents[1]
H200_SGEMM = ROOT / "results" / "h200" / "sgemm.csv"


def test_pivot_from_the_committed_h200_csv():
    records = read_csv(H200_SGEMM)
    table = pivot(records, "gflops")
    lines = table.splitlines()
    assert lines[0].startswith("| shape (GFLOP/s) |") and "cublas" in lines[0]
    shapes = {r["shape"] for r in records}
    assert len(lines) == 2 + len(shapes)
    v0_4096 = next(r for r in records if r["variant"] == "v0" and r["shape"] == "4096x4096x4096")
    assert f"{v0_4096['gflops']:,.0f}" in table


def test_update_readme_rewrites_only_the_named_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- gpulab:h200-sgemm -->\nold\n<!-- /gpulab:h200-sgemm -->\n"
                      "<!-- gpulab:other -->\nkeep\n<!-- /gpulab:other -->\n")
    block = experiment_block(H200_SGEMM, "v0", "gflops")
    assert update_readme(readme, {"h200-sgemm": block}) == ["h200-sgemm"]
    text = readme.read_text()
    assert "old" not in text and "keep" in text and "| shape (GFLOP/s) |" in text
    assert "NVIDIA H200" in text


def test_report_command_writes_plot_and_html_from_csv(tmp_path):
    import shutil
    import subprocess
    import sys

    (tmp_path / "results" / "h200").mkdir(parents=True)
    shutil.copy(H200_SGEMM, tmp_path / "results" / "h200" / "sgemm.csv")
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "report"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    png = tmp_path / "results" / "h200" / "sgemm.png"
    html = (tmp_path / "results" / "h200" / "report.html").read_text()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "data:image/png;base64," in html and "cublas" in html and "NVIDIA H200" in html
