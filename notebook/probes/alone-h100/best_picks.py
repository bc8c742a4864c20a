# The best row's pick (full evidence: the H200's runs lent) at each shape the given H100 CSVs timed: within
# 5% of the fastest timed there? Run from a folder whose results/ holds h200/ and h100/ (its ceilings only):
#   python best_picks.py gemm_bf16 call53/gemm_bf16-llm.csv call54/unlisted-gemm_bf16.csv ... (2026-12-06)
import sys, csv
from pathlib import Path
from gpulab.experiments import get_experiment
from gpulab.jobs.best import selector
from gpulab.jobs.calibration import fastest_per_config, timed_runs
name = sys.argv[1]; e = get_experiment(name); s = selector(e, Path('results/h100'))
names = {v.name: v for v in e.variants if not v.expected_wrong}
timed = {}
for f in sys.argv[2:]:
    for (vn, _), runs in fastest_per_config(timed_runs(e, Path(f))).items():
        for run in runs if vn in names else ():
            k = (vn, names[vn].params_label(run.params)); d = timed.setdefault(run.shape, {})
            d[k] = min(d.get(k, 9), run.seconds)
good = tot = 0; out = []
for shp, times in timed.items():
    pk = s.pick(e.shape(*shp)); key = (pk.variant.name, pk.variant.params_label(pk.params))
    if key in times:
        tot += 1; r = times[key] / min(times.values()); good += r <= 1.05
        if r > 1.05: out.append(f"{'x'.join(map(str,shp))} {key[0]} {r:.2f}")
    else:
        out.append(f"{'x'.join(map(str,shp))} {key[0]} untimed")
print(name, good, 'of', tot, 'timed of', len(timed), '|', '; '.join(out))
