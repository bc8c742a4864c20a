# Tried and not kept (2026-12-06, sixth session, CPU only): d0's config factor (best.Selector.
# config_factor: how a config fares beside its variant's fastest at the nearest decode shapes) read only
# where its launch fills the SMs' slots alike: blocks / (waves x slots), the slots being 132 SMs times
# the blocks an SM holds by registers (decode.D0_REGISTERS) and threads, alike within TOL. best's own
# rule (_fills_alike) compares blocks over SMs, which every d0 launch at a decode shape fills.
# Prints the model alone's verdict (model_errors.picks_alone) on the H200's llm rows and on a fresh
# H100's (its ceilings and call 59's rows; the H200's runs lent), as shipped and with the rule; then
# with the rule read off the rows for every variant ('rows': the share of the slots the first wave
# fills, min(1, blocks / (SMs x the row's theoretical_blocks_per_sm)), the rule as it is where an
# SM holds one block) and, for that one, the picks it moves at the shapes of no list named below.
# Usage (repository root, CPU): python notebook/probes/d0_waves/slot_fill.py [TOL ...]   (output: slot_fill.txt)
import math, shutil, sys, tempfile
from pathlib import Path
import csv
import glob
import gpulab.jobs.best as best
from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16.decode import D0_REGISTERS
from gpulab.jobs.cost import grid_blocks, sm_share, work_units
from gpulab.jobs.model_errors import picks_alone

ROOT = Path(tempfile.mkdtemp())
shutil.copytree("results/h200", ROOT / "h200")
H100 = ROOT / "h100-80gb-hbm3"
H100.mkdir()
shutil.copy("notebook/probes/alone-h100/ceilings.csv", H100)
shutil.copy("notebook/probes/alone-h100/call59/gemm_bf16-llm.csv", H100)
EXP = get_experiment("gemm_bf16")
SHIPPED = best.Selector._fills_alike


def slot_fill(v, params, shape, sms):
    blocks = grid_blocks(v, params, shape)
    per_block = math.ceil(D0_REGISTERS[params["G"], params["U"], params["DEPTH"]] / 8) * 8 * 32 * params["KW"]
    slots = sms * max(1, min(64 // params["KW"], 65536 // per_block, 32))
    return blocks / (math.ceil(blocks / slots) * slots)


def verdicts(label):
    for folder in (ROOT / "h200", H100):
        r = picks_alone(EXP, folder, folder / "gemm_bf16-llm.csv")
        print(f"{label:14s} {folder.name:15s} {r['within_5pct']} of {r['shapes']} (timed {r['timed']}) | off: "
              + "; ".join(r["misses"]) + " | untimed: " + "; ".join(" ".join(u.split()[:2]) for u in r["untimed"]))


verdicts("shipped")
for tol in map(float, sys.argv[1:] or ["1.05", "1.15", "1.3"]):
    def alike(self, v, params, shape, there, tol=tol):
        if v.name != "d0":
            return SHIPPED(self, v, params, shape, there)
        mine = slot_fill(v, params, shape, self.card.sms)
        theirs = slot_fill(v, params, EXP.shape(*there), self.runs_card.sms)
        return max(mine, theirs) <= tol * min(mine, theirs)
    best.Selector._fills_alike = alike
    verdicts(f"slots TOL {tol}")

RESIDENT = {}
for f in glob.glob("results/h200/*.csv"):
    for r in csv.DictReader(line for line in open(f) if not line.startswith("#")):
        name = r.get("picked") if r.get("variant") == "best" else r.get("variant")
        if name and r.get("theoretical_blocks_per_sm") and r.get("params"):
            exp = "sgemm" if "sgemm" in Path(f).stem else "gemm_bf16"
            RESIDENT[(exp, name, r["params"])] = int(float(r["theoretical_blocks_per_sm"]))


def slot_share(self, v, params, values, sms):
    shape = self.experiment.shape(*values) if isinstance(values, tuple) else values
    units = work_units(v, params, shape)
    held = RESIDENT.get((self.experiment.name, v.name, v.params_label(params)))
    if units is None or held is None or units[0] < units[1]:
        return sm_share(v, params, shape, sms)
    return min(1.0, units[0] / (sms * held))


def by_rows(self, v, params, shape, there):
    mine, theirs = slot_share(self, v, params, shape, self.card.sms), slot_share(self, v, params, there, self.runs_card.sms)
    return not mine or not theirs or max(mine, theirs) <= best.SAME_REGIME * min(mine, theirs)


OFF_LIST = ["1x4096x4096", "1x4096x14336", "1x5120x3000", "512x512x512", "1x2048x16384", "2048x31x4096", "7x4096x4096"]
best.Selector._fills_alike = SHIPPED
before = {n: best.selector(get_experiment(n), ROOT / "h200") for n in ("gemm_bf16", "sgemm")}
picks = {(n, s): before[n].pick(get_experiment(n).shape(*map(int, s.split("x")))) for n in before for s in OFF_LIST}
best.Selector._fills_alike = by_rows
verdicts("rows")
after = {n: best.selector(get_experiment(n), ROOT / "h200") for n in ("gemm_bf16", "sgemm")}
for (n, s), p in picks.items():
    q = after[n].pick(get_experiment(n).shape(*map(int, s.split("x"))))
    if (p.variant.name, p.params) != (q.variant.name, q.params):
        print(f"rows moves {n} {s} (H200): {p.variant.name} {p.variant.params_label(p.params)} -> "
              f"{q.variant.name} {q.variant.params_label(q.params)}")
shutil.rmtree(ROOT)
