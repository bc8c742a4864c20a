"""Device probe: two sources of one variant timed alternately (A, B, A, B, ...), each run checked,
so a change worth a percent is not lost in run-to-run drift; cuBLAS (the experiment's baseline) in
every round too (its vendor libraries). Prints the median time of each per shape, and B against A.
Usage: python3 notebook/probes/ab_variant.py EXPERIMENT VARIANT A.cu SHAPE [SHAPE ...] [--rounds N]
(B is the variant's own file; A.cu must sit beside it, for its includes.)"""

import argparse
import dataclasses
import statistics
from pathlib import Path

from ab_rungs import alternate  # scripts/ is on the path of a script run from it

from gpulab.experiments import get_experiment
from gpulab.lab import Lab, LabOptions, RunSpec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("experiment")
    ap.add_argument("variant")
    ap.add_argument("a_source", type=Path)
    ap.add_argument("shapes", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    exp = get_experiment(args.experiment)
    b = exp.variant(args.variant)
    a = dataclasses.replace(b, file=str(args.a_source.resolve()))
    lab = Lab(LabOptions(seed=0))
    for text in args.shapes:
        shape = exp.shape(*map(int, text.split("x")))
        params = b.default_params()
        runs = {"A": RunSpec(exp, a, params, shape), "B": RunSpec(exp, b, params, shape),
                **{lib: RunSpec(exp, None, {}, shape, library=lib) for lib in exp.vendor_baselines()}}
        times = alternate(lab, runs, args.rounds, text)
        med = {name: statistics.median(t) for name, t in times.items()}
        libs = ", ".join(f"{lib} {med[lib] * 1e3:.1f} us (A {100 * med[lib] / med['A']:.1f}%, "
                         f"B {100 * med[lib] / med['B']:.1f}% of it)" for lib in exp.vendor_baselines())
        print(f"{text}: A {med['A'] * 1e3:.1f} us, B {med['B'] * 1e3:.1f} us (B/A {med['B'] / med['A']:.4f}); "
              f"{libs}; B faster in {sum(tb < ta for ta, tb in zip(times['A'], times['B']))} of {args.rounds} "
              "rounds", flush=True)


if __name__ == "__main__":
    main()
