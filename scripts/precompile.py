"""Compile a variant's configs on every core before a tune or bench times them (the serial tune
compiles one at a time; the cache then has them all). Usage:
python3 scripts/precompile.py EXPERIMENT VARIANT [-p NAME=V1,V2 ...] [--jobs N] [--arch sm_90]"""

import argparse
from concurrent.futures import ProcessPoolExecutor

from gpulab.experiments import get_experiment
from gpulab.gpu.compile import DEFAULT_ARCH, compile_kernel


def one(job):
    exp_name, variant_name, params, arch = job
    exp = get_experiment(exp_name)
    variant = exp.variant(variant_name)
    r = compile_kernel(exp.source(variant), exp.entry, params, variant.compile_arch(arch)).resources
    return params, r.spill_stores_bytes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("experiment")
    ap.add_argument("variant")
    ap.add_argument("-p", "--param", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--arch", default=DEFAULT_ARCH, help="the card's (sm_90: H100, H200)")
    args = ap.parse_args()
    exp = get_experiment(args.experiment)
    variant = exp.variant(args.variant)
    grid = variant.param_grid({k: tuple(int(x) for x in v.split(",")) for k, v in (p.split("=") for p in args.param)})
    jobs = [(exp.name, variant.name, p, args.arch) for p in grid if variant.constraints(p, None) is None]
    with ProcessPoolExecutor(args.jobs) as pool:
        for params, spills in pool.map(one, jobs):
            print(variant.params_label(params), "spill bytes", spills)


if __name__ == "__main__":
    main()
