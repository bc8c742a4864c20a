"""README tables are generated from the committed CSV: the pivot and best-per-shape lines."""

from pathlib import Path

import pytest

from gpulab.experiments import get_experiment
from gpulab.gpu.nvml import thermal_or_power
from gpulab.records import read_csv, write_csv
from gpulab.report.html import FIDELITY_COLUMNS
from gpulab.report.markdown import (
    config_lines, experiment_block, fidelity_block, one_config_per_shape, pivot, update_readme,
)
from gpulab.report.picks import latest_runs

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


def test_the_best_row_is_one_column_and_its_lines_say_what_it_ran(tmp_path):
    """gemm_bf16's committed CSV: its best row ran t4 at the large shapes and t2's small tiles at
    512^3 and 1024^3 (different params per shape), still one column; the lines name the pick."""
    records = read_csv(ROOT / "results" / "h200" / "gemm_bf16.csv")
    best = [r for r in records if r["variant"] == "best"]
    assert len({r["params"] for r in best}) > 1  # the premise: several configs
    header = pivot(records, "gflops").splitlines()[0]
    assert header.count("| best") == 1 and "| best |" in header
    # The best row runs one of the variants, so it ties with that variant's own row within noise and
    # wins a shape only some of the time: here the first best row is made the fastest at its shape
    # (its time a part in a thousand under the fastest variant's), the other rows as recorded.
    first = best[0]
    others = [r["time_ms"] for r in records if r["shape"] == first["shape"] and r["variant"] not in ("cublas", "best")]
    first.update(time_ms=0.999 * min(others), gflops=first["gflops"] * first["time_ms"] / (0.999 * min(others)))
    edited = tmp_path / "gemm_bf16.csv"
    write_csv(edited, records)
    lines = experiment_block(edited, "t0", "gflops")
    assert "best best" not in lines
    # Where the best row was the fastest run at its shape, its line names what it ran and why.
    won = [b for b in best if all(b["time_ms"] < r["time_ms"] for r in records
                                  if r["shape"] == b["shape"] and r["variant"] not in ("cublas", "best"))]
    assert first in won
    for b in won:
        assert f"- {b['shape']}: best {b['picked']} {b['params']}" in lines, b["shape"]


def test_pivot_columns_follow_the_ladder_not_the_csv_order():
    """The rungs left to right in the experiment's order, then the best row, then cuBLAS, however the
    CSV's rows were appended (a re-run of one rung moves its rows to the end)."""
    records = read_csv(ROOT / "results" / "h200" / "gemm_bf16.csv")
    header = [c.strip() for c in pivot(records, "gflops").splitlines()[0].split("|")[2:-1]]
    shuffled = [r for r in records if r["variant"] == "t0"] + list(reversed(records))
    shuffled = list({id(r): r for r in shuffled}.values())
    assert [c.strip() for c in pivot(shuffled, "gflops").splitlines()[0].split("|")[2:-1]] == header
    variants = [c.split()[0] for c in header]
    assert variants[-2:] == ["best", "cublas"]
    rungs = [v for v in variants if v not in ("best", "cublas")]
    ladder = [v.name for v in get_experiment("gemm_bf16").variants]  # t0-t4, then d0 and kc
    assert rungs == sorted(rungs, key=ladder.index) and {"t0", "t4", "d0"} <= set(rungs)


def test_update_readme_rewrites_only_the_named_block(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- gpulab:h200-sgemm -->\nold\n<!-- /gpulab:h200-sgemm -->\n"
                      "<!-- gpulab:other -->\nkeep\n<!-- /gpulab:other -->\n")
    block = experiment_block(H200_SGEMM, "v0", "gflops")
    assert update_readme(readme, {"h200-sgemm": block}) == ["h200-sgemm"]
    text = readme.read_text()
    assert "old" not in text and "keep" in text and "| shape (GFLOP/s) |" in text
    assert "NVIDIA H200" in text


def test_fidelity_block_counts_agreement_per_quantity(tmp_path):
    base = {"experiment": "sgemm", "params": "", "shape": "64x64x64", "gpu": "NVIDIA H200", "driver": "580",
            "nvrtc": "13.0", "ncu_version": "2025.3.1.0", "date": "2026-11-30T00:00:00"}
    rows = [
        base | {"variant": "v0", "quantity": "gmem_load_requests", "predicted": 10, "measured": 10.0, "exact": True, "verdict": "exact"},
        base | {"variant": "v1", "quantity": "gmem_load_requests", "predicted": 10, "measured": 12.0, "exact": False, "verdict": "differs"},
        base | {"variant": "v1", "quantity": "smem_load_wavefronts", "predicted": 5, "measured": 7.0, "exact": False, "verdict": "differs"},
        base | {"variant": "v1", "quantity": "dram_read_bytes", "predicted": 100, "measured": 110.0, "exact": False, "verdict": "within 15%"},
    ]
    write_csv(tmp_path / "fidelity.csv", rows)
    text = fidelity_block(tmp_path / "fidelity.csv")
    assert "| gmem_load_requests | 1 of 2 | 1 |" in text
    assert "| smem_load_wavefronts | 0 of 1 | 1 |" in text
    assert "sgemm v1 64x64x64 (10 -> 12)" in text
    assert "2 runs" in text and "in 1 of the 1 runs" in text
    assert "NVIDIA H200, driver 580, NVRTC 13.0, Nsight Compute 2025.3.1.0, 2026-11-30" in text


def test_report_command_writes_plot_and_html_from_csv(tmp_path):
    import shutil
    import subprocess
    import sys

    (tmp_path / "results" / "h200").mkdir(parents=True)
    shutil.copy(H200_SGEMM, tmp_path / "results" / "h200" / "sgemm.csv")
    # the card's fidelity table with one count planted off its prediction, to see how a difference shows
    fidelity_rows = read_csv(H200_SGEMM.with_name("fidelity.csv"))
    planted = next(r for r in fidelity_rows if r["quantity"] == "smem_load_requests" and r["variant"] == "v9"
                   and r["shape"] == "129x67x33")
    # the card's own rows the page marks wrong, where it has a column: counts that differ, and DRAM bytes
    # outside the tolerance (4097^3's re-reads)
    shown = {q for q, _ in FIDELITY_COLUMNS}
    differing = sum(1 for r in fidelity_rows if r["quantity"] in shown and r.get("predicted") is not None
                    and (r.get("verdict") == "differs" or str(r.get("verdict")).startswith("outside")))
    planted.update(measured=planted["predicted"] + 16, exact=False, verdict="differs")
    write_csv(tmp_path / "results" / "h200" / "fidelity.csv", fidelity_rows)
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "report"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    png = tmp_path / "results" / "h200" / "sgemm.png"
    html = (tmp_path / "results" / "h200" / "report.html").read_text()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "data:image/png;base64," in html and "cublas" in html and "NVIDIA H200" in html
    # the predicted-vs-measured section: where a count differs, both numbers show, marked wrong:
    # the planted one, beside the card's own differing rows
    assert "Predicted before measured" in html
    # ... and the sgemm rows timed while the card slowed for heat or power (marked in their card column)
    slowed = sum(1 for r in read_csv(H200_SGEMM) if thermal_or_power(r.get("throttle")))
    assert '1,843<br>pred 1,827' in html and html.count('class="wrong"') == differing + 1 + slowed


def test_ladder_block_shows_the_recorded_blocks_per_sm():
    from gpulab.report.markdown import ladder_block

    text = ladder_block(H200_SGEMM, get_experiment("sgemm"), "4096x4096x4096")
    v3 = next(line for line in text.splitlines() if line.startswith("| v3 |"))
    assert "| 148 | 1 |" in v3  # 148 registers x 256 threads: one block per SM on sm_90
    # v14 is held to a third of the TF32 tensor rate, the FFMA rungs and cuBLAS to the FMA rate: only
    # the odd cell names its ceiling.
    v14 = next(line for line in text.splitlines() if line.startswith("| v14 |"))
    assert v14.endswith("of tensor_tf32/3 |")
    rows = [line for line in text.splitlines() if line.startswith(("| v", "| cublas"))]
    assert len(rows) == 16 and sum(" of " in line.rsplit("|", 2)[-2] for line in rows) == 1


def test_sanitize_block_from_the_cards_csv(tmp_path):
    """The README's compute-sanitizer block, from results/h200/sanitize.csv: every correct run clean
    under each tool, the demonstration's race reported; a file without its verdicts is refused."""
    from gpulab.records import DamagedFile
    from gpulab.report.markdown import sanitize_block

    path = H200_SGEMM.with_name("sanitize.csv")
    rows = read_csv(path)
    block = sanitize_block(path)

    def correct_runs(tool):
        return {(r["experiment"], r["variant"], r["params"], r["shape"]) for r in rows
                if r["tool"] == tool and not r["expected_wrong"]}

    for tool in ("memcheck", "synccheck", "initcheck"):
        n = len(correct_runs(tool))
        assert n and f"| {tool} | {n} of {n} |" in block
    # The finding settled on 2026-12-04 (docs/results/sanitize.md): racecheck's faults on cluster
    # launches came from --launch-count; sanitized again without it, every correct run is clean,
    # the clustered ones (t4 and v14 at CLUSTER=2, kc's split over a cluster) among them.
    raced = correct_runs("racecheck")
    clustered = {key for key in raced if "CLUSTER=2" in (key[2] or "") or key[1] == "kc"}
    assert clustered and f"| racecheck | {len(raced)} of {len(raced)} |" in block
    unclean = {(r["experiment"], r["variant"], r["params"], r["shape"]) for r in rows
               if r["tool"] == "racecheck" and not r["expected_wrong"] and r["verdict"] != "clean"}
    assert not unclean and "tool faults" not in block
    assert "nosync R=3 100003: hazard reported (a demonstration)" in block
    damaged = tmp_path / "sanitize.csv"
    write_csv(damaged, [{k: v for k, v in r.items() if k != "verdict"} for r in rows])
    with pytest.raises(DamagedFile):
        sanitize_block(damaged)


def _run(variant, params, shape, date, gflops=1.0):
    return {"experiment": "gemm_bf16", "variant": variant, "params": params, "shape": shape, "date": date,
            "correct": True, "gflops": gflops}


def test_the_table_keeps_each_variants_latest_run_at_each_shape():
    """A default a later run replaced at a shape (the rung since tuned) leaves the table there and
    stays where nothing replaced it; every config of one run (a params sweep) stays."""
    old, new = "2026-12-01T06:10:44+00:00", "2026-12-02T00:29:37+00:00"
    records = [_run("t0", "BM=64", "2048x2048x2048", old), _run("t0", "BM=64", "512x512x512", old),
               _run("t0", "BM=128", "2048x2048x2048", new),
               _run("v1", "TILE=8", "1024x1024x1024", old), _run("v1", "TILE=16", "1024x1024x1024", old),
               _run("cublas", "", "2048x2048x2048", old), _run("cublas", "", "2048x2048x2048", new, 2.0)]
    kept = {(r["variant"], r["params"], r["shape"], r["date"]) for r in latest_runs(records)}
    assert kept == {("t0", "BM=64", "512x512x512", old), ("t0", "BM=128", "2048x2048x2048", new),
                    ("v1", "TILE=8", "1024x1024x1024", old), ("v1", "TILE=16", "1024x1024x1024", old),
                    ("cublas", "", "2048x2048x2048", new)}


def test_the_committed_gemm_bf16_table_shows_the_tuned_rungs_not_the_defaults_they_replaced():
    """gemm_bf16's committed CSV still holds t0's default (64x64 tiles) from before its tune; the
    README's table has one column per rung (each ran one config per shape), the lines under it say
    which, t0's tuned config only, and the shapes keep the CSV's order."""
    path = ROOT / "results" / "h200" / "gemm_bf16.csv"
    records = read_csv(path)
    assert any(r["variant"] == "t0" and r["params"].startswith("BM=64 ") for r in records)  # the premise
    block = experiment_block(path, "t0", "gflops")
    lines = block.splitlines()
    assert lines[0] == "| shape (GFLOP/s) | t0 | t1 | t2 | t3 | t4 | d0 | kc | best | cublas |"
    assert "- t0 ran BM=128 BN=128 BK=64 WM=32 WN=32 at every shape" in lines
    assert not any("BM=64 BN=64 BK=32" in line for line in lines)
    rows = [line for line in lines[2:] if line.startswith("| ")]
    assert [row.split(" | ")[0][2:] for row in rows] == list(dict.fromkeys(r["shape"] for r in records))


def test_a_sweep_keeps_a_column_per_config_and_a_tuned_pick_shares_one():
    """v1 ran three tiles at one shape: three columns. t4 ran one config per shape, a different one
    at each: one column, and a line naming each config with its shapes."""
    run = "2026-12-02T00:29:37+00:00"
    records = [_run("v1", f"TILE={t}", "1024x1024x1024", run, t) for t in (8, 16, 32)]
    records += [_run("t4", "CLUSTER=1", "2048x2048x2048", run, 5.0), _run("t4", "CLUSTER=2", "4096x4096x4096", run, 6.0),
                _run("t4", "CLUSTER=2", "8192x8192x8192", run, 7.0)]
    merged = one_config_per_shape(records)
    assert merged == {"t4"}
    header = pivot(records, "gflops", merged).splitlines()[0]
    assert "| v1 TILE=8 | v1 TILE=16 | v1 TILE=32 |" in header and header.count("t4") == 1
    assert config_lines(records, merged) == "- t4 ran CLUSTER=1 at 2048x2048x2048; CLUSTER=2 at 4096x4096x4096, 8192x8192x8192"


def test_the_headline_shows_the_best_row_against_cublas_and_its_own_ceiling():
    """sgemm's README table: one row per shape, the best row's pick (v14 on the tensor cores from 1024^3
    up), cuBLAS beside, and each row's own ceiling named: a third of the TF32 rate for v14, the FMA
    rate for sx, the copy rate for the GEMVs (memory-bound shapes)."""

    from gpulab.report.markdown import headline_block

    text = headline_block(H200_SGEMM, get_experiment("sgemm"))
    lines = text.splitlines()
    assert lines[0] == "| shape | gpulab's best | GFLOP/s | cublas GFLOP/s | % of cublas | % of ceiling |"
    records = read_csv(H200_SGEMM)
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| shape")]
    # the shapes with a best row; those benched for a few variants only are counted in a line
    with_best = {r["shape"] for r in records if r["variant"] == "best" and r.get("time_ms")}
    assert len(rows) == len(with_best)
    others = len({r["shape"] for r in records}) - len(with_best)
    assert others and f"{others} more shapes benched without a best row" in text
    best = next(r for r in records if r["variant"] == "best" and r["shape"] == "4096x4096x4096")
    cub = next(r for r in records if r["variant"] == "cublas" and r["shape"] == "4096x4096x4096")
    assert (f"| 4096x4096x4096 | v14 | {best['gflops']:,.0f} | {cub['gflops']:,.0f} | {best['pct_of_cublas']:.1f}% "
            f"| {best['pct_of_ceiling']:.1f}% (tensor_tf32/3) |") in lines
    assert any(line.startswith("| 512x512x512 | sx |") and line.endswith("(fma_fp32) |") for line in rows)
    assert any(line.startswith("| 1x8192x8192 | gv |") and line.endswith("% (copy) |") for line in rows)
    assert "NVIDIA H200" in lines[-1]


def test_the_headline_of_a_memory_experiment_takes_its_fastest_correct_variant(tmp_path):
    """No best row and no vendor library: the fastest correct run at each shape, never a demonstration
    kept wrong on purpose however fast, against the copy ceiling; no vendor columns."""

    from gpulab.report.markdown import headline_block

    run = "2026-12-01T06:42:18+00:00"
    base = {"experiment": "stencil", "shape": "1000", "date": run, "ceiling": "copy_kernel", "time_ms": 1.0}
    rows = [base | {"variant": "global", "params": "R=3", "correct": True, "gbps": 100.0, "pct_of_ceiling": 2.0},
            base | {"variant": "shfl", "params": "R=3", "correct": True, "gbps": 300.0, "pct_of_ceiling": 7.0},
            base | {"variant": "regs", "params": "R=3", "correct": False, "gbps": 500.0, "pct_of_ceiling": 11.0},
            base | {"variant": "nosync", "params": "R=3", "correct": True, "expected_wrong": True, "gbps": 900.0,
                    "pct_of_ceiling": 20.0}]
    write_csv(tmp_path / "stencil.csv", rows)
    lines = headline_block(tmp_path / "stencil.csv", get_experiment("stencil")).splitlines()
    assert lines[0] == "| shape | gpulab's best | GB/s | % of ceiling |"
    assert lines[2] == "| 1000 | shfl R=3 | 300.0 | 7.0% (copy_kernel) |"


def test_a_fidelity_headline_counts_the_judged_quantities(tmp_path):
    from gpulab.report.markdown import fidelity_headline_block

    base = {"experiment": "sgemm", "params": "", "shape": "64x64x64", "gpu": "NVIDIA H200", "date": "2026-11-30"}
    rows = [base | {"variant": "v0", "quantity": "gmem_load_requests", "predicted": 10, "measured": 10.0, "exact": True, "verdict": "exact"},
            base | {"variant": "v1", "quantity": "gmem_load_requests", "predicted": 10, "measured": 12.0, "exact": False, "verdict": "differs"},
            base | {"variant": "v1", "quantity": "dram_read_bytes", "predicted": 100, "measured": 110.0, "exact": False, "verdict": "within 15%"}]
    write_csv(tmp_path / "fidelity.csv", rows)
    assert fidelity_headline_block(tmp_path / "fidelity.csv") == (
        "Of the 2 counts held to the prediction exactly (1 counted quantities in 2 profiled runs "
        "of 2 kernels), 1 equal it and 1 differ.\n")
