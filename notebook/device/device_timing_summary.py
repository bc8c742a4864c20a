"""Summaries for notebook/device/device_timing.sh (issue 41), read from the CSVs gpulab wrote:
  python3 device_timing_summary.py ratio CSV   the last A/B run's ratio and its interval's half-width
  python3 device_timing_summary.py aa CSV      how many A/A runs said 'same within noise'
  python3 device_timing_summary.py aa_api CSV  19 more A/A runs of sgemm v13 at 4096 through gpulab.ab in
                                               this one process (the CLI's start-up paid once), into CSV
  python3 device_timing_summary.py twice DIR   the same small bench run twice (DIR/twice_1.csv and
                                               twice_2.csv, written by gpulab bench): each median against
                                               the other run's interval, into DIR/twice.csv"""

import sys
from pathlib import Path

import gpulab
from gpulab.records import read_csv, write_csv


def ratio(path: str) -> None:
    r = read_csv(Path(path))[-1]
    half = max(r["ab_ratio"] - r["ab_ratio_ci_low"], r["ab_ratio_ci_high"] - r["ab_ratio"]) / r["ab_ratio"]
    print(f"{r['variant']} / A: ratio {r['ab_ratio']:.4f}, 95% interval {r['ab_ratio_ci_low']:.4f}-"
          f"{r['ab_ratio_ci_high']:.4f}, half-width {half:.3%}: {'within' if half <= 0.005 else 'WIDER THAN'} +-0.5%; "
          f"{r['reps']} rounds, verdict {r['ab_verdict']}")


def aa(path: str) -> None:
    rows = [r for r in read_csv(Path(path)) if r["side"] == "B"]
    same = sum(r["ab_verdict"] == "same within noise" for r in rows)
    print(f"A/A: {same} of {len(rows)} said same within noise; ratios "
          + ", ".join(f"{r['ab_ratio']:.4f} ({r['reps']} rounds)" for r in rows))


def aa_api(path: str) -> None:
    import time

    for i in range(19):
        start = time.perf_counter()
        rows = gpulab.ab("sgemm", "v13", "v13", shape="4096x4096x4096", csv=Path(path))
        print(f"ab {i + 2} (API): {time.perf_counter() - start:.1f} s, verdict: {rows.result.sentence()}", flush=True)


def _inside(m: float, r: dict) -> bool | None:
    if r.get("time_ci_low_ms") is None:
        return None
    return r["time_ci_low_ms"] <= m <= r["time_ci_high_ms"]


def twice(folder: str) -> None:
    one, two = (read_csv(Path(folder) / f"twice_{i}.csv") for i in (1, 2))
    rows = []
    for a, b in zip(one, two):
        rows.append({"variant": a["variant"], "params": a.get("params"), "first_ms": a.get("time_ms"),
                     "second_ms": b.get("time_ms"), "first_rel_noise": a.get("rel_noise"),
                     "second_rel_noise": b.get("rel_noise"), "first_reps": a.get("reps"), "second_reps": b.get("reps"),
                     "second_in_first_ci": _inside(b.get("time_ms"), a),
                     "first_in_second_ci": _inside(a.get("time_ms"), b),
                     "first_sm_clock_mhz": a.get("sm_clock_mhz"), "second_sm_clock_mhz": b.get("sm_clock_mhz"),
                     "first_throttle": a.get("throttle"), "second_throttle": b.get("throttle")})
        print(", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in rows[-1].items()))
    write_csv(Path(folder) / "twice.csv", rows)
    one_way = sum(bool(r["second_in_first_ci"]) for r in rows)
    mutual = sum(bool(r["second_in_first_ci"] and r["first_in_second_ci"]) for r in rows)
    overlap = sum(a.get("time_ci_low_ms") is not None and b.get("time_ci_low_ms") is not None
                  and a["time_ci_low_ms"] <= b["time_ci_high_ms"] and b["time_ci_low_ms"] <= a["time_ci_high_ms"]
                  for a, b in zip(one, two))
    print(f"second median inside the first's interval: {one_way} of {len(rows)}; "
          f"each inside the other's: {mutual} of {len(rows)}; the intervals overlap: {overlap} of {len(rows)}")


if __name__ == "__main__":
    {"ratio": ratio, "aa": aa, "aa_api": aa_api, "twice": twice}[sys.argv[1]](sys.argv[2])
