"""Device probe: the TMA load bytes Nsight Compute counts for t4 at small shapes chosen to take the
counting rule apart, beside the access model's prediction: K sets the row pitch (so where each box
row starts within a sector and a 128-byte line) and how much of the last k-tile lies inside K;
CLUSTER=2 receives Bt by multicast, CLUSTER=1 loads it per block.

    python3 notebook/probes/probe_tma_bytes.py                 # the default runs, one JSON line each
    python3 notebook/probes/probe_tma_bytes.py --run CLUSTER=2 --shape 256x256x72
    python3 notebook/probes/probe_tma_bytes.py --csv tests/fixtures/h200/probe-tma-bytes.csv   # the lines kept too
    python3 notebook/probes/probe_tma_bytes.py --set rows       # one Bt row more at a time, clusters of two

Each run is one launch of the kernel under ncu with the one metric
(l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum), no value check. The model's rule and
what it does not cover: gemm_bf16/access.py _tma_sectors, README "TMA load bytes".
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from gpulab.errors import GpulabError

METRIC = "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum"
# M = 256 and N = 256: every box row inside the matrix, one cluster tile (or two blocks); then rows
# past N. K: the pitch's offset within a 128-byte line and the width of the k-tile K ends inside.
DEFAULT = [(c, (256, 256, k)) for c in (2, 1) for k in (64, 8, 40, 72, 80, 96, 112, 120, 136, 200)]
DEFAULT += [(2, (256, 200, 72)), (2, (256, 200, 64)), (2, (200, 256, 72))]
# One Bt row more at a time (N = 1 .. 8), in clusters of two: what each row's offset within a 128-byte
# line adds under multicast, at the pitch residues 16 (K = 8, and 72 with a whole k-tile before the
# clipped one), 48 (K = 24) and 80 (K = 40).
ROWS = [(2, (256, n, k)) for k in (8, 24, 40, 72) for n in range(1, 9)]
SETS = {"pitch": DEFAULT, "rows": ROWS}


def child(cluster: int, dims: tuple[int, int, int]) -> None:
    from gpulab.experiments import get_experiment
    from gpulab.lab import Lab, LabOptions, RunSpec
    exp = get_experiment("gemm_bf16")
    t4 = exp.variant("t4")
    lab = Lab(LabOptions(seed=0, check=False))
    lab.execute(RunSpec(exp, t4, t4.default_params() | {"CLUSTER": cluster}, exp.shape(*dims)))


def predicted(cluster: int, dims: tuple[int, int, int]) -> int:
    from gpulab.experiments import get_experiment
    from gpulab.model.predict import predict
    exp = get_experiment("gemm_bf16")
    t4 = exp.variant("t4")
    return predict(t4.access(t4.default_params() | {"CLUSTER": cluster}, exp.shape(*dims)))["tma_load_bytes"]


def measure(cluster: int, dims: tuple[int, int, int]) -> float:
    shape = "x".join(map(str, dims))
    cmd = ["ncu", "--csv", "--page", "raw", "--print-units", "base", "--metrics", METRIC,
           "--kernel-name", "gemm_bf16", "--launch-skip", "2", "--launch-count", "1",
           sys.executable, __file__, "--child", str(cluster), shape]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    lines = [line for line in res.stdout.splitlines() if line.startswith('"')]
    rows = [r for r in csv.DictReader(io.StringIO("\n".join(lines))) if r.get("ID", "").strip().isdigit()]
    if not rows:
        raise SystemExit(f"ncu gave no rows (rc {res.returncode}): {res.stderr[-400:]} {res.stdout[-400:]}")
    return float(rows[0][METRIC].replace(",", ""))


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        child(int(sys.argv[2]), tuple(map(int, sys.argv[3].split("x"))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", help="CLUSTER=1 or CLUSTER=2 (with --shape)")
    ap.add_argument("--shape", help="MxNxK")
    ap.add_argument("--csv", type=Path, help="upsert one row per run into this CSV, with the card and versions")
    ap.add_argument("--set", choices=sorted(SETS), default="pitch", help="which runs (default: pitch)")
    args = ap.parse_args()
    runs = SETS[args.set]
    if args.run and args.shape:
        runs = [(int(args.run.split("=")[1]), tuple(map(int, args.shape.split("x"))))]
    lines = []
    for cluster, dims in runs:
        got = measure(cluster, dims)
        lines.append({"cluster": cluster, "shape": "x".join(map(str, dims)), "measured": got,
                      "predicted": predicted(cluster, dims)})
        print(json.dumps(lines[-1]), flush=True)
    if args.csv:
        try:
            save(args.csv, lines, _environment())
        except GpulabError as exc:  # a damaged CSV is refused, never overwritten; the lines are printed above
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0


def save(path: Path, lines: list[dict], env: dict) -> None:
    """The measured counts as rows keyed by (params, shape); the model's prediction is left out: the
    test that replays them (tests/test_gemm_bf16.py) asks the model of the day."""
    from gpulab.experiments import get_experiment
    from gpulab.records import upsert
    t4 = get_experiment("gemm_bf16").variant("t4")
    rows = [{"experiment": "gemm_bf16", "variant": "t4",
             "params": t4.params_label(t4.default_params() | {"CLUSTER": line["cluster"]}),
             "shape": line["shape"], "tma_load_bytes": int(line["measured"]), "ncu_metric": METRIC} | env
            for line in lines]
    upsert(path, rows, key=lambda r: (r["params"], r["shape"]), required=("params", "shape"))


def _environment() -> dict:
    from gpulab.gpu.ncu import ncu_version
    from gpulab.lab import Lab
    env = Lab().env
    return {"ncu_version": ncu_version("ncu"), **{k: env[k] for k in ("gpu", "driver", "date")}}


if __name__ == "__main__":
    sys.exit(main())
