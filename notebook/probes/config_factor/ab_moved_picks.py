"""Device probe (issue 40): is notebook/patches/best_config_factor.patch's pick faster where it moves?

moved_picks.csv lists the llm and unlisted shapes where the best-row model with the patch picks
another config than without it (written on the CPU from results/h200 as call 24 left it,
2026-12-05, by comparing the two models' picks; 37 shapes): a_before, the pick without it, b_with_patch, the pick with it, and each one's
modelled time. Each pair is timed with gpulab's own A/B (interleaved rounds, L2 flushed, the
ratio B / A with its 95% interval) and its two rows join OUT/ab-moved-picks.csv. A pair that fails
(a config its constraints refuse, a fault) is reported and the others go on.

  python3 notebook/probes/config_factor/ab_moved_picks.py OUT_DIR [NOISE [FIRST:END]]   (on the card, repo root)

FIRST:END (1-based, END excluded) times a slice of the list, so the 37 pairs fit in calls of a few minutes.
"""

import csv
import sys
import time
from pathlib import Path

import gpulab
from gpulab.errors import GpulabError

HERE = Path(__file__).parent


def main(out: Path, noise: str, first: int = 1, end: int | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = list(csv.DictReader(open(HERE / "moved_picks.csv")))
    for i, r in enumerate(rows, 1):
        if i < first or (end is not None and i >= end):
            continue
        t0 = time.perf_counter()
        try:
            found = gpulab.ab(r["experiment"], r["a_before"], r["b_with_patch"], shape=r["shape"], noise=noise,
                              csv=out / "ab-moved-picks.csv").result
            verdict = found.verdict.sentence("before", "with the patch")
        except GpulabError as e:
            verdict = f"failed: {e}"
        print(f"[{i}/{len(rows)}] {r['experiment']} {r['shape']}: {verdict} ({time.perf_counter() - t0:.1f} s)",
              flush=True)


if __name__ == "__main__":
    first, _, end = (sys.argv[3] if len(sys.argv) > 3 else "1:").partition(":")
    main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "1%", int(first or 1), int(end) if end else None)
