"""Compile a variant's configs on every core before a tune or bench times them (the serial tune
compiles one at a time; the cache then has them all). Usage:
python3 scripts/precompile.py EXPERIMENT VARIANT [-p NAME=V1,V2 ...] [--jobs N]
`-p` is read as `gpulab tune --param` reads it. Each config is compiled as scripts/sass_digest.py
compiles it (sm_90, or the variant's sm_90a) into the compile cache (GPULAB_CACHE, else
~/.cache/gpulab); configs the variant's limits rule out are counted, not compiled. Prints each
config's spill bytes; exit 1 if one did not compile, 2 on bad input."""

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor

from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.gpu.compile import cache_dir
from gpulab.run.lab import parse_param_overrides
from sass_digest import compile_config


def plan(experiment: str, variant: str, param_texts: list[str]) -> tuple[list[tuple], list[tuple[dict, str]]]:
    """(the jobs to compile, one per config: (experiment, variant, params)), and the configs the
    variant's limits rule out with the reason. A param the variant lacks, or a value it does not
    accept, is a GpulabError (the search space would change without a word otherwise)."""
    exp = get_experiment(experiment)
    v = exp.variant(variant)
    overrides = parse_param_overrides(param_texts)
    for name in overrides:
        v.param(name)
    jobs, ruled_out = [], []
    for params in v.param_grid(overrides):
        reason = v.constraints(params, None)
        if reason is None:
            jobs.append((exp.name, v.name, params))
        else:
            ruled_out.append((params, reason))
    return jobs, ruled_out


def one(job):
    """(params label, spill bytes, None), or (params label, None, why it did not compile)."""
    exp_name, variant_name, params = job
    exp = get_experiment(exp_name)
    variant = exp.variant(variant_name)
    try:
        spills = compile_config(exp, variant, params).resources.spill_stores_bytes
    except GpulabError as exc:
        return variant.params_label(params), None, str(exc).splitlines()[0]
    return variant.params_label(params), spills, None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiment")
    ap.add_argument("variant")
    ap.add_argument("-p", "--param", action="append", default=[], help="NAME=V1,V2 (repeatable), as for gpulab tune")
    ap.add_argument("--jobs", type=int, default=16, help="compile processes at once")
    args = ap.parse_args(argv)
    try:
        if args.jobs < 1:
            raise GpulabError("--jobs must be at least 1")
        jobs, ruled_out = plan(args.experiment, args.variant, args.param)
        cache = cache_dir()
    except GpulabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    failed = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        for label, spills, error in pool.map(one, jobs):
            if error is None:
                print(label, "spill bytes", spills, flush=True)
            else:
                failed += 1
                print(f"{label} did not compile: {error}", flush=True)
    why = f" (e.g. {ruled_out[0][1]})" if ruled_out else ""
    print(f"{len(jobs) - failed} of {len(jobs)} configs compiled into {cache}; "
          f"{len(ruled_out)} ruled out by the variant's limits{why}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
