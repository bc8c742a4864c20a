"""The program Nsight Compute profiles: one variant, launched in a fixed order, nothing timed.

    python3 -m gpulab.profile_target EXPERIMENT VARIANT --param NAME=V ... --shape MxNxK --info OUT.json

It compiles the variant, draws random inputs, and launches the kernel exactly
CHECK_LAUNCHES + WARMUP_LAUNCHES + 1 times:
  1. a correctness launch into a NaN-poisoned output, compared with the reference: counters of a
     kernel that computes the wrong answer describe nothing worth reading, so a wrong variant stops
     here (unless it is a registered demonstration of a wrong kernel);
  2. warm-ups, so the captured launch pays no module load or first-touch cost;
  3. the launch to capture.
So `ncu --kernel-name <entry> --launch-skip LAUNCH_SKIP --launch-count 1` selects exactly that last
launch, whatever else (CuPy fills, the reference GEMM) the program launches. Nothing is timed here:
under ncu the kernel is serialized and replayed, and timings mean nothing.

What the counters cannot say, the program writes to --info as JSON: the device, the resources, the
check's verdict and the theoretical occupancy from the driver's own occupancy calculator.
Errors go to stderr on one line starting with TARGET_ERROR_PREFIX, which the parent recognizes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.gpu.ncu import TARGET_ERROR_PREFIX

CHECK_LAUNCHES = 1
WARMUP_LAUNCHES = 2
# The captured launch is the first one after these: ncu's --launch-skip.
LAUNCH_SKIP = CHECK_LAUNCHES + WARMUP_LAUNCHES
TOTAL_LAUNCHES = LAUNCH_SKIP + 1


def make_spec(experiment: str, variant: str, params: dict[str, int], shape):
    """A RunSpec for one (experiment, variant, params, shape); params missing take their default.
    `experiment` is an Experiment or its name; `shape` is a Shape or its text ('512x512x512')."""
    from gpulab.experiments import get_experiment
    from gpulab.lab import RunSpec

    exp = get_experiment(experiment) if isinstance(experiment, str) else experiment
    v = exp.variant(variant)
    for name in params:
        v.param(name)  # a clear error for a param this variant lacks
    (chosen,) = v.param_grid({k: (val,) for k, val in params.items()})
    if isinstance(shape, str):
        shape = exp.parse_shape(shape)
    spec = RunSpec(exp, v, chosen, shape)
    reason = v.constraints(chosen, shape)
    if reason:
        raise GpulabError(f"{spec.label} cannot run: {reason}")
    return spec


def target_argv(spec, info_path: Path, seed: int = 0, python: str | None = None) -> list[str]:
    """The argv the profiler launches for `spec` (every param explicit, so defaults cannot drift)."""
    argv = [python or sys.executable, "-m", "gpulab.profile_target", spec.experiment.name, spec.variant.name]
    for path in spec.experiment.kernel_files:  # one-file variants (--kernel): the child adds them too
        argv += ["--kernel", path]
    for name, value in spec.params.items():
        argv += ["--param", f"{name}={value}"]
    return argv + ["--shape", spec.shape.label, "--seed", str(seed), "--info", str(info_path)]


def occupancy(compiled, launch, device) -> dict:
    """Theoretical occupancy: blocks per SM from the driver (cuOccupancyMaxActiveBlocksPerMultiprocessor),
    and which resource sets it, from gpulab.gpu.occupancy's per-resource limits with this card's numbers."""
    import cupy
    from cupy.cuda import driver

    from gpulab.gpu.occupancy import card_limits
    from gpulab.gpu.occupancy import occupancy as pure_occupancy

    threads = launch.threads_per_block
    attrs = cupy.cuda.Device().attributes
    kernel = cupy.RawModule(path=str(compiled.cubin_path)).get_function(compiled.entry)
    if launch.smem_dynamic_bytes > 48 * 1024:
        kernel.max_dynamic_shared_size_bytes = launch.smem_dynamic_bytes
    blocks = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, launch.smem_dynamic_bytes)

    limits = card_limits(device, attrs)
    mine = pure_occupancy(threads, compiled.resources.registers,
                          compiled.resources.smem_static_bytes + launch.smem_dynamic_bytes, limits)
    limiter = ", ".join(k for k, v in mine.limits.items() if v == blocks) or "the shared-memory carveout"
    return {
        "blocks_per_sm": int(blocks),
        "warps_per_block": mine.warps_per_block,
        "max_warps_per_sm": limits.max_warps,
        "theoretical_occupancy_pct": 100.0 * blocks * mine.warps_per_block / limits.max_warps,
        "occupancy_limiter": limiter,
        "computed_blocks_per_sm": mine.blocks_per_sm,  # gpulab.gpu.occupancy's answer, held to the driver's
    }


def run(spec, seed: int, info_path: Path | None) -> dict:
    import cupy
    import numpy as np

    from gpulab.gpu.device import require_gpu
    from gpulab.gpu.launch import load, synchronize
    from gpulab.lab import compile_spec
    from gpulab.records import environment, write_atomic

    device = require_gpu()
    exp = spec.experiment
    if reason := spec.variant.arch_reason(device.arch):
        raise GpulabError(f"{spec.label} cannot run on this card: {reason}")
    compiled = compile_spec(spec, device.arch)
    launch = spec.variant.launch(spec.params, spec.shape)
    if launch.smem_dynamic_bytes + compiled.resources.smem_static_bytes > device.smem_per_block_optin_bytes:
        raise GpulabError(f"{spec.label} needs more shared memory than a block may have on {device.name}")
    kernel = load(compiled)

    host = exp.make_inputs(spec.shape, np.random.default_rng(seed), False)
    inputs = {k: (cupy.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in host.items()}
    out = exp.output(spec.shape, cupy)
    args = exp.kernel_args(inputs, out, spec.shape, spec.params)

    def once():
        kernel(launch.grid, launch.block, args, launch.smem_dynamic_bytes)

    for _ in range(CHECK_LAUNCHES):
        once()
    synchronize(spec.label)
    check = exp.check(out, inputs, spec.shape, False, cupy)
    if not check.ok and not spec.variant.expected_wrong:
        raise GpulabError(
            f"{spec.label} computes a wrong answer ({check.describe()}); counters of a wrong kernel are "
            "not captured: fix it first (gpulab bench checks it too)"
        )
    for _ in range(WARMUP_LAUNCHES):
        once()
    synchronize(spec.label)
    once()  # the launch ncu captures
    synchronize(spec.label)

    info = {
        "experiment": exp.name,
        "variant": spec.variant.name,
        "params": spec.params,
        "shape": spec.shape.label,
        "launches": {"check": CHECK_LAUNCHES, "warmup": WARMUP_LAUNCHES, "captured": LAUNCH_SKIP},
        "check": check.as_record(),
        "resources": compiled.resources.as_record(),
        "launch": {"grid": list(launch.grid), "block": list(launch.block),
                   "smem_dynamic_bytes": launch.smem_dynamic_bytes},
        "device": {"name": device.name, "slug": device.slug, "arch": device.arch,
                   "l2_bytes": device.l2_bytes, "sm_count": device.sm_count},
        "occupancy": occupancy(compiled, launch, device),
        "env": environment(device, device.arch),
    }
    if info_path is not None:
        write_atomic(Path(info_path), json.dumps(info, indent=1, default=str))
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m gpulab.profile_target", description=__doc__.splitlines()[0])
    parser.add_argument("experiment")
    parser.add_argument("variant")
    parser.add_argument("--param", action="append", default=[], help="NAME=VALUE (repeatable)")
    parser.add_argument("--shape", help="e.g. 512x512x512; default: the experiment's first default shape")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--info", type=Path, help="write what the counters cannot say here (JSON)")
    parser.add_argument("--kernel", action="append", default=[], help="a .cu file that declares a variant (repeatable)")
    ns = parser.parse_args(argv)
    try:
        from gpulab.experiments import get_experiment
        from gpulab.lab import parse_param_overrides

        params = {}
        for name, values in parse_param_overrides(ns.param).items():
            if len(values) != 1:
                raise GpulabError(f"--param {name}: the profiler takes one value per param")
            params[name] = values[0]
        exp = get_experiment(ns.experiment, kernels=tuple(ns.kernel))
        spec = make_spec(exp, ns.variant, params, ns.shape or exp.default_shape_list()[0])
        run(spec, ns.seed, ns.info)
    except GpulabError as exc:
        print(f"{TARGET_ERROR_PREFIX} {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except Exception as exc:  # a crash: still one line the parent can show
        import traceback

        traceback.print_exc()
        print(f"{TARGET_ERROR_PREFIX} {type(exc).__name__}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    print(f"gpulab.profile_target: {spec.label}: {TOTAL_LAUNCHES} launches, the last one is the capture")
    return 0


if __name__ == "__main__":
    sys.exit(main())
