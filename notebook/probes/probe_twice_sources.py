"""Device probe (issue 41): where does a row's drift between two runs of one bench come from?

The same bench run twice put the second median outside the first's 95% interval at 8 of 23 rows
(H200, 2026-12-04), by 0.05-1.1%. Three candidate sources, told apart here on sgemm at 2048^3:
  same    - lab.time called again at once on one spec (the memory pool hands back the same addresses)
  moved   - again, but with a spacer allocation held first, so inputs and output land elsewhere
  later   - again after every other row was timed (seconds later: the card's drift over time)
Each timing is a whole default-policy timing (its own warm-up, stopping rule and interval).
Usage (on the card): python3 notebook/probes/probe_twice_sources.py CSV"""

import sys
from pathlib import Path

from gpulab.experiments import get_experiment
from gpulab.gpu.seam import cupy
from gpulab.records import write_csv
from gpulab.run.lab import Lab, LabOptions, RunSpec

ROWS = [("v1", {"TILE": 16}), ("v4", {}), ("v14", {}), ("gv", {}), ("sx", {}), (None, {})]


def main() -> None:
    cp = cupy()
    exp = get_experiment("sgemm")
    shape = exp.shape(2048, 2048, 2048)
    lab = Lab(LabOptions(seed=0, check=False))
    specs = []
    for name, params in ROWS:
        if name is None:
            specs.append(RunSpec(exp, None, {}, shape, library="cublas"))
        else:
            v = exp.variant(name)
            specs.append(RunSpec(exp, v, v.default_params() | params, shape))
    rows, spacers = [], []
    for rnd in ("first", "later"):
        for spec in specs:
            for how in ("same", "same", "moved", "moved"):
                if how == "moved":  # a held spacer of an odd size: the next inputs and output land elsewhere
                    spacers.append(cp.empty((len(spacers) + 1) * (3 << 20) + 4096 * 7, dtype=cp.uint8))
                t = lab.time(spec)[0]
                rows.append({"round": rnd, "how": how, "variant": spec.label, "time_ms": t.median_ms,
                             "ci_low_ms": t.ci_low_ms, "ci_high_ms": t.ci_high_ms, "reps": t.reps,
                             "rel_noise": t.rel_noise, "sm_clock_mhz": t.card.get("sm_clock_mhz"),
                             "free_bytes": cp.cuda.runtime.memGetInfo()[0]})
                r = rows[-1]
                print(f"{rnd:5s} {how:5s} {spec.label[:40]:40s} {r['time_ms']:.5f} ms  "
                      f"[{r['ci_low_ms']:.5f}, {r['ci_high_ms']:.5f}] n={r['reps']} clk {r['sm_clock_mhz']}", flush=True)
    write_csv(Path(sys.argv[1]), rows)


if __name__ == "__main__":
    main()
