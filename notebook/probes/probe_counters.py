"""Capture one launch several times under ncu and print chosen metrics per capture.

A lab tool for a GPU machine, for questions of the kind "is this counter a fixed count of the launch,
and which of two counters that should agree does the model match?" (fidelity.csv's store sectors and
v9's shared-load instructions were settled with it). The launch is the one `gpulab profile` captures.

    python3 notebook/probes/probe_counters.py sgemm v9 --shape 129x67x33 --repeat 3 \
        --metric smsp__inst_executed_op_shared_ld_pred_on_any.sum --metric ...
    (--param NAME=VALUE as in gpulab; params left out take the variant's default)

Prints one CSV row per metric: metric, the model's prediction where it has one, then one value per capture.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from gpulab import quantities as Q
from gpulab.gpu import ncu as ncu_mod
from gpulab.ncu_child import LAUNCH_SKIP
from gpulab.profiling import capture_request, child_env, predicted_counters
from gpulab.run_args import spec_for


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiment")
    ap.add_argument("variant")
    ap.add_argument("--shape", required=True)
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--metric", action="append", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    spec = spec_for(args.experiment, args.variant, args.param, args.shape)
    predicted, _ = predicted_counters(spec)
    by_metric = {q.metric: q.predicted_as for q in Q.ALL if q.metric and q.predicted_as}
    ncu = ncu_mod.find_ncu()
    values: dict[str, list[str]] = {m: [] for m in args.metric}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="gpulab-probe-") as tmp:
            request = capture_request(spec, Path(tmp) / "target.json", metrics=tuple(args.metric))
            cap = ncu_mod.capture(request, Path(tmp) / "probe.ncu-rep", ncu, child_env())
            launch = ncu_mod.single_launch(ncu_mod.parse_csv(cap.csv_text), spec.experiment.entry)
        for m in args.metric:
            got = launch.metrics.get(m)
            values[m].append("" if got is None else f"{got:.0f}")
    print(f"# {spec.label}, {args.repeat} captures of launch {LAUNCH_SKIP + 1}")
    print("metric,predicted," + ",".join(f"capture_{i + 1}" for i in range(args.repeat)))
    for m in args.metric:
        pred = (predicted or {}).get(by_metric.get(m, ""), "")
        print(f"{m},{pred}," + ",".join(values[m]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
