"""Device probe: which kernels the vendor library runs for an experiment's baseline, and how they use
the SM, beside one of gpulab's variants at the same shape. Under Nsight Compute, each run is a child
process that launches only what is asked (inputs copied from the host, no reference check), so every
profiled kernel is the one of interest. Prints one line per kernel: name, grid, block, cluster,
registers, shared memory, duration, SM clock, issue slots busy, instructions, FFMA/HMMA counts and the
four largest stall reasons (warps stalled per issue-active cycle, as `gpulab profile` reports them).
Usage: python3 scripts/probe_vendor_kernels.py EXPERIMENT SHAPE [SHAPE ...] [--run VARIANT[:NAME=V,...]]
       [--csv FILE] [--metric NAME ...]   (the vendor baseline is always profiled; each --run adds a variant at its config;
       --csv upserts one row per kernel, keyed by experiment, shape, run and kernel, with the card and
       versions)"""

import argparse
import csv
import io
import json
import math
import subprocess
import sys

import numpy as np

from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.gpu.ncu import find_ncu
from gpulab.quantities import STALL_REASONS, stall_metric
from gpulab.records import upsert
from gpulab.run.args import parse_variant_arg

METRICS = [
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "launch__grid_size", "launch__block_size",
    "launch__cluster_dim_x", "launch__registers_per_thread", "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_static", "launch__occupancy_limit_registers", "launch__occupancy_limit_shared_mem",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "smsp__inst_executed.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__inst_executed_pipe_fma.sum",
    "sm__inst_executed_pipe_lsu.sum", "smsp__inst_executed_op_shared_ld.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum", "lts__t_bytes.sum",
]
# Warps stalled per issue-active cycle, by reason: the metric and reasons `gpulab profile` reads.
METRICS += [stall_metric(reason) for reason in STALL_REASONS]


def child(experiment: str, shape_text: str, run: str | None) -> None:
    from gpulab.run.lab import Lab, LabOptions, RunSpec
    exp = get_experiment(experiment)
    shape = exp.parse_shape(shape_text)
    if run is None:
        import cupy as cp
        inputs = exp.make_inputs(shape, np.random.default_rng(0), False)
        inputs = {k: cp.asarray(v) for k, v in inputs.items()}
        out = exp.output(shape, cp)
        baseline = next(iter(exp.vendor_baselines().values()))
        for _ in range(2):
            baseline(inputs, out, shape)
        cp.cuda.Device().synchronize()
        return
    name, given = parse_variant_arg(run)
    variant = exp.variant(name)
    lab = Lab(LabOptions(seed=0, check=False))
    lab.execute(RunSpec(exp, variant, variant.default_params() | given, shape))


def profile(experiment: str, shape_text: str, run: str | None, extra: tuple[str, ...] = ()) -> list[dict]:
    cmd = [find_ncu(), "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
           "--metrics", ",".join(METRICS + list(extra))]
    if run is not None:  # the lab times many launches: one of the variant's own kernel is enough
        cmd += ["--kernel-name", "regex:^(sgemm|gemm|kernel)", "--launch-skip", "3", "--launch-count", "1"]
    cmd += [sys.executable, __file__, "--child", experiment, shape_text] + ([run] if run else [])
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lines = [l for l in res.stdout.splitlines() if l.startswith('"')]
    if not lines:
        raise SystemExit(f"ncu gave no rows (rc {res.returncode}): {res.stderr[-600:]} {res.stdout[-600:]}")
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    # CuPy's own kernels (preparing the inputs) are not the library's.
    return [r for r in rows if r.get("ID", "").strip().isdigit() and not r.get("Kernel Name", "").startswith("cupy_")]


def _number(cell: str) -> float:
    """ncu's raw page writes thousands separators; nan where a metric is missing."""
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return float("nan")


def summary(row: dict) -> dict:
    """One kernel's line; a metric ncu left out reads nan (a count None), never a crash."""
    def num(key):
        return _number(row.get(key, "nan"))

    def count(*keys):
        value = sum(num(key) for key in keys)
        return None if math.isnan(value) else int(value)
    stalls = sorted(((num(stall_metric(reason)), reason) for reason in STALL_REASONS), reverse=True)
    return {
        "kernel": row.get("Kernel Name", "")[:110], "grid": count("launch__grid_size"), "block": count("launch__block_size"),
        "cluster": row.get("launch__cluster_dim_x"), "regs": count("launch__registers_per_thread"),
        "smem": count("launch__shared_mem_per_block_dynamic", "launch__shared_mem_per_block_static"),
        "us": round(num("gpu__time_duration.sum") / 1e3, 1), "mhz": round(num("sm__cycles_elapsed.avg.per_second") / 1e6),
        "warps_active_pct": round(num("sm__warps_active.avg.pct_of_peak_sustained_active"), 1),
        "issue_pct": round(num("smsp__issue_active.avg.pct_of_peak_sustained_active"), 1),
        "sm_pct": round(num("sm__throughput.avg.pct_of_peak_sustained_elapsed"), 1),
        "inst": count("smsp__inst_executed.sum"), "fma_pipe_inst": count("sm__inst_executed_pipe_fma.sum"),
        "ffma_thread": count("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
        "lsu_inst": count("sm__inst_executed_pipe_lsu.sum"), "lds_inst": count("smsp__inst_executed_op_shared_ld.sum"),
        "dram_mb": round(num("dram__bytes_read.sum") / 1e6, 1), "l2_mb": round(num("lts__t_bytes.sum") / 1e6, 1),
        "top_stalls": " ".join(f"{s}={v:.3g}" for v, s in stalls[:4]),
    }


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("experiment")
    ap.add_argument("shapes", nargs="+")
    ap.add_argument("--run", action="append", default=[])
    ap.add_argument("--csv", help="upsert the rows into this CSV")
    ap.add_argument("--metric", action="append", default=[], help="another ncu metric to print (repeatable)")
    args = ap.parse_args()
    try:
        run(args)
    except GpulabError as exc:  # no ncu, a bad shape, a damaged CSV: one line, nothing overwritten
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


def run(args) -> None:
    # What the profiled child will be asked to run, checked here first: a bad name or shape is one
    # line now, not an empty capture after ncu has started.
    exp = get_experiment(args.experiment)
    for shape_text in args.shapes:
        exp.parse_shape(shape_text)
    for text in args.run:
        exp.variant(parse_variant_arg(text)[0])
    out = []
    for shape_text in args.shapes:
        for run in [None] + args.run:
            for row in profile(args.experiment, shape_text, run, tuple(args.metric)):
                record = {"experiment": args.experiment, "shape": shape_text, "run": run or "vendor"} | summary(row)
                record |= {m: _number(row.get(m, "")) for m in args.metric}
                print(json.dumps(record), flush=True)
                out.append(record)
    if args.csv and out:
        env = _card_environment()
        key = lambda r: (r["experiment"], r["shape"], r["run"], r["kernel"])  # noqa: E731
        last = {key(r): r for r in out}  # the baseline runs twice (the first call warms it up): keep the second
        upsert(args.csv, [r | env for r in last.values()], key=key, required=("experiment", "shape", "run", "kernel"))


def _card_environment() -> dict:
    from gpulab.run.lab import Lab
    return Lab().env


if __name__ == "__main__":
    main()
