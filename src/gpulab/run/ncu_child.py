"""The child program Nsight Compute profiles (gpulab.jobs.profile starts it under ncu): one variant,
launched in a fixed order, nothing timed.

    python3 -m gpulab.run.ncu_child EXPERIMENT VARIANT [--kernel FILE.cu] --param NAME=V ... --shape MxNxK --info OUT.json

The run is read from its arguments by gpulab.run.args, as `gpulab profile` reads its own, and its
launch is prepared by the Lab code that times a run (Lab.device_inputs, Lab.launcher): the profiled
launch is the timed launch, by construction. It launches the kernel exactly
CHECK_LAUNCHES + WARMUP_LAUNCHES + 1 times:
  1. a correctness launch into a NaN-poisoned output, compared with the reference: counters of a
     kernel that computes the wrong answer describe nothing worth reading, so a wrong variant stops
     here (unless it is a registered demonstration of a wrong kernel);
  2. warm-ups, so the captured launch pays no module load or first-touch cost;
  3. the launch to capture.
So `ncu --kernel-name <entry> --launch-skip LAUNCH_SKIP --launch-count 1` selects exactly that last
launch, whatever else (CuPy fills, the reference GEMM, a variant's staging copy before each launch:
Variant.stage, named otherwise) the program launches; a staged run's counters are the kernel's alone.
The vendor library's row (VARIANT `cublas`) runs the same three steps, but the library picks its
kernels at run time, under names gpulab cannot know: its last call runs between cudaProfilerStart and
cudaProfilerStop, and ncu (started with profiling off) captures whatever that call launches. Nothing
is timed here: under ncu the kernel is serialized and replayed, and timings mean nothing.

What the counters cannot say, the program writes to --info as JSON: the device, the resources, the
check's verdict and the theoretical occupancy from the driver's own occupancy calculator.
Errors go to stderr on one line starting with TARGET_ERROR_PREFIX, which the parent recognizes.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import traceback
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.files import write_atomic
from gpulab.gpu.launch import DEFAULT_DYNAMIC_SMEM_LIMIT, profiler_range, synchronize
from gpulab.gpu.ncu import TARGET_ERROR_PREFIX
from gpulab.gpu.occupancy import occupancy as pure_occupancy
from gpulab.gpu.seam import cupy
from gpulab.run.lab import Lab, LabOptions, compile_spec, constraint_reason
from gpulab.run.args import run_argv, single_params, spec_for

CHECK_LAUNCHES = 1
WARMUP_LAUNCHES = 2
# The captured launch is the first one after these: ncu's --launch-skip.
LAUNCH_SKIP = CHECK_LAUNCHES + WARMUP_LAUNCHES
TOTAL_LAUNCHES = LAUNCH_SKIP + 1


def target_argv(spec, info_path: Path, seed: int = 0, python: str | None = None) -> list[str]:
    """The argv the profiler launches for `spec` (gpulab.run.args.run_argv: every param explicit)."""
    return [python or sys.executable, "-m", "gpulab.run.ncu_child",
            *run_argv(spec), "--seed", str(seed), "--info", str(info_path)]


def occupancy(lab: Lab, compiled, launch) -> dict:
    """Theoretical occupancy: blocks per SM from the driver (cuOccupancyMaxActiveBlocksPerMultiprocessor),
    and which resource sets it, from gpulab.gpu.occupancy's per-resource limits with this card's numbers."""
    cp = cupy()
    threads = launch.threads_per_block
    kernel = cp.RawModule(path=str(compiled.cubin_path)).get_function(compiled.entry)
    if launch.smem_dynamic_bytes > DEFAULT_DYNAMIC_SMEM_LIMIT:
        kernel.max_dynamic_shared_size_bytes = launch.smem_dynamic_bytes
    blocks = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, launch.smem_dynamic_bytes)

    mine = pure_occupancy(threads, compiled.resources.registers,
                          compiled.resources.smem_static_bytes + launch.smem_dynamic_bytes, lab.sm_limits)
    drivers = dataclasses.replace(mine, blocks_per_sm=int(blocks))  # the driver's count, the same arithmetic after
    return {
        "blocks_per_sm": drivers.blocks_per_sm,
        "warps_per_block": mine.warps_per_block,
        "max_warps_per_sm": mine.max_warps,
        "theoretical_occupancy_pct": drivers.pct,
        "occupancy_limiter": drivers.limiter or "the shared-memory carveout",
        "computed_blocks_per_sm": mine.blocks_per_sm,  # gpulab.gpu.occupancy's answer, held to the driver's
    }


def kernel_facts(lab: Lab, spec) -> dict:
    """What the compile says of a variant's kernel: its resources, launch and occupancy (a library's
    kernels are known only from the counters: gpulab.jobs.profile reads them there)."""
    device = lab.device
    if reason := constraint_reason(spec, device.arch):
        raise GpulabError(f"{spec.label} cannot run on this card: {reason}")
    compiled = compile_spec(spec, device.arch)
    launch = spec.variant.launch(spec.params, spec.shape)
    if launch.smem_dynamic_bytes + compiled.resources.smem_static_bytes > device.smem_per_block_optin_bytes:
        raise GpulabError(f"{spec.label} needs more shared memory than a block may have on {device.name}")
    return {
        "resources": compiled.resources.as_record(),
        "launch": {"grid": list(launch.grid), "block": list(launch.block),
                   "smem_dynamic_bytes": launch.smem_dynamic_bytes},
        "occupancy": occupancy(lab, compiled, launch),
    }


def run(spec, seed: int, info_path: Path | None) -> dict:
    lab = Lab(LabOptions(seed=seed))
    device = lab.device
    exp = spec.experiment
    facts = {"library": spec.library} if spec.variant is None else kernel_facts(lab, spec)
    inputs = lab.device_inputs(spec, exact=False, seed=seed)
    out = exp.output(spec.shape, cupy())
    once = lab.launcher(spec, inputs, out)

    for _ in range(CHECK_LAUNCHES):
        once()
    synchronize(spec.label)
    check = exp.check(out, inputs, spec.shape, False, cupy())
    if not check.ok and not (spec.variant and spec.variant.expected_wrong):
        raise GpulabError(
            f"{spec.label} computes a wrong answer ({check.describe()}); counters of a wrong kernel are "
            "not captured: fix it first (gpulab bench checks it too)"
        )
    for _ in range(WARMUP_LAUNCHES):
        once()
    synchronize(spec.label)
    if spec.variant is None:
        with profiler_range():  # the call ncu captures, whatever kernels the library picks
            once()
            synchronize(spec.label)
    else:
        once()  # the launch ncu captures
        synchronize(spec.label)

    info = {
        "experiment": exp.name,
        "variant": spec.name,
        "params": spec.params,
        "shape": spec.shape.label,
        "launches": {"check": CHECK_LAUNCHES, "warmup": WARMUP_LAUNCHES, "captured": LAUNCH_SKIP},
        "check": check.as_record(),
        **facts,
        "device": {"name": device.name, "slug": device.slug, "arch": device.arch,
                   "l2_bytes": device.l2_bytes, "sm_count": device.sm_count},
        "env": lab.env,
    }
    if info_path is not None:
        write_atomic(Path(info_path), json.dumps(info, indent=1, default=str))
    return info


def parser() -> argparse.ArgumentParser:
    """The child's command line: target_argv's words after `python3 -m gpulab.run.ncu_child`."""
    p = argparse.ArgumentParser(prog="python3 -m gpulab.run.ncu_child", description=__doc__.splitlines()[0])
    p.add_argument("experiment")
    p.add_argument("variant", help="VARIANT or VARIANT:NAME=VALUE,...")
    p.add_argument("--param", action="append", default=[], help="NAME=VALUE (repeatable)")
    p.add_argument("--shape", help="e.g. 512x512x512; default: the experiment's first default shape")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--info", type=Path, help="write what the counters cannot say here (JSON)")
    p.add_argument("--kernel", action="append", default=[], help="a .cu file that declares a variant (repeatable)")
    return p


def spec_of(ns: argparse.Namespace):
    """The run the parent named: its experiment (with the variants the --kernel files declare),
    variant, params and shape, read by gpulab.run.args as `gpulab profile` reads its own."""
    return spec_for(get_experiment(ns.experiment, kernels=tuple(ns.kernel)), ns.variant, single_params(ns.param), ns.shape)


def main(argv: list[str] | None = None) -> int:
    ns = parser().parse_args(argv)
    try:
        spec = spec_of(ns)
        run(spec, ns.seed, ns.info)
    except GpulabError as exc:
        print(f"{TARGET_ERROR_PREFIX} {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except Exception as exc:  # a crash: still one line the parent can show
        traceback.print_exc()
        print(f"{TARGET_ERROR_PREFIX} {type(exc).__name__}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    print(f"gpulab.run.ncu_child: {spec.label}: {TOTAL_LAUNCHES} launches, the last one is the capture")
    return 0


if __name__ == "__main__":
    sys.exit(main())
