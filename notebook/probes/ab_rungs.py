"""Device probe: several variants (each at a config of its own) timed in alternation, round after
round, each run checked, with the experiment's vendor baselines in every round too; so that a
difference of a percent between rungs is not lost in the card's drift from one minute to the next.
Prints, per shape, each run's median time and its median as % of the first vendor baseline's.
Usage: python3 notebook/probes/ab_rungs.py EXPERIMENT SHAPE [SHAPE ...] --run VARIANT[@FILE][:NAME=V,NAME=V] ...
       [--rounds N]   (a --run without params takes the variant's defaults; @FILE times another source
       of the variant: a path such as notebook/patches/t4_nx.cu, or the name of a .cu file beside its own)"""

import argparse
import dataclasses
import statistics
from pathlib import Path

from gpulab.experiments import get_experiment
from gpulab.lab import Lab, LabOptions, RunSpec


def alternate(lab: Lab, specs: dict[str, RunSpec], rounds: int, shape_text: str) -> dict[str, list[float]]:
    """Each run of `specs` once per round, in order, for `rounds` rounds: its checked times (ms).
    Exits with the reason where a run is skipped (a config the shape rejects, say)."""
    times = {label: [] for label in specs}
    for _ in range(rounds):
        for label, spec in specs.items():
            record = lab.execute(spec)
            if record.get("skip_reason"):
                raise SystemExit(f"{label} {shape_text}: {record['skip_reason']}")
            times[label].append(record["time_ms"])
    return times


def parse_run(exp, text: str):
    """A --run's VARIANT[@FILE][:NAME=V,NAME=V]: the variant (another source with @FILE: a path such
    as notebook/patches/x.cu, or the name of a .cu file beside its own) and its params over the defaults."""
    name, _, given = text.partition(":")
    name, _, source = name.partition("@")
    variant = exp.variant(name)
    if source:
        path = Path(source).resolve() if "/" in source else exp.source(variant).with_name(source)
        variant = dataclasses.replace(variant, file=str(path))
    params = variant.default_params() | {k: int(v) for k, v in (kv.split("=") for kv in given.split(",") if kv)}
    return variant, params


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("experiment")
    ap.add_argument("shapes", nargs="+")
    ap.add_argument("--run", action="append", required=True, help="VARIANT[@FILE][:NAME=V,NAME=V]")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    exp = get_experiment(args.experiment)
    runs = {text: parse_run(exp, text) for text in args.run}
    libraries = list(exp.vendor_baselines())
    lab = Lab(LabOptions(seed=0))
    for shape_text in args.shapes:
        shape = exp.shape(*map(int, shape_text.split("x")))
        specs = {label: RunSpec(exp, v, p, shape) for label, (v, p) in runs.items()}
        specs |= {lib: RunSpec(exp, None, {}, shape, library=lib) for lib in libraries}
        times = alternate(lab, specs, args.rounds, shape_text)
        med = {label: statistics.median(t) for label, t in times.items()}
        base = med[libraries[0]]
        for label in specs:
            print(f"{shape_text} {label}: {med[label] * 1e3:.1f} us, {100 * base / med[label]:.1f}% of "
                  f"{libraries[0]} (range {min(times[label]) * 1e3:.1f}-{max(times[label]) * 1e3:.1f})", flush=True)


if __name__ == "__main__":
    main()
