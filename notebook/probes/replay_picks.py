"""CPU probe (issue 40): the best-row model's picks replayed on rows a card already timed, no GPU.

  python3 notebook/probes/replay_picks.py suites   the picks at each shape of the llm suite (results/
      h200/<exp>-llm.csv) and the shapes of no suite (probes/unlisted/call15/), against the rows timed
      there: a pick counts where its own config was timed in that run (a best row counts as the config
      it ran) and ran within 5% of the fastest; 'untimed' where that run never timed it
  python3 notebook/probes/replay_picks.py suites-loo  as suites, but at each shape the model alone (issue 40's "the
      model's pick, no tune at that shape"): gpulab's own figure, `gpulab best EXP --alone`
      (gpulab.jobs.model_errors.picks_alone), on each suite file above
  python3 notebook/probes/replay_picks.py loso     leave one shape out of results/h200/<exp>.csv (its runs
      and the tune's entries at or very near it): the pick there against the rows timed there, by variant
      (the variant's fastest timed config), since those rows time each variant in one config only
  python3 notebook/probes/replay_picks.py main     the picks at each shape of results/h200/<exp>.csv, nothing left
      out (the rows the model calibrates on, and the tunes): within 5% of the fastest row timed there,
      or 'untimed' with the pick's variant's fastest timed config there against the fastest
  python3 notebook/probes/replay_picks.py configs  leave one tuned shape out of each tune (its rows in tune-<exp>-
      <variant>.csv, the tune's entries and the results' rows at or very near it): the config the model
      ranks first for that variant there, against the configs the tune timed there (within 5% of the
      fastest, the geometric mean of the pick's time over the fastest, 'untimed' where it timed none)
  python3 notebook/probes/replay_picks.py edge     how far a modelled lead can be trusted: leaving each tuned shape
      out of its tune, every pair of configs the tune timed there that the model orders, by the lead
      it gives the faster-modelled one (4% buckets) and by whether each was timed elsewhere: how often
      that one ran faster, and the geometric mean of its time over the other's (what picking it cost)
  python3 notebook/probes/replay_picks.py error    the model's time for each config those suite files timed
      (its calibrated estimate, as the pick weighs it) against the time measured: the typical error
      (geometric mean of max(est/measured, measured/est)), the share within 10% and 25%, by variant
Run from the repository root. The suites' rows are never read by the model (jobs/best.py), so the
first is a test of the model on shapes it did not see; the second on the shapes it calibrates with."""

import csv
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

from gpulab.experiments import get_experiment
from gpulab.jobs import best, model_errors
from gpulab.jobs.tune import shape_of
from gpulab.params import parse_params_label

FOLDER = Path("results/h200")
SUITES = {"gemm_bf16": ["results/h200/gemm_bf16-llm.csv", "notebook/probes/unlisted/call15/gemm_bf16-unlisted.csv",
                          "notebook/probes/ks/call19/gemm_bf16-unlisted.csv"],
          "sgemm": ["results/h200/sgemm-llm.csv", "notebook/probes/unlisted/call15/sgemm-unlisted.csv"]}


def timed_configs(path) -> dict[str, dict[tuple[str, str], float]]:
    """Per shape, each (variant, params) timed correct there and its fastest time (ms)."""
    out: dict[str, dict] = defaultdict(dict)
    for r in csv.DictReader(open(path)):
        if not r["time_ms"] or r["correct"] != "true" or r["variant"] == "cublas" or r.get("expected_wrong") == "true":
            continue
        key = (r["picked"].split()[0] if r["variant"] == "best" else r["variant"], r["params"])
        out[r["shape"]][key] = min(float(r["time_ms"]), out[r["shape"]].get(key, float("inf")))
    return out


def suites() -> None:
    for name, paths in SUITES.items():
        exp = get_experiment(name)
        chooser = best.selector(exp, FOLDER)
        for path in paths:
            ok = untimed = 0
            misses = []
            configs = timed_configs(path)
            for shape, times in configs.items():
                pick = chooser.pick(exp.shape(*shape_of(shape)))
                key = (pick.variant.name, pick.variant.params_label(pick.params))
                fastest = min(times.values())
                if key not in times:
                    untimed += 1
                    misses.append(f"{shape} {key[0]} untimed")
                elif times[key] <= 1.05 * fastest:
                    ok += 1
                else:
                    misses.append(f"{shape} {key[0]} {times[key] / fastest:.2f}x")
            print(f"{name} {path}: within 5% at {ok} of {len(configs)}, {untimed} picked configs untimed; "
                  + "; ".join(misses))


def suites_loo() -> None:
    """gpulab's own figure (gpulab best --alone: model_errors.picks_alone) on each suite file here."""
    for name, paths in SUITES.items():
        exp = get_experiment(name)
        for path in paths:
            found = model_errors.picks_alone(exp, FOLDER, Path(path))
            print(f"{name} {path}: the model alone within 5% at {found['within_5pct']} of {found['shapes']} "
                  f"({found['timed']} picks timed); " + "; ".join(found["misses"] + found["untimed"]))


def loso() -> None:
    for name in SUITES:
        exp = get_experiment(name)
        unseen = model_errors.Unseen(exp, FOLDER)
        ok = n = 0
        misses = []
        for shape, times in timed_configs(FOLDER / f"{name}.csv").items():
            if len({v for v, _ in times}) < 2:
                continue
            values = shape_of(shape)

            pick = unseen.pick(exp.shape(*values))
            n += 1
            mine = [t for (v, _), t in times.items() if v == pick.variant.name]
            fastest = min(times.values())
            if mine and min(mine) <= 1.05 * fastest:
                ok += 1
            else:
                misses.append(f"{shape} {pick.variant.name} " + (f"{min(mine) / fastest:.2f}x" if mine else "untimed"))
        print(f"{name}: leaving each shape out, the pick's variant within 5% at {ok} of {n}; " + "; ".join(misses))


def main() -> None:
    for name in SUITES:
        exp = get_experiment(name)
        chooser = best.selector(exp, FOLDER)
        ok = n = 0
        misses = []
        for shape, times in timed_configs(FOLDER / f"{name}.csv").items():
            pick = chooser.pick(exp.shape(*shape_of(shape)))
            if pick is None:
                continue
            n += 1
            key, fastest = (pick.variant.name, pick.variant.params_label(pick.params)), min(times.values())
            mine = [t for (v, _), t in times.items() if v == key[0]]
            if key in times and times[key] <= 1.05 * fastest:
                ok += 1
            elif key in times:
                misses.append(f"{shape} {key[0]} {times[key] / fastest:.2f}x")
            else:
                misses.append(f"{shape} {key[0]} untimed ({pick.why.split(',')[0]}; the variant's fastest timed there "
                              + (f"{min(mine) / fastest:.2f}x)" if mine else "none)"))
        print(f"{name}: the pick within 5% of the fastest row timed there at {ok} of {n}; " + "; ".join(misses))


AMONG_TIMED = "--among-timed" in sys.argv


def tuned_shapes_left_out():
    """(experiment, variant, shape, {(variant, params label): ms}, a Selector without that shape) for
    each shape a tune timed at least three configs at (tune-<exp>-<variant>.csv)."""
    for name in SUITES:
        exp = get_experiment(name)
        unseen = model_errors.Unseen(exp, FOLDER)
        for v in exp.variants:
            path = FOLDER / f"tune-{name}-{v.name}.csv"
            if path.exists():
                for shape, times in timed_configs(path).items():
                    if len(times) >= 3:
                        values = shape_of(shape)
                        yield exp, v, exp.shape(*values), times, unseen.selector(exp.shape(*values))


def timed_estimates(chooser, v, shape, times) -> dict:
    """The model's estimate of each config the tune timed at `shape`, by params label."""
    found = {}
    for (_, label), _ in times.items():
        params = v.completed_params(parse_params_label(label))
        if params is not None and v.constraints(params, shape) is None:
            if (est := chooser._estimate(v, params, shape, modelled=True)) is not None:
                found[label] = est
    return found


def configs() -> None:
    counts: dict[tuple[str, str], Counter] = defaultdict(Counter)  # (experiment, variant): ok, n, untimed
    logs: dict[tuple[str, str], list[float]] = defaultdict(list)
    misses: dict[tuple[str, str], list[str]] = defaultdict(list)
    for exp, v, shape, times, chooser in tuned_shapes_left_out():
        if AMONG_TIMED:  # the model's first among the configs the tune timed there
            found = list(timed_estimates(chooser, v, shape, times).values())
            mine = [best.prefer_measured(found, chooser.timed_somewhere)] if found else []
        else:
            mine = [e for e in chooser.ranking(shape) if e.variant.name == v.name]
        if not mine:
            continue
        key = (exp.name, v.name)
        counts[key]["n"] += 1
        t, fastest = times.get((v.name, v.params_label(mine[0].params))), min(times.values())
        if t is None:
            counts[key]["untimed"] += 1
            misses[key].append(f"{shape.label} untimed")
            continue
        logs[key].append(math.log(t / fastest))
        if t <= 1.05 * fastest:
            counts[key]["ok"] += 1
        else:
            misses[key].append(f"{shape.label} {t / fastest:.2f}x")
    for key, c in counts.items():
        gm = math.exp(sum(logs[key]) / len(logs[key])) if logs[key] else float("nan")
        print(f"{key[0]} {key[1]}: within 5% at {c['ok']} of {c['n']}, {c['untimed']} untimed, geomean {gm:.3f}x "
              f"the tune's fastest; " + "; ".join(misses[key]))


def edge() -> None:
    buckets: dict[tuple[str, int], list[float]] = defaultdict(list)  # log(time of the one modelled faster / other's)
    for exp, v, shape, times, chooser in tuned_shapes_left_out():
        found = {label: (est.seconds, times[(v.name, label)], chooser.timed_somewhere(est))
                 for label, est in timed_estimates(chooser, v, shape, times).items()}
        for est_a, t_a, timed_a in found.values():
            for est_b, t_b, timed_b in found.values():
                if est_b < est_a:  # b modelled faster, by lead
                    lead = est_a / est_b - 1
                    kind = {(True, False): "over a timed one, never timed", (True, True): "both timed"}.get(
                        (timed_a, timed_b), "other")
                    buckets[(kind, min(int(lead * 25) * 4, 40))].append(math.log(t_b / t_a))
    for (kind, lead), logs in sorted(buckets.items()):
        print(f"{kind:30s} lead {lead:2d}-{lead + 4}%{'+' if lead == 40 else ' '} {len(logs):5d} pairs: ran faster in "
              f"{sum(x < 0 for x in logs) / len(logs):.2f}, geomean {math.exp(sum(logs) / len(logs)):.3f}x the other's time")


def error() -> None:
    for name, paths in SUITES.items():
        exp = get_experiment(name)
        chooser = best.selector(exp, FOLDER)
        errors: dict[str, list[float]] = defaultdict(list)
        for path in paths:
            for variant, ratios in model_errors.model_errors(chooser, Path(path)).items():
                errors[variant] += ratios

        def summary(rs):
            found = model_errors.error_summary(rs)
            return (f"{found['configs']} rows, typical error {found['typical_error']:.2f}x, within 10% "
                    f"{found['within_10pct']}, within 25% {found['within_25pct']}, "
                    f"median est/measured {sorted(rs)[len(rs) // 2]:.2f}")
        print(f"{name}: {summary([r for rs in errors.values() for r in rs])}")
        for variant, rs in sorted(errors.items()):
            print(f"  {variant:5s} {summary(rs)}")


if __name__ == "__main__":
    {"suites": suites, "suites-loo": suites_loo, "main": main, "loso": loso, "configs": configs, "edge": edge, "error": error}[sys.argv[1] if len(sys.argv) > 1 else "suites"]()
