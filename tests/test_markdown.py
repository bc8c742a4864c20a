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
