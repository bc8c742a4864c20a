"""Compile a variant's configs on every core before a tune or bench times them (the serial tune
compiles one at a time; the cache then has them all). Usage:
python3 scripts/precompile.py EXPERIMENT VARIANT [-p NAME=V1,V2 ...] [--jobs N]
Each config is compiled as scripts/sass_digest.py compiles it (sm_90, or the variant's sm_90a)."""

import argparse
from concurrent.futures import ProcessPoolExecutor

from gpulab.experiments import get_experiment
from sass_digest import compile_config


def one(job):
    exp_name, variant_name, params = job
    exp = get_experiment(exp_name)
    return params, compile_config(exp, exp.variant(variant_name), params).resources.spill_stores_bytes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("experiment")
    ap.add_argument("variant")
    ap.add_argument("-p", "--param", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=16)
    args = ap.parse_args()
    exp = get_experiment(args.experiment)
    variant = exp.variant(args.variant)
    grid = variant.param_grid({k: tuple(int(x) for x in v.split(",")) for k, v in (p.split("=") for p in args.param)})
    jobs = [(exp.name, variant.name, p) for p in grid if variant.constraints(p, None) is None]
    with ProcessPoolExecutor(args.jobs) as pool:
        for params, spills in pool.map(one, jobs):
            print(variant.params_label(params), "spill bytes", spills)


if __name__ == "__main__":
    main()
