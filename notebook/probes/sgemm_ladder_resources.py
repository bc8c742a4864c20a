"""Compile the SGEMM ladder's configs for sm_90 and tabulate what ptxas reports (no GPU needed).

For each rung v2.. and each config of a param grid, it records the constraint verdict, the
register estimate the constraint used against the cap __launch_bounds__ leaves, and the compiled
registers, shared memory and spills. Its use: calibrating the register estimates in
gpulab/experiments/sgemm/*/launch.py (an accepted config must never spill) and seeing the
resources of every rung at a glance.

    PYTHONPATH=src python notebook/probes/sgemm_ladder_resources.py [--rungs v8,v9] [--full] [--jobs 2]
        [--include-rejected] [--out ladder_resources.csv]

Without --full each rung's grid is its defaults with one param varied at a time; --full takes
the product of every param's choices (GROUP_M fixed at its default: it changes no resource).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.experiments.sgemm.ladder import launch as ladder_launch
from gpulab.experiments.sgemm.skinny import launch as skinny_launch
from gpulab.experiments.sgemm.splitk import launch as splitk_launch
from gpulab.gpu.compile import compile_kernel

LADDER = [v for v in SGEMM.variants if v.name not in ("v0", "v1")]
FIXED = {"GROUP_M": 8}


def configs(variant, full: bool) -> list[dict]:
    defaults = variant.default_params()
    if full:
        axes = [
            [(p.name, FIXED[p.name])] if p.name in FIXED else [(p.name, c) for c in p.choices]
            for p in variant.params
        ]
        return [dict(combo) for combo in itertools.product(*axes)]
    out = [defaults]
    for p in variant.params:
        for c in p.choices:
            if c != defaults[p.name] and p.name not in FIXED:
                out.append(defaults | {p.name: c})
    return out


def verdicts(variant, params: dict) -> tuple[str | None, str | None]:
    """(structural reason, register reason): the constraint with and without its register check."""
    full = variant.constraints(params, None)
    modules = (ladder_launch, skinny_launch, splitk_launch)  # where the constraints call check_regs
    real = [m.check_regs for m in modules]
    for m in modules:
        m.check_regs = lambda *a, **k: None
    try:
        structural = variant.constraints(params, None)
    finally:
        for m, f in zip(modules, real):
            m.check_regs = f
    return structural, (full if full and not structural else None)


def compile_one(job: tuple[str, dict]) -> dict:
    name, params = job
    variant = SGEMM.variant(name)
    try:
        r = compile_kernel(SGEMM.source(variant), SGEMM.entry, params).resources
    except Exception as exc:  # a compile error is a finding too
        return {"error": str(exc).splitlines()[0][:200]}
    return {
        "regs": r.registers,
        "smem_static": r.smem_static_bytes,
        "spill_stores": r.spill_stores_bytes,
        "spill_loads": r.spill_loads_bytes,
        "stack": r.stack_frame_bytes,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rungs", default=",".join(v.name for v in LADDER))
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--include-rejected", action="store_true",
                    help="also compile configs rejected only by the register estimate")
    ap.add_argument("--fix", default="", help="params held at one value, e.g. STAGES=3,MINB=2")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    FIXED.update({k: int(v) for k, v in (kv.split("=") for kv in args.fix.split(",") if kv)})

    rows, jobs = [], []
    for name in args.rungs.split(","):
        variant = SGEMM.variant(name)
        seen = set()
        for params in configs(variant, args.full):
            key = tuple(sorted(params.items()))
            if key in seen:
                continue
            seen.add(key)
            structural, regs_reason = verdicts(variant, params)
            row = {"rung": name, "params": variant.params_label(params),
                   "accepted": not (structural or regs_reason), "reason": structural or regs_reason or ""}
            rows.append(row)
            if not structural and (not regs_reason or args.include_rejected):
                jobs.append((len(rows) - 1, (name, params)))

    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for (i, _), result in zip(jobs, pool.map(compile_one, [j for _, j in jobs])):
            rows[i].update(result)

    bad = [r for r in rows if r["accepted"] and (r.get("spill_stores") or r.get("error"))]
    fields = ["rung", "params", "accepted", "regs", "smem_static", "spill_stores", "spill_loads", "stack",
              "error", "reason"]
    if args.out:
        with args.out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
    for r in rows:
        if "regs" in r or "error" in r:
            flag = "ACCEPTED-BUT-SPILLS" if r in bad else ("ok" if r["accepted"] else "rejected")
            print(f"{r['rung']:3} {flag:19} regs={r.get('regs', '-'):>3} spill={r.get('spill_stores', '-'):>4} "
                  f"smem={r.get('smem_static', '-'):>6} {r['params']} {r.get('error', '')}")
    print(f"{len(rows)} configs, {sum(r['accepted'] for r in rows)} accepted, {len(jobs)} compiled, "
          f"{len(bad)} accepted that spill or fail")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
