"""One card's report, from the CSVs in results/<gpu>/: the plots (PNGs beside the CSVs) and one
self-contained HTML page, report.html, with the plots embedded.

The pictures, and the files they are written to:
  <exp>-ladder.png   a ladder's rungs as % of the vendor library at the headline shape (plots.py)
  <exp>.png          a ladder's GFLOP/s by size; a memory-bound experiment's GB/s per shape
  <exp>-<suite>.png  the best row's % of the vendor library on a suite's shapes, per layer against M
  roofline.png       every rung that does arithmetic, on the card's measured roofs (roofline.py)
  profiles.png       Nsight Compute's speed of light and stalls per profiled run (profile_plots.py)
"""

from __future__ import annotations

from pathlib import Path

from gpulab.records.ceilings import COMPUTE_LABELS, ceilings_path
from gpulab.records.ceilings import load as load_ceilings
from gpulab.experiments import all_experiments
from gpulab.quantities import FIDELITY_FILE, PROFILE_FILE
from gpulab.files import write_atomic
from gpulab.report import html, plots, profile_plots, roofline
from gpulab.report.markdown import (
    best_lines, latest_in_csv_order, provenance, read_fidelity, read_profiles, read_runs, read_suite_runs,
    suite_csvs,
)
from gpulab.report.picks import latest_runs, pick_accuracy

FIDELITY_NOTE = ("ncu's counts; where the model predicted otherwise, its number below (red: the model is off; "
                 "grey: DRAM bytes within tolerance or not judged; hover for the verdict)")
ROOFLINE_NOTES = (
    "Roofs: measured on this card by gpulab ceilings (FP32 FMA kernel, cuBLAS TF32 for the tensor cores, "
    "the best 1 GiB copy for DRAM, the L2 read kernel for L2); none from a datasheet.",
    "Points: each rung's fastest correct config at the shape named, at its measured GFLOP/s. Filled: "
    "flops per byte of global traffic the access model predicts at L1TEX (load + store sectors x 32 B), "
    "which is what reaches L2 if L1 catches nothing: read it against the L2 roof. Hollow: flops per "
    "compulsory DRAM byte (inputs read once, output written once, and any pass over an input that the "
    "L2 cannot keep, where the access model counts one): read it against the DRAM roof.",
)
NO_L2_NOTE = ("No L2 roof: this card's ceilings.csv was measured before gpulab had an L2 ceiling; "
              "gpulab ceilings --refresh on the card adds it.")


def _ladder(exp, records: list[dict], ceils, gpu_dir: Path, gpu: str) -> list[dict]:
    """The ladder's two pictures, or [] where the experiment has no headline shape or library row."""
    libraries = list(exp.vendor_baselines())
    if not exp.headline_shape or not libraries:
        return []
    shape = exp.shape(*exp.headline_shape).label
    # The ladder is what was benched at the headline shape: kernels for other shape classes (sgemm's
    # skinny sk, gv, gt, sx) are shown by the best row, not as rungs.
    rungs = plots.ladder_rungs(exp, records, shape)
    # The experiment's own compute ceiling, as its records' pct_of_ceiling (gemm_bf16: the tensor rate).
    rate = ceils.gflops(exp.compute_ceiling) if ceils else None
    roof = (COMPUTE_LABELS.get(exp.compute_ceiling, exp.compute_ceiling), rate) if rate else None
    images = []
    try:
        bars = plots.ladder_bars_figure(records, rungs, shape, libraries[0], roof,
                                        f"{exp.name} ladder at {shape} on {gpu}")
    except ValueError:  # no library row at the headline shape: the bars have nothing to be % of
        bars = None
    if bars is not None:
        images.append({"path": plots.save(bars, gpu_dir / f"{exp.name}-ladder.png"), "alt": f"{exp.name} ladder",
                       "caption": f"Each rung's fastest config at {shape} as % of {libraries[0]}; bar labels "
                                  "in TFLOP/s."})
    lines = plots.ladder_lines_figure(records, rungs, libraries[0], roof, f"{exp.name}: GFLOP/s by size on {gpu}")
    images.append({"path": plots.save(lines, gpu_dir / f"{exp.name}.png"), "alt": f"{exp.name} by size",
                   "caption": "Square power-of-two shapes as lines; the ragged shapes in their own panel."})
    return images


def experiment_sections(gpu_dir: Path, ceils) -> tuple[list[dict], list, list[str]]:
    """(one section per experiment with a CSV, the roofline points of those that do arithmetic,
    the names of those that count no flops and so have no place on a roofline)."""
    out, points, no_flops = [], [], []
    gpu = gpu_dir.name
    for exp in all_experiments():
        csv_path = gpu_dir / f"{exp.name}.csv"
        if not csv_path.exists():
            continue
        records = read_runs(csv_path)
        gpu = next((r["gpu"] for r in records if r.get("gpu")), gpu)
        title = f"{exp.name}: {exp.title}"
        if exp.bound == "compute":
            images = _ladder(exp, records, ceils, gpu_dir, gpu)
        else:
            fig = plots.memory_figure(records, f"{title} on {gpu}", ceiling_gbps=ceils.copy_gbps if ceils else None)
            images = [{"path": plots.save(fig, gpu_dir / f"{exp.name}.png"), "alt": exp.name}]
        points += roofline.points(exp, records)
        if not exp.flops(roofline.roofline_shape(exp)):
            no_flops.append(exp.name)
        out.append({"title": title, "records": records, "images": images,
                    "notes": best_lines(latest_runs(records), exp.baseline).splitlines(),  # as the README's
                    "provenance": provenance(records).strip("_")})
    return out, points, no_flops


def suite_sections(gpu_dir: Path) -> list[dict]:
    """One section per suite an experiment ran on this card: the best row's % of the vendor library
    against the dimension the suite varies, per group of its shapes (plots.suite_figure)."""
    out = []
    for exp, suite, path in suite_csvs(gpu_dir):
        libraries = list(exp.vendor_baselines())
        if not path.exists() or not libraries:
            continue
        records = latest_in_csv_order(read_suite_runs(path))
        gpu = next((r["gpu"] for r in records if r.get("gpu")), gpu_dir.name)
        varied, points = suite.points(exp)
        fig = plots.suite_figure(records, points, varied, libraries[0],
                                 f"{exp.name} on the {suite.name} suite ({gpu}): best row vs {libraries[0]}")
        out.append({"title": f"{exp.name} on the {suite.name} suite: {suite.title}",
                    "images": [{"path": plots.save(fig, gpu_dir / f"{exp.name}-{suite.name}.png"),
                                "alt": f"{exp.name} {suite.name}",
                                "caption": f"gpulab's best row as % of {libraries[0]} at each shape, one line per "
                                           f"{'/'.join(suite.entries[0].columns) or 'entry'}, against {varied}."}],
                    "notes": [pick_accuracy(records, libraries=tuple(libraries)).line()],
                    "provenance": provenance(records).strip("_")})
    return out


def roofline_section(gpu_dir: Path, ceils, points: list, no_flops: list[str]) -> dict | None:
    roofs = roofline.roofs(ceils)
    if not points or not roofs:
        return None
    gpu = ceils.rows[0].get("gpu") or gpu_dir.name
    shapes = ", ".join(dict.fromkeys(f"{p.experiment} at {p.shape}" for p in points))
    fig = roofline.roofline_figure(points, roofs, f"Roofline on {gpu}: {shapes}")
    notes = list(ROOFLINE_NOTES) + ([] if ceils.l2_gbps else [NO_L2_NOTE])
    if no_flops:
        notes.append(f"Not on it: {', '.join(no_flops)}, which move bytes and count no flops; their GB/s "
                     "against the copy ceiling are in their own sections.")
    return {"title": "Roofline: measured roofs, predicted intensity", "notes": notes,
            "images": [{"path": plots.save(fig, gpu_dir / "roofline.png"), "alt": "roofline"}],
            "provenance": f"roofs from {ceilings_path(gpu_dir)}; intensities from gpulab.model.predict"}


def profile_section(gpu_dir: Path) -> dict | None:
    path = gpu_dir / PROFILE_FILE
    if not path.exists():
        return None
    rows = read_profiles(path)
    if not rows:
        return None
    gpu = rows[0].get("gpu") or gpu_dir.name
    fig = profile_plots.profile_figure(rows, f"Nsight Compute on {gpu}")
    return {"title": "Profiles: Nsight Compute's speed of light and stalls",
            "images": [{"path": plots.save(fig, gpu_dir / "profiles.png"), "alt": "profiles"}],
            "table_html": html.profile_table(rows),
            "provenance": f"{path}, written by gpulab profile on the card ({provenance(rows).strip('_')})"}


def sections(gpu_dir: Path) -> list[dict]:
    """The page's sections (see gpulab.report.html.page), drawing the plots on the way."""
    gpu_dir = Path(gpu_dir)
    ceils = load_ceilings(ceilings_path(gpu_dir))
    out = []
    if ceils is not None:
        out.append({"title": "Ceilings: this card's own limits", "table_html": html.ceilings_table(ceils.rows),
                    "provenance": provenance(ceils.rows).strip("_")})
    experiments, points, no_flops = experiment_sections(gpu_dir, ceils)
    out += experiments + suite_sections(gpu_dir)
    for extra in (roofline_section(gpu_dir, ceils, points, no_flops) if ceils else None, profile_section(gpu_dir)):
        if extra:
            out.append(extra)
    fidelity_csv = gpu_dir / FIDELITY_FILE
    if fidelity_csv.exists():
        out.append({"title": "Predicted before measured: access models vs Nsight Compute",
                    "table_html": html.fidelity_table(read_fidelity(fidelity_csv)), "notes": [FIDELITY_NOTE],
                    "provenance": f"{fidelity_csv}, written by gpulab fidelity on the card"})
    return out


def _card_name(gpu_dir: Path, parts: list[dict]) -> str:
    """'NVIDIA H200 (h200)': the card the records name, and its folder."""
    name = next((r["gpu"] for s in parts for r in s.get("records") or () if r.get("gpu")), None)
    return f"{name} ({gpu_dir.name})" if name else gpu_dir.name


def write(gpu_dir: Path) -> tuple[Path, int] | None:
    """Write results/<gpu>/report.html; (its path, how many plots) or None when there is nothing."""
    parts = sections(gpu_dir)
    if not any(s.get("images") for s in parts) and not any(s.get("records") for s in parts):
        return None
    out = Path(gpu_dir) / "report.html"
    write_atomic(out, html.page(_card_name(Path(gpu_dir), parts), parts))
    return out, sum(len(s.get("images", ())) for s in parts)
