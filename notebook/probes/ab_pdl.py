"""Device probe: a staged TMA rung launched behind its staging copy as a programmatic dependent (what
gpulab does) against the same pair as two ordinary launches, in alternation with cuBLAS, each run
checked. What the overlap of the GEMM's launch and setup with the copy's tail is worth.
Usage: python3 notebook/probes/ab_pdl.py SHAPE [SHAPE ...] --run VARIANT[@FILE][:NAME=V,...] ... [--rounds N]
(--run as in ab_rungs.py)"""

import argparse
import dataclasses
import statistics

from ab_rungs import alternate, parse_run  # scripts/ is on the path of a script run from it

from gpulab.experiments import get_experiment
from gpulab.lab import Lab, LabOptions, RunSpec


def ordinary(variant):
    """The variant with its staging copy's dependent launch turned off: copy, then an ordinary launch."""
    def stage(*args):
        staged = variant.stage(*args)
        return None if staged is None else dataclasses.replace(staged, dependent_launch=False)
    return dataclasses.replace(variant, stage=stage)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="+")
    ap.add_argument("--run", action="append", required=True, help="VARIANT[@FILE][:NAME=V,NAME=V]")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    exp = get_experiment("gemm_bf16")
    lab = Lab(LabOptions(seed=0))
    for shape_text in args.shapes:
        shape = exp.shape(*map(int, shape_text.split("x")))
        specs = {}
        for text in args.run:
            variant, params = parse_run(exp, text)
            specs[f"{text} ordinary"] = RunSpec(exp, ordinary(variant), params, shape)
            specs[f"{text} programmatic"] = RunSpec(exp, variant, params, shape)
        specs["cublas"] = RunSpec(exp, None, {}, shape, library="cublas")
        times = alternate(lab, specs, args.rounds, shape_text)
        med = {label: statistics.median(t) for label, t in times.items()}
        for label in specs:
            print(f"{shape_text} {label}: {med[label] * 1e3:.2f} us, {100 * med['cublas'] / med[label]:.1f}% of cublas "
                  f"(range {min(times[label]) * 1e3:.2f}-{max(times[label]) * 1e3:.2f})", flush=True)


if __name__ == "__main__":
    main()
