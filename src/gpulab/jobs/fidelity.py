"""Fidelity: every access model against what Nsight Compute counted on the card.

    for each built-in variant (registry default params), at its experiment's first default shape and
    at its ragged shapes (RAGGED_SHAPES):
        gpulab.jobs.profile.profile(spec)          ncu in a separate process, one captured launch
        predicted_quantities(spec)              the access model, summed exactly (gpulab.model)
        -> one row per quantity: predicted, measured, ratio, exact, verdict, note
    -> results/<gpu>/fidelity.csv (rows of the same run are replaced, others kept)

What is held to what (gpulab.quantities says it per quantity, with its ncu metric):
- counted quantities (global requests and sectors, loads and stores, the L1TEX bytes loads imply;
  shared requests, wavefronts, bank conflicts and ideal wavefronts, loads and stores; cp.async
  requests) must equal ncu's count exactly. Store sectors, shared requests and shared wavefronts
  are ncu's instrumented counts (from each executed instruction's predicate and addresses), so
  arbitration between warps, which the hardware counters of shared wavefronts include and count as
  bank conflicts, never reaches them; bank conflicts are the instrumented wavefronts minus the
  hardware's conflict-free wavefronts. The hardware counters themselves are recorded beside (hw_*),
  with the prediction and ratio, never judged.
- DRAM bytes read: the compulsory bytes (each input read once, and where the access model counts
  them, the passes over an input the L2 cannot keep between reads: ks's over Bt), within +-15%
  where the inputs exceed the L2 (below that the verdict would only say the caches work); bytes
  written are shown beside them for the record, without a verdict (dirty lines may stay in L2 when
  the kernel ends).

tests/test_fidelity_replay.py replays the committed CSV on a CPU: every quantity that was exact on
the card must still equal the recorded ncu number under the current kernels and models.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from gpulab.jobs import profile as profiling
from gpulab import quantities as Q
from gpulab.errors import GpulabError, NotModelled
from gpulab.experiments import all_experiments, get_experiment
from gpulab.files import locked
from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu import ncu_reader
from gpulab.gpu.device import gpu_slug
from gpulab.run.lab import RunSpec, config_run_key
from gpulab.model.predict import check_launch, predict
from gpulab.params import parse_params_label
from gpulab.records import RUN_KEY, DamagedFile, card_folder, read_csv, run_key, to_csv_text, write_csv

FILE_NAME = Q.FIDELITY_FILE
# One ragged shape per experiment, small enough that ncu is quick, with every edge exercised: tiles
# cut on every axis, tails of vector paths. SGEMM has a second: odd sizes, which send v4 and later
# down their scalar paths (the first keeps K and N multiples of 4, the float4 paths, with ragged
# tiles). A later ragged shape is measured only where it runs other instructions than the first
# (`_needs_shape`), so v0-v3 take one.
RAGGED_SHAPES: dict[str, tuple[tuple[int, ...], ...]] = {
    "sgemm": ((300, 388, 196), (129, 67, 33)),
    "coalesce": ((999, 1001),),
    "stencil": ((100_003,),),
    "grayscale": ((1001, 333),),
}
# fidelity.csv's rows (gpulab.quantities.FIDELITY), by how each is judged.
QUANTITIES = tuple(q.key for q in Q.FIDELITY)
FAILED_RUN = "(run)"  # the quantity of the one row of a run that failed (verdict "error")
COUNTED = Q.held_exactly()
HARDWARE = tuple(q.key for q in Q.FIDELITY if q.judged == Q.HARDWARE)
MEASURED_ONLY = tuple(q.key for q in Q.FIDELITY if q.judged == Q.MEASURED)
DRAM = tuple(q.key for q in Q.FIDELITY if q.judged in (Q.TOLERANCE, Q.INFO))

UNMODELLED_NOTE = ("the shared side of cp.async: its wavefronts follow the global sectors' arrival, "
                   "which the model does not predict")
GMMA_NOTE = ("wgmma's operand reads from shared memory: how many data-stage wavefronts a m64nNk16 takes "
             "for its A and B tiles is not documented, so the model does not predict them")
# The measured-only quantities, each with the predicted count that says its instructions do not run at
# all (then it is predicted 0 and judged) and why it is not modelled where they do.
UNMODELLED = {
    "smem_ldgsts_wavefronts": ("smem_ldgsts_requests", UNMODELLED_NOTE),
    "smem_ldgsts_bank_conflicts": ("smem_ldgsts_requests", UNMODELLED_NOTE),
    "smem_gmma_wavefronts": ("gmma_requests", GMMA_NOTE),
    "smem_gmma_bank_conflicts": ("gmma_requests", GMMA_NOTE),
}
HARDWARE_NOTE = ("a hardware counter: not a fixed count of one launch on the H200 (it moves between captures); "
                 "the instrumented count in the row without hw_ is the one held to the model")
# Where ncu's instrumented wavefront count and its hardware count disagree and the hardware count is
# the model's, the row still differs (the instrumented count is the one judged) and says so. The one
# case seen on the H200: an LDS.128 whose only active lanes are one per quarter-warp (the last float4
# column of sgemm v9's write-back in a block moved inward) is two wavefronts to the model and to the
# hardware counter (the quarter-warps merge pairwise) and three to the instrumented count, one more
# per such execution (per-instruction source page, 2026-12-01; README, "Fidelity").
HW_AGREES_NOTE = ("the hardware counter equals the model ({hw:,.0f}); ncu's instrumented count is {diff:+,.0f}: "
                  "it counts the phases of partly active LDS.128/STS.128 differently")


# A derived count whose inputs contradict each other (gpulab.quantities.unmeasurable): never a
# number below zero; the verdict says so and the note gives the inputs.
UNMEASURABLE_NOTE = ("the hardware's wavefronts hold more than the instructions' own (the instrumented count): "
                     "arbitration adds them, its conflict counter does not see them, and they move from capture "
                     "to capture, so no bank-conflict count can be read here; the instrumented wavefronts are judged")


def ragged_shapes(exp) -> tuple[tuple[int, ...], ...]:
    """The built-ins' ragged shapes above; any other experiment declares its own (ragged_shapes)."""
    return RAGGED_SHAPES.get(exp.name, exp.ragged_shapes)


# -- predictions ---------------------------------------------------------------------------------
class _SizeOnly:
    """Stands in for numpy in Experiment.output(shape, xp): the output array's size without
    allocating it (a broadcast view reports the full nbytes)."""

    nan = math.nan

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def full(shape, value, dtype=None):
        return np.broadcast_to(np.zeros((), dtype=dtype), shape)


def output_bytes(experiment, shape) -> int:
    """Bytes of the output array: what the kernel must write."""
    return int(experiment.output(shape, _SizeOnly()).nbytes)


def predicted_quantities(spec) -> dict[str, int] | None:
    """The predicted value of every quantity in QUANTITIES for one run, or None when the variant
    has no access model. The replay test calls this too, so both sides predict the same way."""
    access = spec.variant.access
    if access is None:
        return None
    model = access(spec.params, spec.shape)
    check_launch(model, spec.variant.launch(spec.params, spec.shape))
    p = predict(model)
    out = {q.key: int(v) for q in Q.FIDELITY if (v := Q.predicted_value(q, p)) is not None}
    for key, (count, _) in UNMODELLED.items():
        if out.get(count) == 0:  # none of its instructions run: nothing of it to count either
            out[key] = 0
    written = output_bytes(spec.experiment, spec.shape)
    out["dram_read_bytes"] = int(model.dram_compulsory_bytes) - written
    out["dram_write_bytes"] = written
    return out


def measured_quantities(measured: dict) -> dict[str, float]:
    """The quantities of QUANTITIES from measured values by key (gpulab.jobs.profile.measure, or the
    recorded rows of a run): the derived ones computed again from the others."""
    values = {k: v for k, v in measured.items() if not (Q.BY_KEY.get(k) and Q.BY_KEY[k].derived)}
    values |= Q.derive(values)
    return {q: values.get(q, math.nan) for q in QUANTITIES}


# -- comparing -----------------------------------------------------------------------------------
def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not (isinstance(x, float) and math.isnan(x))


def compare(predicted: dict | None, measured: dict, l2_bytes: int | None, no_model: str = "") -> list[dict]:
    """One row per quantity: predicted, measured, ratio, exact, verdict, note."""
    rows = []
    contradicted = Q.unmeasurable({k: v for k, v in measured.items() if not _derived(k)})
    for q in QUANTITIES:
        pred = predicted.get(q) if predicted else None
        meas = measured.get(q)
        row = {"quantity": q, "predicted": pred, "measured": meas if _finite(meas) else None,
               "ratio": None, "exact": None, "verdict": "", "note": ""}
        if q in contradicted:  # a count its inputs contradict (below zero): no number, the inputs said
            row["measured"] = None
            row["verdict"], row["note"] = Q.UNMEASURABLE, f"{contradicted[q]}; {UNMEASURABLE_NOTE}"
        elif not _finite(meas):
            row["verdict"], row["note"] = "not measured", "ncu gave no value"
        elif q in MEASURED_ONLY and pred is None:
            row["verdict"], row["note"] = "not modelled", UNMODELLED.get(q, ("", UNMODELLED_NOTE))[1]
        elif pred is None:
            row["verdict"], row["note"] = "no model", no_model
        else:
            row["ratio"] = meas / pred if pred else (1.0 if meas == 0 else math.inf)
            if q in COUNTED or q in MEASURED_ONLY:  # the latter predicted only as 0, where none of it runs
                row["exact"] = meas == pred
                row["verdict"] = "exact" if row["exact"] else "differs"
            elif q in HARDWARE:  # shown, never judged: row["exact"] stays None
                row["verdict"] = "hardware counter"
                row["note"] = "" if meas == pred else HARDWARE_NOTE
            else:
                row["exact"] = False  # DRAM bytes are judged by tolerance, never counted exactly
        rows.append(row)
    _judge_dram(rows, l2_bytes)
    _note_hardware_agreement(rows)
    return rows


def _note_hardware_agreement(rows: list[dict]) -> None:
    """Say so on a differing shared-wavefront row whose hardware counter equals the prediction."""
    by = {r["quantity"]: r for r in rows}
    for op in ("load", "store"):
        judged, hw = by.get(f"smem_{op}_wavefronts"), by.get(f"hw_smem_{op}_wavefronts")
        if judged is None or hw is None or judged["verdict"] != "differs" or hw["measured"] is None:
            continue
        if hw["measured"] == judged["predicted"]:
            note = HW_AGREES_NOTE.format(hw=hw["measured"], diff=judged["measured"] - judged["predicted"])
            # the conflicts row is the instrumented count minus the hardware's ideal: the same difference
            for row in (judged, by.get(f"smem_{op}_bank_conflicts")):
                if row is not None and row["verdict"] == "differs":
                    row["note"] = note


def _judge_dram(rows: list[dict], l2_bytes: int | None) -> None:
    by = {r["quantity"]: r for r in rows}
    read, write = by["dram_read_bytes"], by["dram_write_bytes"]
    if write["ratio"] is not None:
        write["verdict"] = "info"
        write["note"] = "bytes written; lines still dirty in L2 when the kernel ends are not counted"
    if read["ratio"] is None:
        return
    within = abs(read["ratio"] - 1.0) <= Q.DRAM_TOLERANCE
    if l2_bytes and read["predicted"] > l2_bytes:
        read["verdict"] = f"within {Q.DRAM_TOLERANCE:.0%}" if within else f"outside {Q.DRAM_TOLERANCE:.0%}"
        read["note"] = (f"inputs {read['predicted'] / 2**20:,.1f} MiB exceed the {l2_bytes / 2**20:,.0f} MiB L2"
                        + ("" if within else "; re-reads reach DRAM: the access order defeats the L2"
                           if read["ratio"] > 1 else "; less than the inputs: part of them never read"))
    else:
        read["verdict"] = "not judged"
        read["note"] = (f"inputs {read['predicted'] / 2**20:,.2f} MiB fit in the "
                        f"{(l2_bytes or 0) / 2**20:,.0f} MiB L2: re-reads hit L2 whatever the model"
                        + (f" (within {Q.DRAM_TOLERANCE:.0%} anyway)" if within else ""))


# -- the plan and the run ------------------------------------------------------------------------
def plan(experiments: Iterable | None = None, variants: Iterable[str] | None = None,
         which: str = "both", shapes: Iterable[str] | None = None,
         overrides: dict[str, tuple[int, ...]] | None = None) -> list:
    """The RunSpecs of a fidelity run: every variant at registry-default params (constraints that
    fail are skipped), at the first default shape and/or the ragged shapes. `shapes` ('MxNxK' texts,
    one experiment only) replace those shapes; `overrides` ({'S': (2, 4)}) set params of the variants
    that have them (as bench's --param; a name no chosen variant has is an error), every combination."""
    if which not in ("both", "default", "ragged"):
        raise GpulabError(f"shapes must be both, default or ragged, not {which!r}")
    exps = [get_experiment(e) for e in experiments] if experiments else all_experiments()
    wanted = set(variants or ())
    unknown = wanted - {v.name for exp in exps for v in exp.variants}
    if unknown:
        raise GpulabError(f"no variant named {', '.join(sorted(unknown))} in {', '.join(e.name for e in exps)}")
    shapes = list(shapes or ())
    if shapes and len(exps) != 1:
        raise GpulabError("shapes such as 3x1000x777 are one experiment's: name that one experiment, e.g. sgemm")
    overrides = dict(overrides or {})
    chosen = [v for exp in exps for v in exp.variants if not wanted or v.name in wanted]
    known = {p.name for v in chosen for p in v.params}
    if missing := sorted(set(overrides) - known):
        raise GpulabError(f"no chosen variant has a param {', '.join(missing)}; params: {', '.join(sorted(known)) or 'none'}")
    specs = []
    for exp in exps:
        chosen_shapes = [exp.parse_shape(s) for s in shapes]
        if not chosen_shapes:
            if which in ("both", "default"):
                chosen_shapes.append(exp.default_shape_list()[0])
            if which in ("both", "ragged"):
                chosen_shapes += [exp.shape(*dims) for dims in ragged_shapes(exp)]
        for v in exp.variants:
            if wanted and v.name not in wanted:
                continue
            mine = {k: vals for k, vals in overrides.items() if any(p.name == k for p in v.params)}
            for params in v.param_grid({k: (val,) for k, val in v.default_params().items()} | mine):
                for shape in chosen_shapes:
                    if v.constraints(params, shape) is None and (shapes or _needs_shape(exp, v, params, shape)):
                        specs.append(RunSpec(exp, v, params, shape))
    if not specs:
        raise GpulabError("nothing to measure: no variant matched")
    return specs


def _needs_shape(exp, variant, params, shape) -> bool:
    """False for a second (third, ...) ragged shape at which the variant's access model runs the
    same instructions as at the first ragged shape: it would measure the same code paths again."""
    ragged = [exp.shape(*dims) for dims in ragged_shapes(exp)]
    if shape not in ragged[1:] or variant.access is None:
        return True

    def names(s):
        return [ins.name for ins in variant.access(params, s).instructions]

    return names(shape) != names(ragged[0])


@dataclasses.dataclass
class RunResult:
    spec: object
    rows: list[dict]
    seconds: float
    error: str = ""

    @property
    def exact(self) -> tuple[int, int]:
        return Q.agreement(self.rows)


def measure_one(spec, profile: Callable | None = None, seed: int = 0, reports_dir: Path | None = None) -> RunResult:
    """Profile one run and compare. A failure of this run (a wrong answer, a fault) becomes a row;
    ncu missing or counters not permitted stop the whole fidelity run (every run would fail). The
    capture's report is kept in `reports_dir` (the reports folder beside the CSV; default
    results/<gpu>/reports/) and every row of the run names it (column ncu_report)."""
    profile = profile or profiling.profile
    start = time.perf_counter()
    base = {**spec.base_record(), "source_sha": spec.source_sha()}
    base.pop("expected_wrong", None)
    for k in spec.shape.names:
        base.pop(k.lower(), None)
    try:
        prof = profile(spec, seed=seed, reports_dir=reports_dir, job="fidelity")
    except (ncu_mod.NcuNotFound, ncu_mod.CountersNotPermitted):
        raise
    except GpulabError as exc:
        row = {**base, "quantity": FAILED_RUN, "verdict": "error", "note": " ".join(str(exc).split())}
        return RunResult(spec, [row], time.perf_counter() - start, str(exc))
    try:
        predicted = predicted_quantities(spec)
        why = "" if predicted is not None else f"{spec.experiment.name} {spec.variant.name} has no access model yet"
    except NotModelled as exc:
        predicted, why = None, str(exc)
    except (GpulabError, ValueError) as exc:
        predicted, why = None, f"the access model failed: {exc}"
    info = prof.info or {}
    env = info.get("env", {})
    rows = compare(predicted, measured_quantities(prof.measured), info.get("device", {}).get("l2_bytes"), why)
    for r in rows:
        r["ncu_metric"] = Q.metric_text(r["quantity"])
    stamp = {"ncu_version": prof.ncu_version, **{k: env.get(k) for k in ("gpu", "arch", "driver", "nvrtc", "date")},
             "ncu_report": prof.report_ref}
    out = [{**base, **r, **stamp} for r in rows]
    return RunResult(spec, out, time.perf_counter() - start)


def fidelity_path(gpu_slug: str, results_root: Path | None = None) -> Path:
    return card_folder(gpu_slug, results_root) / FILE_NAME


def save(path: Path, results: list[RunResult]) -> None:
    """Upsert, under the file's lock: rows of the runs just measured replace any earlier rows of the
    same runs (lab.config_run_key: those recorded before the variant gained a param too). A run that
    failed replaces nothing: the rows recorded for it stay (its error row is written only where it
    has none), so a broken ncu never costs a measurement."""
    with locked(path):
        # a file without the run columns is refused (DamagedFile), not read as rows of default configs
        old = read_csv(path, required=RUN_KEY) if Path(path).exists() else []
        measured = {config_run_key(r) for r in old if r.get("verdict") != "error"}
        new = [r for res in results for r in res.rows if not (res.error and config_run_key(r) in measured)]
        keys = {config_run_key(r) for r in new}
        if new:
            write_csv(path, [r for r in old if config_run_key(r) not in keys] + new)


def gpu_slug_of(results: list[RunResult]) -> str | None:
    for res in results:
        for r in res.rows:
            if r.get("gpu"):
                return gpu_slug(str(r["gpu"]))
    return None


# -- replay (CPU): the recorded numbers against fresh predictions ---------------------------------
def spec_from_row(row: dict):
    """The RunSpec a recorded row describes, or (None, why) when it no longer exists."""
    try:
        exp = get_experiment(str(row["experiment"]))
        v = exp.variant(str(row["variant"]))
        params = parse_params_label(row.get("params"))
        (params,) = v.param_grid({k: (val,) for k, val in params.items()})
        shape = exp.parse_shape(str(row["shape"]))
    except GpulabError as exc:
        return None, str(exc)
    return RunSpec(exp, v, params, shape), ""


def changed_kernels(rows: list[dict]) -> list[str]:
    """The runs whose kernel source (RunSpec.source_sha: the .cu file and its headers) changed since measured:
    their recorded counts describe another kernel, so they must be measured again."""
    out, seen = [], set()
    for r in rows:
        key = run_key(r)
        if key in seen or not r.get("source_sha"):
            continue
        seen.add(key)
        spec, _ = spec_from_row(r)
        if spec is not None and spec.source_sha() != r["source_sha"]:
            out.append(f"{spec.label} (measured {r['source_sha']}, now {spec.source_sha()})")
    return out


def replay(rows: list[dict]) -> tuple[list[str], int, list[str]]:
    """(failures, quantities checked, runs skipped with why): every counted quantity recorded as
    exact must still equal the recorded ncu number under the current models."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if r.get("exact") is True and r.get("quantity") in COUNTED:
            groups.setdefault(run_key(r), []).append(r)
    failures, skipped, checked = [], [], 0
    for key, recorded in groups.items():
        spec, why = spec_from_row(recorded[0])
        if spec is None:
            skipped.append(f"{' '.join(key)}: {why}")
            continue
        predicted = predicted_quantities(spec)
        if predicted is None:
            failures.append(f"{spec.label}: the access model that matched the card is gone")
            continue
        changed = recorded[0].get("source_sha") not in (None, spec.source_sha())
        for r in recorded:
            checked += 1
            now, then = predicted.get(r["quantity"]), r["measured"]
            if now != then:
                failures.append(
                    f"{spec.label}: {r['quantity']} predicted {now:,} now, ncu counted {then:,.0f} on {r.get('gpu')}"
                    + (" (the kernel source changed since: re-run gpulab fidelity on the card)" if changed else
                       " (same kernel source: the access model changed)"))
    return failures, checked, skipped


# -- rejudge (CPU): recorded measurements under the current models and rules ----------------------
RUN_COLUMNS = ("experiment", "variant", "params", "shape", "source_sha")
STAMP_COLUMNS = ("ncu_version", "gpu", "arch", "driver", "nvrtc", "date", "ncu_report")


def _derived(quantity: str) -> bool:
    q = Q.BY_KEY.get(quantity)
    return bool(q and q.derived)


def report_measurements(folder: Path | None, spec, row: dict) -> tuple[dict[str, float], str]:
    """(every quantity the run's kept report measures, '') or ({}, why not): the report its rows name
    (column ncu_report, relative to the CSV's `folder`), read again through the report interface."""
    ref = row.get("ncu_report")
    if folder is None or not ref:
        return {}, ""
    path = Path(folder) / str(ref)
    if not path.is_file():
        return {}, f"its report {ref} is not there"
    try:
        launch = ncu_mod.single_launch(ncu_reader.read_launches(path), spec.experiment.entry)
    except GpulabError as exc:
        return {}, f"its report {ref} could not be read ({' '.join(str(exc).split())})"
    return {k: v for k, v in Q.measure(launch.metrics).items() if not math.isnan(v)}, ""


def rejudge(rows: list[dict], folder: Path | None = None,
            chosen: Callable[[dict], bool] | None = None) -> tuple[list[dict], list[str]]:
    """(the rows again, what was left as recorded and why): each run's counted quantities (of the
    runs `chosen` accepts, default all; the others stay as they are) get fresh predictions and
    verdicts from its recorded ncu numbers, which are never changed. Runs whose
    kernel source changed since they were measured, or that no longer exist, stay as recorded (they
    need the card); so do the DRAM rows, whose verdict needs the card's L2 size. A quantity recorded
    from another ncu metric than the one gpulab reads for it now, or derived from counts the run did
    not record, is read from the run's kept report where `folder` (the CSV's folder) holds it and the
    report has the metric (its row then names the metric read now); else it stays as recorded.
    Quantities no longer compared are dropped, and none is added that the run did not record."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(run_key(r), []).append(r)
    out, kept = [], []
    for key, recorded in groups.items():
        if chosen is not None and not chosen(recorded[0]):
            out += recorded
            continue
        if unknown := [r for r in recorded if r.get("quantity") not in (*QUANTITIES, FAILED_RUN)]:
            kept.append(f"{' '.join(key)}: {', '.join(str(r.get('quantity')) for r in unknown)} is not a quantity "
                        "gpulab compares")
            out += unknown
            recorded = [r for r in recorded if r not in unknown]
            if not recorded:
                continue
        spec, why = spec_from_row(recorded[0])
        if spec is None or recorded[0].get("source_sha") != spec.source_sha() or any(r.get("verdict") == "error" for r in recorded):
            out += recorded
            kept.append(f"{' '.join(key)}: " + (why or "the kernel changed since, or the run failed: measure it again"))
            continue
        # A recorded number is re-judged only if it came from the metric that measures its quantity
        # today; one counted by another metric is read again from the run's report (which holds every
        # metric the capture asked for), or stays as recorded (its row names that metric). A derived
        # quantity is computed again from the run's inputs, recorded or in the report, whatever
        # formula its row was recorded under; where an input is missing it stays as recorded too.
        other_metric = {r["quantity"] for r in recorded if not _derived(r["quantity"])
                        and Q.metric_text(r["quantity"]) not in ("", r.get("ncu_metric") or "")}
        values = {r["quantity"]: r["measured"] for r in recorded if r.get("measured") is not None}
        # a count its recorded inputs contradict (below zero) is unmeasurable, not missing an input
        contradicted = Q.unmeasurable({k: v for k, v in values.items() if not _derived(k)})
        no_inputs = {r["quantity"] for r in recorded if _derived(r["quantity"]) and r["quantity"] not in contradicted
                     and math.isnan(measured_quantities(values).get(r["quantity"], math.nan))}
        from_report, unread = report_measurements(folder, spec, recorded[0]) if other_metric | no_inputs else ({}, "")
        refreshed = other_metric & set(from_report)
        values |= {q: from_report[q] for q in refreshed}
        for q, v in from_report.items():
            values.setdefault(q, v)  # counts the rows do not hold: inputs of a derived quantity
        recomputed = measured_quantities(values)
        other_metric -= refreshed
        contradicted = Q.unmeasurable({k: v for k, v in values.items() if not _derived(k)})
        no_inputs = {r["quantity"] for r in recorded if _derived(r["quantity"]) and r["quantity"] not in contradicted
                     and math.isnan(recomputed.get(r["quantity"], math.nan))}
        tail = f" ({unread})" if unread else ""
        if other_metric:
            kept.append(f"{' '.join(key)}: {', '.join(sorted(other_metric))} recorded from another ncu metric than "
                        f"gpulab reads now: measure it again{tail}")
        if no_inputs:
            kept.append(f"{' '.join(key)}: {', '.join(sorted(no_inputs))} computed from counts this run did not "
                        f"record: measure it again{tail}")
        stale = other_metric | no_inputs
        measured = {q: v for q, v in values.items() if q not in stale}
        predicted = predicted_quantities(spec)
        by = {r["quantity"]: r for r in recorded}
        base = {c: recorded[0].get(c) for c in RUN_COLUMNS}
        stamp = {c: recorded[0][c] for c in STAMP_COLUMNS if c in recorded[0]}
        for r in compare(predicted, measured_quantities(measured), None):
            if r["quantity"] not in by:
                continue
            if r["quantity"] in DRAM or r["quantity"] in stale:
                out.append(by[r["quantity"]])
                continue
            out.append({**base, **r, "ncu_metric": Q.metric_text(r["quantity"]), **stamp})
    return out, kept


def chosen_runs(experiments: Iterable[str] | None = None,
                variants: Iterable[str] | None = None) -> Callable[[dict], bool] | None:
    """Which recorded runs `gpulab fidelity EXPERIMENT... --variant V --rejudge` means: a test of a
    row (None: every run); names that are no experiment or variant are refused as plan() refuses them."""
    if not experiments and not variants:
        return None
    exps = [get_experiment(e) for e in experiments] if experiments else all_experiments()
    names, wanted = {e.name for e in exps}, set(variants or ())
    if unknown := wanted - {v.name for exp in exps for v in exp.variants}:
        raise GpulabError(f"no variant named {', '.join(sorted(unknown))} in {', '.join(e.name for e in exps)}")
    return lambda row: row.get("experiment") in names and (not wanted or row.get("variant") in wanted)


def rejudge_file(path: Path, chosen: Callable[[dict], bool] | None = None) -> tuple[list[dict], list[str], bool]:
    """rejudge() one fidelity CSV in place, under its lock (the runs `chosen` accepts, default all):
    (rows, what was left as recorded, whether the file was rewritten). A damaged file (no `measured`
    column, no rows, a quantity gpulab does not compare, ...) is refused with DamagedFile; the file
    is rewritten only when a prediction or verdict changed."""
    with locked(path):
        old = read_csv(path, required=Q.FIDELITY_REQUIRED_COLUMNS, need_rows=True)
        for row, line in zip(old, old.lines):
            if row.get("quantity") not in (*QUANTITIES, FAILED_RUN):
                raise DamagedFile(path, line, "quantity", f"{str(row.get('quantity'))[:40]!r} is not a quantity gpulab "
                                  f"compares ({', '.join(QUANTITIES[:3])}, ...: gpulab.quantities)")
        rows, kept = rejudge(old, Path(path).parent, chosen)
        changed = to_csv_text(rows) != to_csv_text(old)
        if changed:
            write_csv(path, rows)
    return rows, kept, changed
