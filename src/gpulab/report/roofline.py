"""A roofline per card, from measured ceilings only, with each rung where the access model puts it.

The roofs (results/<gpu>/ceilings.csv, nothing from a datasheet):
  FP32 FMA     fma_fp32, gpulab's FFMA kernel
  tensor TF32  tensor_tf32, gpulab's TF32 wgmma kernel (sm_90), else the faster cublas_tf32_N: the
               tensor-core rate cuBLAS reached on this card, where measured
  tensor BF16  tensor_bf16, gpulab's tensor-core kernel (wgmma on sm_90, mma.sync on sm_80-89; where measured)
  DRAM         the best copy (bytes read + written per second)
  L2           l2_read, gpulab's read kernel over a buffer that fits in L2, where measured (older
               ceilings.csv files lack it: the line is left out, never guessed)

The points: each rung of an experiment that does arithmetic (flops > 0), at its headline shape (its
first default shape when it has none), its fastest correct config there, at its measured GFLOP/s.
Its arithmetic intensity comes from gpulab.model.predict, twice:
  filled marker  flops / the global bytes the model says the kernel asks of L1TEX (its load and store
                 sectors x 32 B). Each of those sectors that misses L1 is a request to L2, so this is
                 the intensity against L2 when L1 catches nothing: read it against the L2 roof.
  hollow marker  flops / the compulsory DRAM bytes (each input read once, the output written once,
                 and any pass over an input the L2 cannot keep that the access model counts:
                 ks's over Bt): read it against the DRAM roof. Rungs that count no such pass
                 share it at one shape.
A thin line joins a rung's two markers. The further right the filled marker, the more reuse the
kernel found on chip (shared memory, registers) before asking L1TEX. A rung whose global traffic is
all TMA (gemm_bf16's t4 and sgemm's v14, whose C leaves by TMA stores) asks L1TEX for nothing and
has no point: its boxes go from L2 to shared memory past L1TEX. t2 and t3 store C from registers, so
their filled marker counts those stores alone.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from gpulab.model.predict import check_launch, predict
from gpulab.params import parse_params_label
from gpulab.report.plots import CEILING_COLOUR, best_per_rung, plt, series_style

TENSOR_ROOF_COLOURS = ("#7030a0", "#2e8b57")  # TF32, BF16


@dataclasses.dataclass(frozen=True)
class Roof:
    name: str  # what the legend says
    kind: str  # 'compute' (GFLOP/s) or 'bandwidth' (GB/s)
    value: float


@dataclasses.dataclass(frozen=True)
class Point:
    experiment: str
    variant: str
    params: str
    shape: str
    gflops: float
    l1_intensity: float  # flop per byte the kernel asks of L1TEX
    dram_intensity: float  # flop per compulsory DRAM byte


def roofs(ceilings) -> list[Roof]:
    """The roofs a gpulab.records.ceilings.Ceilings holds (an L2 or tensor line only where measured)."""
    out = []
    if ceilings is None:
        return out
    if ceilings.fma_gflops:
        out.append(Roof(f"FP32 FMA {ceilings.fma_gflops / 1e3:,.1f} TFLOP/s", "compute", ceilings.fma_gflops))
    tf32 = ceilings.row("tensor_tf32") if hasattr(ceilings, "row") else None
    tensor = [r for r in ceilings.rows if str(r.get("ceiling", "")).startswith("cublas_tf32") and r.get("gflops")]
    if tf32 and tf32.get("gflops"):  # gpulab's own TF32 kernel, where measured (sm_90), over cuBLAS's rate
        how = str(tf32.get("instruction") or "wgmma").split()[0]
        out.append(Roof(f"TF32 tensor ({how}) {tf32['gflops'] / 1e3:,.0f} TFLOP/s", "compute", tf32["gflops"]))
    elif tensor:
        best = max(tensor, key=lambda r: r["gflops"])
        out.append(Roof(f"TF32 tensor (cuBLAS, {best['ceiling'].rsplit('_', 1)[-1]}^3) "
                        f"{best['gflops'] / 1e3:,.0f} TFLOP/s", "compute", best["gflops"]))
    bf16 = ceilings.row("tensor_bf16") if hasattr(ceilings, "row") else None
    if bf16 and bf16.get("gflops"):
        how = str(bf16.get("instruction") or "mma.sync").split()[0]  # files from before the column: mma.sync
        out.append(Roof(f"BF16 tensor ({how}) {bf16['gflops'] / 1e3:,.0f} TFLOP/s", "compute", bf16["gflops"]))
    if ceilings.copy_gbps:
        out.append(Roof(f"DRAM copy {ceilings.copy_gbps / 1e3:,.2f} TB/s", "bandwidth", ceilings.copy_gbps))
    l2 = ceilings.l2_gbps if hasattr(ceilings, "l2_gbps") else None
    if l2:
        out.append(Roof(f"L2 read {l2 / 1e3:,.1f} TB/s", "bandwidth", l2))
    return out


def roofline_shape(exp):
    """The shape an experiment's points are read at: its headline shape, else its first default."""
    return exp.shape(*exp.headline_shape) if exp.headline_shape else exp.default_shape_list()[0]


def points(exp, records: list[dict]) -> list[Point]:
    """One point per rung (Variant.rung) with an access model and a correct timed record at the roofline shape."""
    shape = roofline_shape(exp)
    if not exp.flops(shape):
        return []
    best = best_per_rung(records, shape.label)
    out = []
    for v in (v for v in exp.variants if v.rung):
        r = best.get(v.name)
        if r is None or v.access is None or not r.get("gflops"):
            continue
        params = parse_params_label(r.get("params"))
        model = v.access(params, shape)
        check_launch(model, v.launch(params, shape))
        p = predict(model)
        l1_bytes = p["l1tex_global_load_bytes"] + p["l1tex_global_store_bytes"]
        if not l1_bytes or not p["dram_compulsory_bytes"]:
            continue
        out.append(Point(exp.name, v.name, r.get("params") or "", shape.label, float(r["gflops"]),
                         p["flops"] / l1_bytes, p["flops"] / p["dram_compulsory_bytes"]))
    return out


def label_groups(all_points: list[Point], close: float = 1.15) -> dict[tuple[float, float], list[str]]:
    """One label per cluster of filled markers: points at the same intensity whose rates are within
    a factor `close` share one label ('v6, v7, v8') at the first one, so no two labels overlap."""
    groups: dict[tuple[float, float], list[str]] = {}
    for p in sorted(all_points, key=lambda p: (p.l1_intensity, p.gflops)):
        key = next((k for k in groups if abs(k[0] / p.l1_intensity - 1) < 0.02 and p.gflops / k[1] < close), None)
        groups.setdefault(key or (p.l1_intensity, p.gflops), []).append(p.variant)
    order = {p.variant: i for i, p in enumerate(all_points)}
    return {k: sorted(v, key=order.get) for k, v in groups.items()}


def roofline_figure(all_points: list[Point], roof_list: list[Roof], title: str):
    """Log-log: the roofs as lines, each point labelled with its rung."""
    fig, ax = plt.subplots(figsize=(10, 6), dpi=110)
    xs = [x for p in all_points for x in (p.l1_intensity, p.dram_intensity)]
    lo = min(xs + [1.0]) / 4
    hi = max(xs + [100.0]) * 4
    x = np.geomspace(lo, hi, 200)
    compute = [r for r in roof_list if r.kind == "compute"]
    top = max((r.value for r in compute), default=None)
    for i, r in enumerate(compute):  # the FMA roof solid red; each tensor roof dash-dot, a colour each
        colour = CEILING_COLOUR if i == 0 else TENSOR_ROOF_COLOURS[(i - 1) % len(TENSOR_ROOF_COLOURS)]
        ax.axhline(r.value, color=colour, linestyle="-" if i == 0 else "-.", linewidth=1.8, label=r.name)
    for r, style in zip((r for r in roof_list if r.kind == "bandwidth"), ("--", (0, (6, 2, 1, 2)))):
        y = r.value * x  # GB/s x flop/B = GFLOP/s
        if top:
            y = np.minimum(y, top)
        ax.plot(x, y, color="#404040" if "DRAM" in r.name else "#2060c0", linestyle=style, linewidth=1.6,
                label=r.name)
    experiments = list(dict.fromkeys(p.experiment for p in all_points))
    for i, p in enumerate(all_points):
        style = series_style(i)
        ax.plot([p.l1_intensity, p.dram_intensity], [p.gflops, p.gflops], color=style["color"], linewidth=0.7,
                alpha=0.6)
        ax.plot(p.l1_intensity, p.gflops, linestyle="none", markersize=8, markeredgecolor="black",
                markeredgewidth=0.5, label=f"{p.variant}" if len(experiments) == 1 else f"{p.experiment} {p.variant}",
                **style)
        ax.plot(p.dram_intensity, p.gflops, linestyle="none", markersize=7, markerfacecolor="none",
                color=style["color"], marker=style["marker"])
    for (x0, y0), names in label_groups(all_points).items():
        ax.annotate(", ".join(names), (x0, y0), xytext=(7, -3), textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ys = [p.gflops for p in all_points] + [r.value for r in compute]
    ax.set_ylim(max(min(ys) / 3, 1.0), max(ys) * 2)
    ax.set_xlabel("arithmetic intensity (flop per byte, predicted by the access model)")
    ax.set_ylabel("GFLOP/s (measured)")
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
              title="filled: flop per L1TEX byte\nhollow: per compulsory DRAM byte", title_fontsize=8)
    fig.tight_layout()
    return fig
