"""Device probe: where a GEMM's L2 traffic comes from, in Nsight Compute's L2 counters, for TMA
rungs under each L2 promotion asked for (gpulab.gpu.tma.L2_PROMOTION_BYTES) and for the vendor
library, at one shape: sectors by source (the SMs, the other L2 partition over the fabric), reads
and writes, hits and misses, what L2's request coalescer merged, DRAM bytes, the kernel's duration
and the SMs' clock under ncu. One
capture of the same launch `gpulab profile` takes (gpulab.ncu_child), each in its own process.
Usage: python3 notebook/probes/probe_l2_traffic.py SHAPE --run VARIANT[:NAME=V,...] ... [--promotions 256,128]
       [--csv OUT.csv]"""

import argparse
import csv
import dataclasses
import io
import runpy
import sys
import tempfile
from pathlib import Path

from ab_rungs import parse_run  # scripts/ is this script's own folder, first on sys.path

from gpulab.experiments import get_experiment
from gpulab.files import write_atomic
from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu import tma
from gpulab.gpu.device import require_gpu
from gpulab.lab import RunSpec
from gpulab.profiling import capture_request, child_env
from gpulab.records import environment

METRICS = (
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "lts__t_sectors.sum", "lts__t_requests.sum",
    "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "lts__t_sectors_srcunit_tex.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_requests_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_lookup_miss.sum", "lts__t_sectors_srcunit_ltcfabric.sum",
    "lts__t_sectors_srcunit_ltcfabric_op_read.sum", "lts__t_requests_srcunit_ltcfabric.sum",
    "lts__t_sectors_srcnode_gpc.sum", "lts__t_sectors_srcunit_gcc.sum", "lts__d_sectors_fill_device.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    # L2's request coalescer (LRC), between the crossbar and L2: read requests from different SMs for
    # the same sectors merged in hardware, and multicast ("programmatic") ones.
    "lrc__xbar2lrc_requests_op_read.sum", "lrc__request_sectors_op_read_coalescable.sum",
    "lrc__request_sectors_op_read_coalescing_achieved_type_hardware.sum",
    "lrc__request_sectors_op_read_coalescing_achieved_type_programmatic.sum", "lrc__lrc2xbar_sectors_op_read.sum",
    "lrc__lts2lrc_sectors_op_read.sum", "lrc__xbar2gpc_sectors_op_read.sum",
)


def child() -> None:
    """Under ncu: the profiled program, with the promotion set before it builds its tensor maps."""
    tma.L2_PROMOTION_BYTES = int(sys.argv[2])
    sys.argv = ["gpulab.ncu_child", *sys.argv[3:]]
    runpy.run_module("gpulab.ncu_child", run_name="__main__")


def capture(spec, promotion: int | None) -> dict:
    """One capture of `spec`'s launch (a library's: its longest kernel): metric -> value."""
    with tempfile.TemporaryDirectory(prefix="gpulab-l2-") as tmp:
        info = Path(tmp) / "info.json"
        request = capture_request(spec, info, metrics=METRICS)
        if promotion is not None:  # the same argv behind this script's child mode
            request = dataclasses.replace(
                request, target=(sys.executable, __file__, "--child", str(promotion), *request.target[3:]))
        cap = ncu_mod.capture(request, Path(tmp) / "l2.ncu-rep", env=child_env())
        launches = ncu_mod.parse_csv(cap.csv_text)
        launch = (ncu_mod.range_launches(launches)[0] if spec.variant is None
                  else ncu_mod.single_launch(launches, spec.experiment.entry))
    return {"kernel": launch.kernel.split("(")[0], **{m: launch.get(m) for m in METRICS}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("shape")
    ap.add_argument("--run", action="append", required=True, help="VARIANT[:NAME=V,NAME=V]")
    ap.add_argument("--promotions", default="256,128")
    ap.add_argument("--csv", type=Path)
    args = ap.parse_args()
    exp = get_experiment("gemm_bf16")
    shape = exp.shape(*map(int, args.shape.split("x")))
    rows = []
    for text in args.run:
        spec = RunSpec(exp, *parse_run(exp, text), shape)
        for p in map(int, args.promotions.split(",")):
            rows.append({"run": text, "promotion": p, **capture(spec, p)})
    for library in exp.vendor_baselines():
        rows.append({"run": library, "promotion": "", **capture(RunSpec(exp, None, {}, shape, library=library), None)})
    env = environment(require_gpu()) | {"ncu_version": ncu_mod.ncu_version(ncu_mod.find_ncu())}  # who measured, where, when
    rows = [{"shape": args.shape, **row, **env} for row in rows]
    for row in rows:
        print(f"{row['shape']} {row['run']} promotion {row['promotion']}: "
              + ", ".join(f"{m.removesuffix('.sum')}={row[m]:,.0f}" for m in METRICS), flush=True)
    if args.csv:  # whole or not at all: an interrupted run leaves no half-written file
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        write_atomic(args.csv, text.getvalue())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child()
    else:
        main()
