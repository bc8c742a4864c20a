"""One card's report: a plot per experiment and one HTML page, from the CSVs in results/<gpu>/."""

from __future__ import annotations

from pathlib import Path

FIDELITY_NOTE = ("ncu's counts; where the model predicted otherwise, its number below (red: the model is off; "
                 "grey: arbitration noise or DRAM bytes within tolerance; hover for the verdict)")


def sections(gpu_dir: Path) -> list[dict]:
    """The page's sections (see gpulab.report.html.page), drawing each experiment's plot on the way."""
    from gpulab.ceilings import ceilings_path
    from gpulab.ceilings import load as load_ceilings
    from gpulab.experiments import all_experiments
    from gpulab.fidelity import FILE_NAME as FIDELITY_FILE
    from gpulab.records import read_csv
    from gpulab.report import html, plots
    from gpulab.report.markdown import best_lines, provenance

    ceils = load_ceilings(ceilings_path(gpu_dir))
    out = []
    for exp in all_experiments():
        csv_path = gpu_dir / f"{exp.name}.csv"
        if not csv_path.exists():
            continue
        records = read_csv(csv_path)
        title = f"{exp.name}: {exp.title}"
        if exp.bound == "compute":
            png = plots.plot_compute(records, title, gpu_dir / f"{exp.name}.png",
                                     ceiling_gflops=ceils.fma_gflops if ceils else None,
                                     libraries=tuple(exp.vendor_baselines()))
        else:
            png = plots.plot_memory(records, title, gpu_dir / f"{exp.name}.png",
                                    ceiling_gbps=ceils.copy_gbps if ceils else None)
        out.append({"title": title, "records": records, "png": png,
                    "notes": best_lines(records, exp.baseline).splitlines(),
                    "provenance": provenance(records).strip("_")})
    fidelity_csv = gpu_dir / FIDELITY_FILE
    if fidelity_csv.exists():
        out.append({"title": "Predicted before measured: access models vs Nsight Compute",
                    "table_html": html.fidelity_table(read_csv(fidelity_csv)), "notes": [FIDELITY_NOTE],
                    "provenance": f"{fidelity_csv}, written by gpulab fidelity on the card"})
    return out


def write(gpu_dir: Path) -> tuple[Path, int] | None:
    """Write results/<gpu>/report.html; (its path, how many plots) or None when there is nothing."""
    from gpulab.records import write_atomic
    from gpulab.report import html

    parts = sections(gpu_dir)
    if not parts:
        return None
    out = gpu_dir / "report.html"
    write_atomic(out, html.page(gpu_dir.name, parts))
    return out, sum(1 for s in parts if s.get("png"))
