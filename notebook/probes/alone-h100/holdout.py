"""The holdout: gemm_bf16 and sgemm shapes recorded under notebook/ on one card and never read by the
best row's model (no results/ CSV holds them). At each, the best row's pick (the H200's selector, or
a fresh H100's: its ceilings only, the H200's runs lent) against the fastest gpulab row recorded
there on that card; prints each miss or untimed pick, then the count.
Run from the repository root: python notebook/probes/alone-h100/holdout.py h200|h100 [more.csv ...]
(2026-12-07: h100 68 of 87 within 5%, one pick untimed, after call 105; h200 15 of 25, 5 untimed)."""
import csv
import glob
import shutil
import sys
import tempfile
from pathlib import Path

from gpulab.experiments import get_experiment
from gpulab.jobs.best import selector

card = sys.argv[1] if len(sys.argv) > 1 else "h200"
ROOT = Path(tempfile.mkdtemp())
shutil.copytree("results/h200", ROOT / "h200")
H100 = ROOT / "h100-80gb-hbm3"
H100.mkdir()
shutil.copy("notebook/probes/alone-h100/ceilings.csv", H100)
folder = ROOT / "h200" if card == "h200" else H100
in_results = {(r.get("experiment"), r["shape"]) for f in glob.glob("results/h200/*.csv")
              for r in csv.DictReader(open(f)) if r.get("shape")}
times: dict = {}
for f in glob.glob("notebook/**/*.csv", recursive=True) + sys.argv[2:]:
    try:
        rows = list(csv.DictReader(open(f)))
    except (UnicodeDecodeError, csv.Error):
        continue
    for r in rows:
        e = r.get("experiment")
        if e not in ("gemm_bf16", "sgemm") or not r.get("time_ms") or r.get("correct") != "true":
            continue
        gpu = "h200" if "H200" in (r.get("gpu") or "") else "h100"
        if gpu != card or r["variant"] == "cublas" or (r.get("shape") or "").count("x") != 2 or (e, r["shape"]) in in_results:
            continue
        key = (r.get("picked") or r["variant"], r["params"])
        d = times.setdefault((e, r["shape"]), {})
        d[key] = min(d.get(key, 1e9), float(r["time_ms"]))
selectors: dict = {}
n = hit = untimed = 0
for (e, s), d in sorted(times.items()):
    if len({v for v, _ in d}) < 2:  # one variant timed there: nothing to choose between
        continue
    exp = get_experiment(e)
    sel = selectors.setdefault(e, selector(exp, folder))
    p = sel.pick(exp.shape(*map(int, s.split("x"))))
    key = (p.variant.name, p.variant.params_label(p.params))
    fast, t = min(d.values()), d.get(key)
    n += 1
    if t is None:
        untimed += 1
        print(f"  {e} {s}: pick {key[0]} {key[1]} untimed; fastest {fast * 1e3:.1f}us {min(d, key=d.get)}")
    elif t <= 1.05 * fast:
        hit += 1
    else:
        print(f"  {e} {s}: pick {key[0]} {key[1]} {t * 1e3:.1f}us = {t / fast:.2f}x fastest {min(d, key=d.get)}")
print(f"{card}: pick within 5% at {hit} of {n} holdout shapes ({untimed} untimed)")
