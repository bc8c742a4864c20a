"""Device probe: TMA rungs timed in alternation with the vendor baselines, each run once per round
under every L2 promotion asked for (the bytes L2 fetches for a TMA request that misses,
gpulab.gpu.tma.L2_PROMOTION_BYTES, set before each run builds its tensor maps).
Usage: python3 notebook/probes/ab_promotion.py SHAPE [SHAPE ...] --run VARIANT[:NAME=V,...] ...
       [--promotions 256,128,64,0] [--rounds N]"""

import argparse
import statistics

from ab_rungs import parse_run  # scripts/ is this script's own folder, first on sys.path

from gpulab.experiments import get_experiment
from gpulab.gpu import tma
from gpulab.lab import Lab, LabOptions, RunSpec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="+")
    ap.add_argument("--run", action="append", required=True, help="VARIANT[:NAME=V,NAME=V]")
    ap.add_argument("--promotions", default="256,128,64,0")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    exp = get_experiment("gemm_bf16")
    promotions = [int(p) for p in args.promotions.split(",")]
    library = next(iter(exp.vendor_baselines()))
    lab = Lab(LabOptions(seed=0))
    for shape_text in args.shapes:
        shape = exp.shape(*map(int, shape_text.split("x")))
        runs = {(text, p): RunSpec(exp, *parse_run(exp, text), shape) for text in args.run for p in promotions}
        vendor = RunSpec(exp, None, {}, shape, library=library)
        times = {key: [] for key in [*runs, library]}
        for _ in range(args.rounds):
            for (text, p), spec in runs.items():
                tma.L2_PROMOTION_BYTES = p
                record = lab.execute(spec)
                if record.get("skip_reason"):
                    raise SystemExit(f"{text} {shape_text}: {record['skip_reason']}")
                times[text, p].append(record["time_ms"])
            times[library].append(lab.execute(vendor)["time_ms"])
        med = {key: statistics.median(t) for key, t in times.items()}
        for key, t in times.items():
            label = f"{key[0]} promotion {key[1]}" if isinstance(key, tuple) else key
            print(f"{shape_text} {label}: {med[key] * 1e3:.1f} us, {100 * med[library] / med[key]:.1f}% of "
                  f"{library} (range {min(t) * 1e3:.1f}-{max(t) * 1e3:.1f})", flush=True)


if __name__ == "__main__":
    main()
