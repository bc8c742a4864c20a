"""Sanitize, with today's command, the configs whose racecheck rows in results/h200/sanitize.csv were
recorded with "--launch-count 2" beside the name filter (the command that made racecheck fault on
every cluster launch: notebook/probes/probe_racecheck_filter.py, H200, 2026-12-04) and that `gpulab
sanitize` no longer plans: kc at SPLIT=7 and 8 (best rows of the llm suite, gated then), t4 at BN=192
in clusters of two. All four tools; rows upserted into results/<gpu>/sanitize.csv with the card's
columns, as the gate would write them.

    python3 notebook/probes/resanitize.py
"""

import sys

from gpulab.experiments import get_experiment
from gpulab.gpu.device import require_gpu
from gpulab.jobs import sanitize as san
from gpulab.records import card_folder, environment
from gpulab.run.lab import RunSpec

CONFIGS = [("gemm_bf16", "kc", {"SPLIT": 7}), ("gemm_bf16", "kc", {"SPLIT": 8}),
           ("gemm_bf16", "t4", {"BN": 192, "CLUSTER": 2, "EDGE": 0})]


def main() -> int:
    specs = []
    for exp_name, name, params in CONFIGS:
        exp = get_experiment(exp_name)
        v = exp.variant(name)
        full = v.default_params() | params
        specs.append(RunSpec(exp, v, full, san.sanitize_shape(exp, lambda s: not v.constraints(full, s))))
    device = require_gpu()
    rows = san.run_all(san.find_sanitizer(), specs, san.TOOLS, device.arch, jobs=8)
    env = environment(device, device.arch)
    rows = [r | env for r in rows]
    san.save(card_folder(device.slug) / san.FILE_NAME, rows)
    for r in rows:
        print(r["variant"], r["params"], r["tool"], r["errors"], r["verdict"], (r["first_report"] or "")[:90])
    return 0


if __name__ == "__main__":
    sys.exit(main())
