"""Device probe: the counts Nsight Compute gives at a K that ends inside a k-tile, launch by launch,
to take apart the rules the access models miss there (issue 42, section 2):

  tma   t4's TMA load bytes (l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld) at M = 256 (one
        cluster tile) and N = 1 .. 8 Bt rows, K = 64 w + L/2 for each clipped width L (bytes of the
        last k-tile inside K) and w = 1, 2 whole k-tiles, in clusters of two (Bt by multicast) and,
        at N = 8, of one. Row r starts r L mod 128 bytes into a line in every k-tile (2K = 128 w + L),
        so the run with N + 1 rows less the one with N is row N's count, and w = 2 less w = 1 is a
        whole k-tile's, at the same offsets: the whole and the clipped k-tile's counts apart.
  t1    t1's global load sectors (l1tex__t_sectors_pipe_lsu_mem_global_op_ld) of one block
        (128 x 128) at K = 72 .. 120 and 968 .. 1024 in steps of 8: cp.async zero-fills the chunks
        past K (src-size 0), and 1536x2560x1000 counted 64 sectors per block more than the model.
  smem  t4's shared store and load wavefronts at 1536x2560x1000, three launches: the hardware count,
        its bank conflicts and the instrumented count, to see whether the hardware's conflict-free
        ("ideal") wavefronts move between launches (they exceeded the instrumented ones there).

    python3 notebook/probes/probe_ragged_counts.py --set tma --csv $OUT/tma.csv
    python3 notebook/probes/probe_ragged_counts.py --set t1 --csv $OUT/t1.csv

Each set is one ncu process over one child that launches every run of the set once, in order
(no value check; K a multiple of 8, so nothing is staged); ncu profiles each launch of the kernel
`gemm_bf16` and its rows come back in launch order. The CSV holds the measured values only, with
the card and ncu's version; the models' predictions are computed where the CSV is read
(tests/test_gemm_bf16.py), so they are always today's.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

TMA_BYTES = "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"
LOAD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
LOAD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
SMEM = tuple(f"{m}_{op}.sum" for op in ("st", "ld") for m in (
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op"))
# Clipped widths L (bytes of the last k-tile inside K): odd multiples of 16 (rows at every 16-byte
# offset; t4 at K = 1000 has L = 80) and the multiples of 32 (v14 at K = 1000 reads L = 96).
WIDTHS = (16, 48, 80, 112, 32, 64, 96)


def _runs(name: str) -> list[tuple[str, dict, tuple[int, int, int]]]:
    """(variant, params over its defaults, shape) of every launch of set `name`, in order."""
    if name == "tma":
        runs = [("t4", {"CLUSTER": 2}, (256, n, 64 * w + width // 2))
                for width in WIDTHS for w in (1, 2) for n in range(1, 9)]
        runs += [("t4", {"CLUSTER": 1}, (256, 8, 64 * w + width // 2)) for width in WIDTHS for w in (1, 2)]
        return runs + [runs[0], ("t4", {"CLUSTER": 2}, (1536, 2560, 1000)), ("t4", {"CLUSTER": 1}, (1536, 2560, 1000))]
    if name == "t1":
        ks = [*range(72, 121, 8), *range(968, 1025, 8), 200]
        return ([("t1", {}, (128, 128, k)) for k in ks]
                + [("t1", {}, (256, 256, 1000)), ("t1", {}, (300, 388, 200)), ("t1", {}, (1536, 2560, 1000))])
    if name == "smem":
        return [("t4", {}, (1536, 2560, 1000))] * 3 + [("t4", {"CLUSTER": 1}, (129, 257, 65))] * 2
    raise SystemExit(f"no set {name!r}")


METRICS = {"tma": (TMA_BYTES,), "t1": (LOAD_SECTORS, LOAD_REQUESTS), "smem": SMEM}


def child(name: str) -> None:
    """Launch every run of the set once (what ncu profiles), printing each as a JSON line first."""
    from gpulab.experiments import get_experiment
    from gpulab.gpu.launch import synchronize
    from gpulab.gpu.seam import cupy
    from gpulab.run.lab import Lab, LabOptions, RunSpec

    exp = get_experiment("gemm_bf16")
    lab = Lab(LabOptions(seed=0, check=False))
    for variant, params, dims in _runs(name):
        v = exp.variant(variant)
        spec = RunSpec(exp, v, v.default_params() | params, exp.shape(*dims))
        inputs = lab.device_inputs(spec, exact=False, seed=0)
        out = exp.output(spec.shape, cupy())
        lab.launcher(spec, inputs, out)()
        synchronize(spec.label)
        print(json.dumps({"label": spec.label}), flush=True)


def measure(name: str) -> list[dict]:
    """One ncu process over the set's child: one row per launch, the set's runs and metrics joined."""
    from gpulab.gpu.ncu import find_ncu

    metrics = METRICS[name]
    cmd = [find_ncu(), "--csv", "--page", "raw", "--print-units", "base", "--metrics", ",".join(metrics),
           "--kernel-name", "gemm_bf16", sys.executable, __file__, "--child", name]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lines = [line for line in res.stdout.splitlines() if line.startswith('"')]
    rows = [r for r in csv.DictReader(io.StringIO("\n".join(lines))) if r.get("ID", "").strip().isdigit()]
    runs = _runs(name)
    if len(rows) != len(runs):
        raise SystemExit(f"ncu gave {len(rows)} rows for {len(runs)} launches (rc {res.returncode}): "
                         f"{res.stderr[-600:]} {res.stdout[-600:]}")
    from gpulab.experiments import get_experiment
    exp = get_experiment("gemm_bf16")
    out = []
    for (variant, params, dims), row in zip(runs, rows):
        v = exp.variant(variant)
        out.append({"experiment": "gemm_bf16", "variant": variant, "params": v.params_label(v.default_params() | params),
                    "shape": "x".join(map(str, dims)),
                    **{m: float(row[m].replace(",", "")) for m in metrics}})
    return out


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=sorted(METRICS), required=True)
    ap.add_argument("--csv", type=Path, help="write the rows here, with the card and ncu's version")
    args = ap.parse_args()
    rows = measure(args.set)
    for r in rows:
        print(json.dumps(r), flush=True)
    if args.csv:
        from gpulab.gpu.ncu import find_ncu, ncu_version
        from gpulab.records import write_csv
        from gpulab.run.lab import Lab
        env = Lab().env
        stamp = {"ncu_version": ncu_version(find_ncu()), **{k: env[k] for k in ("gpu", "driver", "date")}}
        write_csv(args.csv, [r | stamp for r in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())
