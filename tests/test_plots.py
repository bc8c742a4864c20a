"""What the report's figures contain, drawn from the committed H200 results: the series, their
labels and values, the ceilings, and that no two series look alike (colour and marker)."""

from pathlib import Path

import matplotlib.colors as mcolors
import pytest

from gpulab.records.ceilings import COMPUTE_LABELS, L2_NAME, TENSOR_BF16, Ceilings, ceilings_path
from gpulab.records.ceilings import load as load_ceilings
from gpulab.experiments import get_experiment
from gpulab.records import read_csv, write_csv
from gpulab.report import card_page, plots, profile_plots, roofline

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "results" / "h200"
SGEMM = get_experiment("sgemm")
HEADLINE = SGEMM.shape(*SGEMM.headline_shape).label
# The rungs the recorded bench ran at the headline shape (the skinny kernels are not rungs).
RUNGS = plots.ladder_rungs(SGEMM, read_csv(H200 / "sgemm.csv"), HEADLINE)


@pytest.fixture(scope="module")
def records():
    return read_csv(H200 / "sgemm.csv")


@pytest.fixture(scope="module")
def ceilings():
    return load_ceilings(H200 / "ceilings.csv")


def _legend_texts(fig) -> list[str]:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    return [t.get_text() for leg in legends for t in leg.get_texts()]


def test_series_styles_never_repeat_within_seventy():
    pairs = {(plots.series_style(i)["color"], plots.series_style(i)["marker"]) for i in range(70)}
    assert len(pairs) == 70


def test_ladder_lines_one_distinct_series_per_rung_legend_outside_ragged_apart(records, ceilings):
    fig = plots.ladder_lines_figure(records, RUNGS, "cublas", ("FMA ceiling", ceilings.fma_gflops), "t")
    styles = plots.styles_of(fig)
    labels = [s[0] for s in styles]
    assert labels[:len(RUNGS)] == RUNGS and "cublas" in labels and any(lb.startswith("FMA ceiling") for lb in labels)
    seen = [(c, m) for _, c, m in styles]
    assert len(seen) == len(set(seen)), f"two series look alike: {styles}"
    main, side = fig.axes
    # the sweep panel holds only square power-of-two sizes; the ragged shapes are the other panel's columns
    xs = {x for line in main.get_lines() for x in line.get_xdata() if line.get_label() in RUNGS}
    assert xs == {512, 1024, 2048, 4096, 8192}
    # every rung ran the skinny shapes too in the main job's full grid (H200, 2026-12-04); the
    # calibration rows at M = 4-256 (five variants of twenty) are not the ladder's story
    assert set(t.get_text() for t in side.get_xticklabels()) == {
        "4000x4000x4000", "1000x3000x777", "4097x4097x4097", "4096x64x4096", "64x4096x4096", "1x8192x8192", "8192x1x8192"}
    v9_ragged = [line for line in side.get_lines() if line.get_color() == plots.series_style(RUNGS.index("v9"))["color"]
                 and line.get_marker() == plots.series_style(RUNGS.index("v9"))["marker"]]
    want = [plots.best_per_rung(records, t.get_text())["v9"]["gflops"] for t in side.get_xticklabels()]
    assert list(v9_ragged[0].get_ydata()) == pytest.approx(want)
    # the legend sits to the right of every axes, covering none of them
    fig.canvas.draw()
    legend_box = fig.legends[0].get_window_extent()
    assert all(legend_box.x0 >= ax.get_window_extent().x1 for ax in fig.axes)
    assert set(RUNGS) <= set(_legend_texts(fig))


def test_ladder_bars_are_percent_of_cublas_labelled_in_tflops(records, ceilings):
    fig = plots.ladder_bars_figure(records, RUNGS, HEADLINE, "cublas", ("FMA ceiling", ceilings.fma_gflops), "t")
    ax = fig.axes[0]
    best = plots.best_per_rung(records, HEADLINE)
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([100 * best[v]["gflops"] / best["cublas"]["gflops"] for v in RUNGS])
    assert [t.get_text() for t in ax.get_xticklabels()] == RUNGS
    assert [t.get_text() for t in ax.texts] == [f"{best[v]['gflops'] / 1e3:.1f}" for v in RUNGS]
    levels = {round(line.get_ydata()[0], 1) for line in ax.get_lines()}
    assert levels == {100.0, round(100 * ceilings.fma_gflops / best["cublas"]["gflops"], 1)}
    legend = _legend_texts(fig)
    cublas_tflops, fma_tflops = best["cublas"]["gflops"] / 1e3, ceilings.fma_gflops / 1e3
    assert any(t.startswith(f"cublas {cublas_tflops:.1f} TFLOP/s") for t in legend)
    assert any(f"FMA ceiling {fma_tflops:.1f}" in t for t in legend)
    looks = [(mcolors.to_hex(p.get_facecolor()), p.get_hatch()) for p in ax.patches]
    assert len(set(looks)) == len(RUNGS)


def test_ladder_bars_need_the_library_row(records):
    with pytest.raises(ValueError, match="no cublas row"):
        plots.ladder_bars_figure([r for r in records if r["variant"] != "cublas"], RUNGS, HEADLINE, "cublas", None, "t")


def test_memory_bars_distinct_per_config():
    rows = read_csv(H200 / "coalesce.csv")
    fig = plots.memory_figure(rows, "coalesce", ceiling_gbps=4300.0)
    ax = fig.axes[0]
    configs = {c.get_label(): (mcolors.to_hex(c.patches[0].get_facecolor()), c.patches[0].get_hatch())
               for c in ax.containers}
    assert len(configs) == len({plots._label(r) for r in rows})
    assert len(set(configs.values())) == len(configs), "two configs share a colour and hatch"
    assert any(t.startswith("copy ceiling 4,300") for t in _legend_texts(fig))


def test_roofline_points_come_from_the_access_model(records):
    points = roofline.points(SGEMM, records)
    # Every rung with a model whose kernel asks L1TEX for global bytes; v14's global traffic is all TMA
    # (the boxes come from L2 into shared memory, C leaves by TMA stores), so it has no such point.
    assert [p.variant for p in points] == [v for v in RUNGS if SGEMM.variant(v).access is not None and v != "v14"]
    assert "sx" not in RUNGS  # benched at 4096^3 too, but a split-K kernel for few tiles, not a rung
    m = n = k = 4096
    for p in points:
        assert p.shape == HEADLINE
        assert p.dram_intensity == pytest.approx(2 * m * n * k / (4 * (m * k + k * n + m * n)))
    by = {p.variant: p for p in points}
    # v0 re-reads A and B from L1 for every multiply-add: about half a flop per byte; tiling raises it
    assert by["v0"].l1_intensity == pytest.approx(0.5, rel=0.01)
    assert by["v0"].l1_intensity < by["v1"].l1_intensity < by["v2"].l1_intensity < by["v3"].l1_intensity
    assert by["v9"].gflops == plots.best_per_rung(records, HEADLINE)["v9"]["gflops"]


def test_roofline_draws_measured_roofs_only_and_an_l2_line_only_when_measured(records, ceilings):
    points = roofline.points(SGEMM, records)
    measured = [line.get_label() for line in roofline.roofline_figure(points, roofline.roofs(ceilings), "t").axes[0].get_lines()]
    assert f"L2 read {ceilings.l2_gbps / 1e3:.1f} TB/s" in measured  # the committed ceilings have it
    no_l2 = Ceilings([r for r in ceilings.rows if r["ceiling"] != L2_NAME])  # as measured before the L2 ceiling
    without = roofline.roofline_figure(points, roofline.roofs(no_l2), "t")
    names = [line.get_label() for line in without.axes[0].get_lines()]
    assert not any(n.startswith("L2") for n in names)
    assert any(n.startswith(f"FP32 FMA {ceilings.fma_gflops / 1e3:.1f}") for n in names)
    assert any(n.startswith(f"DRAM copy {ceilings.copy_gbps / 1e3:.2f}") for n in names)
    # The TF32 roof: gpulab's own wgmma rate where measured, else the rate cuBLAS reached
    no_tf32 = Ceilings([r for r in no_l2.rows if r["ceiling"] != "tensor_tf32"])
    cublas = max(no_tf32.gflops(f"cublas_tf32_{n}") for n in (4096, 8192)) / 1e3
    assert [r.name for r in roofline.roofs(no_tf32) if r.name.startswith("TF32")] == \
        [f"TF32 tensor (cuBLAS, 4096^3) {cublas:,.0f} TFLOP/s"]
    wgmma = Ceilings(no_tf32.rows + [{"ceiling": "tensor_tf32", "gflops": 480_000.0, "instruction": "wgmma m64n256k8 tf32"}])
    assert [r.name for r in roofline.roofs(wgmma) if r.name.startswith("TF32")] == ["TF32 tensor (wgmma) 480 TFLOP/s"]
    with_l2 = Ceilings(no_l2.rows + [{"ceiling": L2_NAME, "gbps": 11000.0}])
    fig = roofline.roofline_figure(points, roofline.roofs(with_l2), "t")
    ax = fig.axes[0]
    assert any(line.get_label() == "L2 read 11.0 TB/s" for line in ax.get_lines())
    assert ax.get_xscale() == ax.get_yscale() == "log"
    filled = [line for line in ax.get_lines() if line.get_label() in RUNGS]
    assert [line.get_xdata()[0] for line in filled] == pytest.approx([p.l1_intensity for p in points])
    seen = [(mcolors.to_hex(line.get_color()), line.get_marker()) for line in filled]
    assert len(set(seen)) == len(seen)
    # every rung is named on the plot, those at one spot in one label
    labelled = ", ".join(t.get_text() for t in ax.texts)
    assert all(p.variant in labelled for p in points) and "v6, v7, v8" in labelled


def test_profile_figure_speed_of_light_and_stalls_per_run():
    rows = read_csv(H200 / "profile.csv")
    fig = profile_plots.profile_figure(rows, "t")
    sol, stall = fig.axes
    labels = [t.get_text() for t in sol.get_yticklabels()]
    assert labels == [profile_plots.run_label(r, rows) for r in rows]
    # Runs that would read the same (sgemm v13 at 4096^3 with S=8 and S=16) are told apart by their params.
    assert all(label.startswith(f"{r['experiment']} {r['variant']}\n{r['shape']}") for label, r in zip(labels, rows))
    assert len(set(labels)) == len(labels)
    widths = [p.get_width() for p in sol.patches]
    assert len(widths) == 5 * len(rows)
    want = [r[col] for col, _ in profile_plots.SPEED_OF_LIGHT for r in rows]
    assert widths == pytest.approx(want)
    names = _legend_texts(fig)
    assert {"SM", "memory", "L1TEX", "L2", "DRAM"} <= set(names)
    assert {"long scoreboard", "MIO throttle", "other"} <= set(names) and "selected" not in names
    # the stack of each run sums its stall cycles, 'selected' (the issue itself) left out
    totals = [sum(p.get_width() for p in stall.patches if abs(p.get_y() + p.get_height() / 2 - i) < 1e-6)
              for i in range(len(rows))]
    for r, total in zip(rows, totals):
        want = sum(v for k, v in r.items() if k.startswith("ncu_stall_") and k != "ncu_stall_selected_cycles_per_inst")
        assert total == pytest.approx(want, rel=1e-6)


def test_card_page_writes_every_plot_and_embeds_them(tmp_path):
    import shutil

    card = tmp_path / "h200"
    shutil.copytree(H200, card, ignore=shutil.ignore_patterns("*.png", "report.html"))
    out, count = card_page.write(card)
    pngs = sorted(p.name for p in card.glob("*.png"))
    assert pngs == ["coalesce.png", "gemm_bf16-ladder.png", "gemm_bf16-llm.png", "gemm_bf16.png", "grayscale.png",
                    "profiles.png", "roofline.png", "sgemm-ladder.png", "sgemm-llm.png", "sgemm.png", "stencil.png"]
    assert count == len(pngs)
    page = out.read_text()
    assert page.count("src=\"data:image/png;base64,") == len(pngs) and "<img" in page
    assert "No L2 roof" not in page  # the committed ceilings have the L2 ceiling
    assert "long_scoreboard" in page and "Predicted before measured" in page
    assert not list(card.glob(".*.tmp"))  # written whole, no temporary left behind
    rows = read_csv(card / "ceilings.csv")  # a card measured before gpulab had an L2 ceiling
    write_csv(card / "ceilings.csv", [r for r in rows if r["ceiling"] != L2_NAME])
    out, _ = card_page.write(card)
    assert "No L2 roof" in out.read_text()


def test_a_tensor_core_ladder_is_drawn_against_its_tensor_ceiling(tmp_path, monkeypatch):
    """gemm_bf16's pictures mark the measured tensor rate (its compute_ceiling), not the FP32 FMA rate."""
    source = Path(__file__).resolve().parent.parent / "results" / "h200"
    gpu_dir = tmp_path / "h200"
    gpu_dir.mkdir()
    for name in ("gemm_bf16.csv", "ceilings.csv"):
        (gpu_dir / name).write_bytes((source / name).read_bytes())
    seen = []
    real = plots.ladder_bars_figure
    monkeypatch.setattr(plots, "ladder_bars_figure", lambda *args: seen.append(args[4]) or real(*args))
    card_page.experiment_sections(gpu_dir, load_ceilings(ceilings_path(gpu_dir)))
    tensor = next(r["gflops"] for r in read_csv(gpu_dir / "ceilings.csv") if r["ceiling"] == TENSOR_BF16)
    assert seen == [(COMPUTE_LABELS[TENSOR_BF16], tensor)]


def test_the_ragged_panel_holds_the_shapes_most_rungs_ran():
    """gemm_bf16's t0 ran no ragged shape, t1-t4 four of them: the panel shows those four (sgemm's
    panel, above, leaves out the skinny shapes only v9 and v11 were benched at)."""
    exp = get_experiment("gemm_bf16")
    records = read_csv(H200 / "gemm_bf16.csv")
    rungs = plots.ladder_rungs(exp, records, exp.shape(*exp.headline_shape).label)
    fig = plots.ladder_lines_figure(records, rungs, "cublas", None, "t")
    _, side = fig.axes
    assert {t.get_text() for t in side.get_xticklabels()} == {
        "4097x4097x4097", "1000x3000x777", "1000x3000x776", "4000x4000x4000"}


def _drawn_by(png: bytes) -> str:
    """The matplotlib version a PNG's Software text chunk names ('' if none)."""
    import re

    found = re.search(rb"tEXtSoftware\x00Matplotlib version([\w.]+)", png)
    return found.group(1).decode() if found else ""


def test_the_committed_plots_are_what_gpulab_report_draws_from_the_committed_csvs(tmp_path):
    """The results pages show results/h200/*.png, so they are committed, and they must be the plots
    `gpulab report` draws from the committed CSVs: in a fresh clone it rewrote two stale ones (issue
    42). Byte for byte where this matplotlib drew the committed ones (its version is in each PNG)."""
    import shutil
    import subprocess
    import sys

    import matplotlib

    committed = {p.name: p.read_bytes() for p in sorted(H200.glob("*.png"))}
    if {_drawn_by(png) for png in committed.values()} != {matplotlib.__version__}:
        pytest.skip(f"the committed plots were drawn by matplotlib {sorted({_drawn_by(p) for p in committed.values()})}, "
                    f"this is {matplotlib.__version__}: their pixels may differ")
    shutil.copytree(H200, tmp_path / "results" / "h200", ignore=shutil.ignore_patterns("*.png", "*.html"))
    r = subprocess.run([sys.executable, "-m", "gpulab.cli", "report"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    drawn = {p.name: p.read_bytes() for p in sorted((tmp_path / "results" / "h200").glob("*.png"))}
    assert sorted(drawn) == sorted(committed)
    assert [name for name in drawn if drawn[name] != committed[name]] == []
