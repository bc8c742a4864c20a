"""Which of t4's launches racecheck faults on, in clusters of two: the same kernel, at shapes that
take staging and the launch behind the copy (programmatic dependent launch) apart.

    python3 notebook/probes/probe_t4_racecheck.py              # every case under racecheck, a table
    python3 notebook/probes/probe_t4_racecheck.py --tool none  # the same runs checked without a tool

`gpulab sanitize` found t4 and v14 in clusters of two stopping racecheck with "Internal Sanitizer
Error" at its sanitize shape, 17x33x65, where K % 8 != 0: A and Bt are first copied into padded
buffers, and a GEMM of one round is launched behind that copy (tma_rungs.staged_in). Clusters of one,
at the same shape, were clean; and every cluster operation of t4, alone in a small kernel, was clean
(probe_cluster_sanitizer.py). The cases here keep the kernel and change one thing at a time:

    17x33x65     staged, launched behind the copy   (the shape that faulted)
    17x33x64     not staged, a plain launch         (K aligned: no copy)
    17x33x128    not staged, two k-tiles as above   (the staged K = 72 is two k-tiles too)
    17408x33x65  staged, a plain launch             (68 cluster tiles for 66 clusters: not one round)
    17408x33x64  not staged, several rounds         (slots and barrier phases reused across tiles)
    17x33x72     not staged, K ends inside a k-tile (its boxes clipped at K, as the staged K = 72's are)
    17x33x8      not staged, one k-tile, clipped at K
    and 17x33x65 in clusters of one                 (clean before: the reference)

Needs an sm_90 card. Each case is one check of gpulab's own (the value check), under the tool, as
`gpulab sanitize` runs it (gpulab.sanitize.sanitize_one); the table gives the tool's verdict, its
first report, and the check's own values.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16 import staging, tma_rungs
from gpulab.lab import RunSpec
from gpulab.sanitize import find_sanitizer, sanitize_one

SHAPES = ((17, 33, 65), (17, 33, 64), (17, 33, 128), (17408, 33, 65), (17408, 33, 64), (17, 33, 72), (17, 33, 8))


def cases():
    exp = get_experiment("gemm_bf16")
    t4 = exp.variant("t4")
    base = t4.default_params()
    for m, n, k in SHAPES:
        yield RunSpec(exp, t4, base | {"CLUSTER": 2}, exp.shape(m, n, k))
    yield RunSpec(exp, t4, base | {"CLUSTER": 1}, exp.shape(17, 33, 65))


def how_launched(spec: RunSpec) -> str:
    shape, params = spec.shape, spec.params
    if not staging.needs_staging(shape["K"]):
        return "plain"
    return "behind copy" if tma_rungs.t4_one_round(params, shape) else "staged, plain"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", default="racecheck", help="racecheck (default), memcheck, synccheck, or none")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    args = parser.parse_args()
    sanitizer = find_sanitizer()
    print(f"{'case':<30} {'launch':<14} {'verdict':<10} {'errors':>6}  first report / values")
    worst = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, spec in enumerate(cases()):
            label = f"CLUSTER={spec.params['CLUSTER']} {spec.shape.label}"
            if args.tool == "none":
                from gpulab.lab import Lab, LabOptions
                result = Lab(LabOptions(seed=0)).verify(spec)
                print(f"{label:<30} {how_launched(spec):<14} {'ok' if result.ok else 'WRONG':<10} {'':>6}  {result.describe()}")
                worst = max(worst, 0 if result.ok else 1)
                continue
            row = sanitize_one(sanitizer, spec, args.tool, Path(tmp) / str(i), timeout_s=args.timeout)
            first = (row.get("first_report") or "").replace("\n", " ")[:90]
            print(f"{label:<30} {how_launched(spec):<14} {row['verdict']:<10} {str(row['errors']):>6}  "
                  f"{first} | {row.get('checked_values', '')}", flush=True)
    return worst


if __name__ == "__main__":
    sys.exit(main())
