"""Time, on the card, the model-alone pick at each shape of a suite where that config was not timed
(call 39, 2026-12-06). `gpulab best --suite llm --alone` judges such a pick by its variant's fastest
row at the shape (a suite times each variant in its tuned config), which says little where the pick
is another config of the variant. This times the pick itself, into the suite's own CSV (one-shape
suite files under the suite's name, so `gpulab bench` upserts by key; the vendor row at the shape is
timed again with it), so the figure is judged on measured times.

Usage (on the card, repository root): python3 notebook/probes/alone/time_alone_picks.py gemm_bf16 llm
"""

import subprocess
import sys
import tempfile
from pathlib import Path

from gpulab.experiments import get_experiment
from gpulab.experiments.suites import load
from gpulab.jobs.calibration import timed_runs
from gpulab.jobs.model_errors import Unseen

exp_name, suite_name = sys.argv[1], sys.argv[2]
folder = Path(sys.argv[3]) if len(sys.argv) > 3 else Path("results/h200")
exp = get_experiment(exp_name)
suite = load(suite_name)
record = folder / f"{exp_name}-{suite.name}.csv"
names = {v.name: v for v in exp.variants}
timed: dict[tuple, set] = {}
for run in timed_runs(exp, record):
    timed.setdefault(run.shape, set()).add((run.variant, names[run.variant].params_label(run.params)))
unseen = Unseen(exp, folder)
tmp = Path(tempfile.mkdtemp())
for found in suite.shapes(exp):
    shape = found.shape
    pick = unseen.selector(shape).pick(shape)
    label = pick.variant.params_label(pick.params)
    if (pick.variant.name, label) in timed.get(shape.values, set()):
        continue
    toml = tmp / f"{shape.label}.toml"
    dims = "\n".join(f"{n} = {v}" for n, v in zip(exp.dims, shape.values))
    toml.write_text(f'[suite]\nname = "{suite.name}"\ntitle = "{suite.title}"\nexperiments = ["{exp_name}"]\n\n'
                    f'[[shape]]\nlayer = "{found.columns.get("layer", "")}"\n{dims}\n')
    params = [a for k, v in pick.params.items() for a in ("-p", f"{k}={v}")]
    print(f"== {shape.label}: {pick.variant.name} {label}", flush=True)
    subprocess.run(["gpulab", "bench", exp_name, "--suite", str(toml), "-v", pick.variant.name, *params,
                    "--no-sanitize"], check=False)
