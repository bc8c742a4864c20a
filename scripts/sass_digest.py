"""Fingerprint the compiled kernels, to show that an edit of the sources changed no machine code.

For every variant of every experiment it compiles (NVRTC, no GPU needed; sm_90, or sm_90a for the
Hopper rungs, as the lab does) the defaults, each param moved to each other choice one at a time,
and the configs tuned on the card
(results/h200/tuned.json), and records per config the ptxas resources and a hash of the SASS
(cuobjdump -sass, which needs cuobjdump and nvdisasm on PATH: pip download nvidia-cuda-cuobjdump
nvidia-cuda-nvdisasm and unpack the wheels). Take a fingerprint before the edit, one after, and
compare:

    PYTHONPATH=src python scripts/sass_digest.py --out before.json
    PYTHONPATH=src python scripts/sass_digest.py --out after.json --compare before.json

Configs a rung's constraints reject are left out (they never run). Exit 1 when anything differs or
a config did not compile (then it has no SASS to compare).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
from collections import Counter
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.experiments import all_experiments, get_experiment
from gpulab.files import write_atomic
from gpulab.gpu.compile import DEFAULT_ARCH, compile_kernel

TUNED = Path(__file__).resolve().parent.parent / "results" / "h200" / "tuned.json"


def configs(exp, variant) -> list[dict]:
    """Defaults, one param moved at a time, and the configs tuned for this variant on the card."""
    base = variant.default_params()
    out = [base] + [base | {p.name: c} for p in variant.params for c in p.choices if c != base[p.name]]
    if TUNED.exists():
        tuned = json.loads(TUNED.read_text()).get(exp.name, {}).get(variant.name, {})
        out += [entry["params"] for entry in tuned.get("by_shape", {}).values()]
    unique = {tuple(sorted(p.items())): p for p in out}
    return [p for p in unique.values() if variant.constraints(p, None) is None]


def compile_config(exp, variant, params: dict):
    """The config compiled as the lab compiles it: for the variant's own target (sm_90a for the
    Hopper rungs, whose wgmma and setmaxnreg plain sm_90 rejects)."""
    return compile_kernel(exp.source(variant), exp.entry, params, variant.compile_arch(DEFAULT_ARCH))


def fingerprint(job: tuple[str, str, dict]) -> tuple[str, dict]:
    exp_name, variant_name, params = job
    exp = get_experiment(exp_name)
    variant = exp.variant(variant_name)
    label = f"{exp_name} {variant_name} {variant.params_label(params)}"
    try:
        compiled = compile_config(exp, variant, params)
    except Exception as exc:  # recorded, and compare() reports it: no SASS to compare
        return label, {"error": str(exc).splitlines()[0]}
    sass = subprocess.run(["cuobjdump", "-sass", str(compiled.cubin_path)], capture_output=True,
                          text=True, check=True).stdout
    instructions = [line.split("*/", 1)[1].split(";")[0].strip() for line in sass.splitlines()
                    if line.lstrip().startswith("/*") and ";" in line]
    return label, {**compiled.resources.as_record(), "instructions": len(instructions),
                   "sass_sha": _sha("\n".join(instructions)),
                   "sass_sorted_sha": _sha("\n".join(sorted(instructions))),
                   "opcodes": dict(Counter(i.split()[1] if i.startswith("@") else i.split()[0]
                                           for i in instructions if i))}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


RESOURCES = ["reg_per_thread", "smem_static_bytes", "spill_stores_bytes", "spill_loads_bytes", "stack_frame_bytes",
             "barriers", "cmem_bytes"]


def compare(before: dict, found: dict) -> tuple[list[str], int]:
    """What differs between two fingerprints (config label -> record), as lines to print, and the exit
    code: 1 where resources differ or a config failed to compile in either (it has no SASS to compare,
    so it is never counted identical), else 0."""
    same = lambda k, keys: before.get(k) and all(before[k].get(f) == found[k].get(f) for f in keys)
    failed = [k for k in sorted(found) if "error" in found[k] or "error" in before.get(k, {})]
    differ = [k for k in sorted(found) if k not in failed and not same(k, RESOURCES)]
    identical = [k for k in sorted(found) if k not in failed + differ and same(k, ["sass_sha"])]
    reordered = [k for k in sorted(found) if k not in failed + differ + identical and same(k, ["sass_sorted_sha"])]
    lines = [f"NOT COMPARED {k}: {found[k].get('error') or before[k].get('error')}" for k in failed]
    lines += [f"RESOURCES DIFFER {k}: before {before.get(k)}, after {found.get(k)}" for k in differ]
    for k in sorted(set(found) - set(failed) - set(differ) - set(identical) - set(reordered)):
        b, a = Counter(before[k]["opcodes"]), Counter(found[k]["opcodes"])
        lines.append(f"same resources, other SASS: {k}: {b.total()} -> {a.total()} instructions;"
                     f" opcodes added {dict(a - b)}, removed {dict(b - a)}")
    lines.append(f"{len(found)} configs: {len(failed)} not compiled; {len(differ)} with other resources; "
                 f"{len(identical)} identical SASS, {len(reordered)} the same instructions in another order")
    return lines, 1 if differ or failed else 0


def read_fingerprint(path: Path) -> dict:
    """An earlier --out file, or GpulabError saying why it cannot be compared with."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise GpulabError(f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise GpulabError(f"{path} is not a whole fingerprint ({exc.msg} at line {exc.lineno}): "
                          "take it again with --out") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise GpulabError(f"{path} is not a fingerprint written by this script (--out)")
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--compare", type=Path, help="an earlier fingerprint to compare with")
    ap.add_argument("--experiments", default="", help="comma-separated names (default: all)")
    ap.add_argument("--variants", default="", help="comma-separated names (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if not (shutil.which("cuobjdump") and shutil.which("nvdisasm")):
        print("cuobjdump and nvdisasm must be on PATH (see this script's docstring)", file=sys.stderr)
        return 2
    try:
        # Everything that can be refused is refused before the minutes of compiling.
        before = read_fingerprint(args.compare) if args.compare else None
        names = [n for n in args.experiments.split(",") if n] or [e.name for e in all_experiments()]
        experiments = [get_experiment(n) for n in names]
        jobs = [(e.name, v.name, p) for e in experiments for v in e.variants
                if not args.variants or v.name in args.variants.split(",") for p in configs(e, v)]
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            found = dict(pool.map(fingerprint, jobs))
        # Whole or not at all: a temporary file, then a rename (an interrupted run leaves the old file).
        write_atomic(args.out, json.dumps(found, indent=1, sort_keys=True) + "\n")
    except GpulabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted: {args.out} not written", file=sys.stderr)
        return 130
    print(f"{len(found)} configs fingerprinted into {args.out}")
    if before is None:
        return 0
    lines, code = compare(before, found)
    print("\n".join(lines))
    return code


if __name__ == "__main__":
    sys.exit(main())
