"""Check sgemm v12 (or any variant of any experiment) on the GPU at a few shapes and configs, one
line each: OK / WRONG with the checker's description. Exit 1 when any case is wrong. For the device
scripts, where a hang (a flag never released) must cost only the step's timeout.

    PYTHONPATH=src python3 notebook/probes/stream_k_check.py [--experiment sgemm] [--variant v12] [--exact]
        [--params A=1,B=2 ...] MxNxK ...
"""

from __future__ import annotations

import argparse
import sys
import time

from gpulab.experiments import get_experiment
from gpulab.lab import Lab, LabOptions, RunSpec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shapes", nargs="+", help="MxNxK")
    ap.add_argument("--experiment", default="sgemm")
    ap.add_argument("--variant", default="v12")
    ap.add_argument("--exact", action="store_true", help="small-integer inputs, exact equality")
    ap.add_argument("--params", action="append", default=[], help="NAME=V,NAME=V over the defaults (repeatable)")
    args = ap.parse_args(argv)
    exp = get_experiment(args.experiment)
    variant = exp.variant(args.variant)
    lab = Lab(LabOptions(seed=1234))
    wrong = 0
    for change in args.params or [""]:
        params = variant.default_params() | {k: int(v) for k, v in (kv.split("=") for kv in change.split(",") if kv)}
        for text in args.shapes:
            spec = RunSpec(exp, variant, params, exp.shape(*map(int, text.split("x"))))
            if reason := variant.constraints(params, spec.shape):
                print(f"SKIP {spec.label}: {reason}", flush=True)
                continue
            t0 = time.perf_counter()
            result = lab.verify(spec, exact=args.exact)
            wrong += not result.ok
            grid = variant.launch(params, spec.shape).grid[0]
            print(f"{'OK' if result.ok else 'WRONG'} {spec.label} grid={grid} {time.perf_counter() - t0:.1f}s"
                  f"{'' if result.ok else ': ' + result.describe()}", flush=True)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
