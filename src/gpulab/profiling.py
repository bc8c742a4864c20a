"""Counters for one run: profile a variant under Nsight Compute in a separate process, put the
measured numbers beside the model's predictions, and write them into the run's record.

    spec -> profile_target (under ncu, one captured launch) -> raw CSV -> {metric: float}
         -> measured quantities (units in their names) + predicted counters (gpulab.model.predict)
         -> one record, upserted into results/<gpu>/profile.csv

Which metrics, and why these (every base name is in ncu 2025.3's gh100 list; tests check it):
- counted quantities: the L1TEX t-stage requests/sectors/bytes for global loads and stores, the
  shared-memory instructions with at least one active lane (`_pred_on_any`, the model's notion of
  a request), data-stage wavefronts and bank conflicts, DRAM bytes read and written;
- headline metrics of the Speed-of-Light, Occupancy, Scheduler and Warp State sections;
- warp stalls as `smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`: the warps
  per issue cycle in each state, i.e. the cycles a warp spends in it per instruction issued. That
  is what ncu's own Warp State Statistics section reports, and it comes from hardware counters in
  the same replay as everything else. The `smsp__pcsamp_*` sampling counters are not offered as
  --metrics for gh100 (they come only with the sampling sections) and the
  `smsp__average_warp_latency_issue_stalled_*` family divides by warps launched, so it grows with
  the loop trip count and does not compare across kernels of different lengths.
Theoretical occupancy is not among gh100's --metrics names either; the profiled program asks the
driver's occupancy calculator instead (the same number ncu's Occupancy section shows).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import gpulab
from gpulab.errors import GpulabError
from gpulab.gpu import ncu as ncu_mod
from gpulab.profile_target import LAUNCH_SKIP, make_spec, target_argv
from gpulab.report import readings

# The model names the ncu metric of each counter it predicts (and of those it measures beside):
# one source for both sides.
from gpulab.model.predict import NCU_HARDWARE, NCU_MEASURED_ONLY, NCU_METRICS

_METRIC = {**NCU_METRICS, **NCU_HARDWARE, **NCU_MEASURED_ONLY}


@dataclasses.dataclass(frozen=True)
class Quantity:
    """One measured number: its record key (column 'ncu_' + key), the ncu metric it comes from
    (None when derived from others), a label, and which direction is better (for compare)."""

    key: str
    metric: str | None
    label: str
    better: str | None = None
    kind: str = "count"  # count | ratio | pct | bytes | per | ns


def _counted(key: str, label: str, better: str | None = "lower", kind: str = "count") -> Quantity:
    return Quantity(key, _METRIC[key], label, better, kind)


_HW = "  the same, hardware counter (not exact)"
COUNTED: tuple[Quantity, ...] = (
    _counted("gmem_load_requests", "global load requests"),
    _counted("gmem_load_sectors", "global load sectors"),
    Quantity("gmem_load_sectors_per_request", None, "  sectors per load request", None, "ratio"),
    _counted("gmem_store_requests", "global store requests"),
    _counted("gmem_store_sectors", "global store sectors"),
    _counted("hw_gmem_store_sectors", _HW),
    Quantity("gmem_store_sectors_per_request", None, "  sectors per store request", None, "ratio"),
    _counted("smem_load_requests", "shared load requests (instructions)", None),
    _counted("hw_smem_load_requests", _HW, None),
    _counted("smem_load_wavefronts", "shared load wavefronts"),
    _counted("smem_load_bank_conflicts", "shared load bank conflicts"),
    _counted("smem_store_requests", "shared store requests (instructions)", None),
    _counted("hw_smem_store_requests", _HW, None),
    _counted("smem_store_wavefronts", "shared store wavefronts"),
    _counted("smem_store_bank_conflicts", "shared store bank conflicts"),
    _counted("l1tex_global_load_bytes", "L1TEX global load bytes", kind="bytes"),
    _counted("l1tex_global_store_bytes", "L1TEX global store bytes (hardware, not exact)", kind="bytes"),
    # cp.async (LDGSTS) alone; its global side is inside the global load counters above as well.
    # Its shared wavefronts are measured only: the model does not predict them.
    _counted("gmem_ldgsts_requests", "cp.async global requests"),
    _counted("smem_ldgsts_requests", "cp.async instructions", None),
    _counted("smem_ldgsts_wavefronts", "cp.async shared wavefronts (not modelled)"),
    _counted("smem_ldgsts_bank_conflicts", "cp.async shared bank conflicts (not modelled)"),
    Quantity("dram_read_bytes", "dram__bytes_read.sum", "DRAM bytes read", "lower", "bytes"),
    Quantity("dram_write_bytes", "dram__bytes_write.sum", "DRAM bytes written", "lower", "bytes"),
    Quantity("dram_bytes", None, "DRAM bytes read + written (vs compulsory)", "lower", "bytes"),
)
# The counted quantity whose prediction lives under another name in the model's output.
PREDICTED_AS = {"dram_bytes": "dram_compulsory_bytes",
               **{k: k.removeprefix("hw_") for k in NCU_HARDWARE if k.startswith("hw_")}}

HEADLINE: tuple[Quantity, ...] = (
    Quantity("duration_ns", "gpu__time_duration.sum", "duration under ncu (not a timing)", "lower", "ns"),
    Quantity("memory_throughput_pct", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
             "memory throughput", None, "pct"),
    Quantity("dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
             "DRAM throughput", None, "pct"),
    Quantity("l1tex_throughput_pct", "l1tex__throughput.avg.pct_of_peak_sustained_active",
             "L1/TEX throughput", None, "pct"),
    Quantity("l2_throughput_pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2 throughput", None, "pct"),
    Quantity("sm_throughput_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput", None, "pct"),
    # No better direction for hit rates: a kernel that stages data in shared memory loses L1 hits
    # because it stopped re-reading, which is the improvement.
    Quantity("l1_hit_rate_pct", "l1tex__t_sector_hit_rate.pct", "L1 hit rate", None, "pct"),
    Quantity("l2_hit_rate_pct", "lts__t_sector_hit_rate.pct", "L2 hit rate", None, "pct"),
    Quantity("theoretical_occupancy_pct", None, "theoretical occupancy (driver)", None, "pct"),
    Quantity("achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active",
             "achieved occupancy", "higher", "pct"),
    Quantity("warps_active_per_sm", "sm__warps_active.avg.per_cycle_active", "warps active per SM", "higher", "per"),
    Quantity("eligible_warps_per_scheduler", "smsp__warps_eligible.avg.per_cycle_active",
             "eligible warps per scheduler", "higher", "per"),
    Quantity("issue_slots_busy_pct", "smsp__issue_active.avg.pct_of_peak_sustained_active",
             "issue slots busy", "higher", "pct"),
)

STALL_REASONS = (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle",
    "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
    "not_selected", "selected", "short_scoreboard", "sleeping", "tex_throttle", "wait",
)


def stall_metric(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def stall_key(reason: str) -> str:
    return f"stall_{reason}_cycles_per_inst"


STALLS: tuple[Quantity, ...] = tuple(
    Quantity(stall_key(r), stall_metric(r), f"stall: {readings.stall_label(r)}", "lower", "per")
    for r in STALL_REASONS
)

# The rows of `gpulab compare`, in order: the key metrics of the Shared Memory Tiling wiki page (docs/SOURCES.md) plus the counted ones that move.
COMPARE_KEYS = (
    "duration_ns", "memory_throughput_pct", "dram_throughput_pct", "l1tex_throughput_pct",
    "l2_throughput_pct", "sm_throughput_pct", "l1_hit_rate_pct", "l2_hit_rate_pct",
    "gmem_load_requests", "gmem_load_sectors", "gmem_load_sectors_per_request",
    "l1tex_global_load_bytes", "smem_load_requests", "smem_load_bank_conflicts", "dram_read_bytes",
    "theoretical_occupancy_pct", "achieved_occupancy_pct", "eligible_warps_per_scheduler",
    "issue_slots_busy_pct",
)

QUANTITIES: dict[str, Quantity] = {q.key: q for q in (*COUNTED, *HEADLINE, *STALLS)}


def metric_names() -> list[str]:
    """Every metric a capture asks ncu for, each once."""
    return list(dict.fromkeys(q.metric for q in (*COUNTED, *HEADLINE, *STALLS) if q.metric))


def base_name(metric: str) -> str:
    """'dram__bytes_read.sum' -> 'dram__bytes_read' (the name ncu's metric list holds)."""
    return metric.split(".", 1)[0]


# -- predictions --------------------------------------------------------------------------------
def predicted_counters(spec) -> tuple[dict | None, str]:
    """(the model's predicted counters, '') or (None, why there are none). This is the one place
    that calls gpulab.model.predict: `Variant.access(params, shape)` gives the access model."""
    access = getattr(spec.variant, "access", None)
    if access is None:
        return None, f"{spec.experiment.name} {spec.variant.name} declares no access model yet"
    try:
        from gpulab.model.predict import predict
    except ImportError as exc:
        return None, f"gpulab.model.predict is not available ({exc})"
    try:
        return predict(access(spec.params, spec.shape), launch=spec.variant.launch(spec.params, spec.shape)), ""
    except GpulabError as exc:
        return None, str(exc)


# -- one profile --------------------------------------------------------------------------------
@dataclasses.dataclass
class Profile:
    spec: Any  # RunSpec
    measured: dict[str, Any]  # key -> float (and 'top_stall' -> reason)
    predicted: dict[str, Any] | None
    predicted_note: str
    info: dict  # what the profiled program reported (device, resources, occupancy, check)
    raw: dict[str, float]  # every metric ncu reported, by ncu name
    ncu_version: str = ""
    report_path: Path | None = None
    missing: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        p = self.spec.variant.params_label(self.spec.params)
        return f"{self.spec.variant.name}{' ' + p if p else ''}"

    def prediction(self, key: str) -> float | None:
        if not self.predicted:
            return None
        value = self.predicted.get(PREDICTED_AS.get(key, key))
        return float(value) if isinstance(value, (int, float)) else None

    def stalls(self) -> dict[str, float]:
        return {r: self.measured.get(stall_key(r)) for r in STALL_REASONS}

    def record(self) -> dict:
        """The run's record with the counters joined: measured as ncu_<key>, predicted as pred_<key>."""
        info = self.info
        r = self.spec.base_record()
        r |= {k: v for k, v in info.get("check", {}).items()}
        r |= info.get("resources", {})
        launch = info.get("launch", {})
        r |= {"smem_dynamic_bytes": launch.get("smem_dynamic_bytes"),
              "grid": tuple(launch.get("grid", ())), "block": tuple(launch.get("block", ()))}
        for q in (*COUNTED, *HEADLINE, *STALLS):
            if q.key == "theoretical_occupancy_pct":
                continue
            r[f"ncu_{q.key}"] = self.measured.get(q.key)
        r["ncu_top_stall"] = self.measured.get("top_stall", "")
        occ = info.get("occupancy", {})
        r |= {"theoretical_occupancy_pct": occ.get("theoretical_occupancy_pct"),
              "blocks_per_sm": occ.get("blocks_per_sm"), "occupancy_limiter": occ.get("occupancy_limiter")}
        for q in COUNTED:
            value = self.prediction(q.key)
            if value is not None:
                r[f"pred_{PREDICTED_AS.get(q.key, q.key)}"] = value
        r |= {"ncu_version": self.ncu_version, "ncu_launch_skip": LAUNCH_SKIP,
              "ncu_report": str(self.report_path) if self.report_path else ""}
        return r | info.get("env", {})


def measure(launch: ncu_mod.KernelResult, info: dict) -> dict[str, Any]:
    """The quantities of COUNTED, HEADLINE and STALLS from one profiled launch."""
    m: dict[str, Any] = {}
    for q in (*COUNTED, *HEADLINE, *STALLS):
        if q.metric:
            m[q.key] = launch.get(q.metric)
    for op in ("load", "store"):
        req, sec = m[f"gmem_{op}_requests"], m[f"gmem_{op}_sectors"]
        m[f"gmem_{op}_sectors_per_request"] = sec / req if req and not math.isnan(req) else 0.0
    m["dram_bytes"] = m["dram_read_bytes"] + m["dram_write_bytes"]
    m["theoretical_occupancy_pct"] = info.get("occupancy", {}).get("theoretical_occupancy_pct", math.nan)
    top = readings.top_stalls({r: m[stall_key(r)] for r in STALL_REASONS}, 1)
    m["top_stall"] = top[0][0] if top else ""
    return m


def child_env() -> dict[str, str]:
    """The profiled program imports the same gpulab as this process, installed or not."""
    env = dict(os.environ)
    root = str(Path(gpulab.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def report_name(spec) -> str:
    p = "-".join(f"{k}{v}" for k, v in spec.params.items())
    name = f"{spec.experiment.name}-{spec.variant.name}{'-' + p if p else ''}-{spec.shape.label}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".ncu-rep"


def profile(spec, *, full: bool = False, report_out: Path | None = None, results_root: Path = Path("results"),
            seed: int = 0, ncu: str | None = None) -> Profile:
    """Profile one launch of `spec` under ncu; with `full`, also keep a `--set full` report
    (at `report_out`, else results/<gpu>/profiles/<name>.ncu-rep)."""
    ncu = ncu or ncu_mod.find_ncu()
    metrics = metric_names()
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-") as tmp:
        info_path = Path(tmp) / "target.json"
        request = ncu_mod.CaptureRequest(
            target=tuple(target_argv(spec, info_path, seed)), kernel_name=spec.experiment.entry,
            launch_skip=LAUNCH_SKIP, metrics=tuple(metrics), full_set=full,
        )
        cap = ncu_mod.capture(request, Path(tmp) / "capture.ncu-rep", ncu, child_env())
        launch = ncu_mod.single_launch(ncu_mod.parse_csv(cap.csv_text), spec.experiment.entry)
        if not info_path.exists():
            raise ncu_mod.NcuFailed("the profiled program exited without writing its info file: "
                                    + (" / ".join(ncu_mod.last_lines(cap.capture_output)) or "no output"))
        info = json.loads(info_path.read_text())
        saved = None
        if full:
            saved = report_out or results_root / info["device"]["slug"] / "profiles" / report_name(spec)
            saved = Path(saved)
            if saved.suffix != ".ncu-rep":
                saved = saved.with_name(saved.name + ".ncu-rep")
            saved.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(cap.report), str(saved))
    predicted, note = predicted_counters(spec)
    return Profile(spec, measure(launch, info), predicted, note, info, dict(launch.metrics),
                   ncu_mod.ncu_version(ncu), saved, tuple(ncu_mod.missing_metrics(launch, metrics)))


def sass_profile(spec, seed: int = 0, ncu: str | None = None):
    """The same launch as `profile` captures, counted per SASS instruction (ncu's source page):
    (kernel name, [gpulab.gpu.ncu_source.SassRow])."""
    from gpulab.gpu import ncu_source

    ncu = ncu or ncu_mod.find_ncu()
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-") as tmp:
        request = ncu_mod.CaptureRequest(
            target=tuple(target_argv(spec, Path(tmp) / "target.json", seed)), kernel_name=spec.experiment.entry,
            launch_skip=LAUNCH_SKIP, metrics=(), source_counters=True,
        )
        return ncu_source.parse_source_csv(ncu_source.capture_source(request, ncu, child_env()))


def profile_csv_path(prof: Profile, results_root: Path = Path("results")) -> Path:
    return results_root / prof.info["device"]["slug"] / "profile.csv"


def upsert_records(path: Path, new: list[dict]) -> None:
    """Write `new` into the CSV at `path` (atomically), replacing any row of the same
    (experiment, variant, params, shape): the latest profile of a run is the one kept."""
    from gpulab.records import read_csv, write_csv

    def key(r):
        return tuple(str(r.get(k) if r.get(k) is not None else "") for k in ("experiment", "variant", "params", "shape"))

    rows = read_csv(path) if Path(path).exists() else []
    replaced = {key(r) for r in new}
    write_csv(path, [r for r in rows if key(r) not in replaced] + new)


def save_profiles(profiles: list[Profile], csv_path: Path | None = None) -> Path:
    """Join the profiles' records to the CSV (default: the first profile's card's profile.csv); the path."""
    path = csv_path or profile_csv_path(profiles[0])
    upsert_records(path, [p.record() for p in profiles])
    return path


# -- parsing the command line's variant arguments -----------------------------------------------
def parse_variant_arg(text: str) -> tuple[str, dict[str, int]]:
    """'v1' -> ('v1', {}); 'v1:TILE=16' or 'v1:TILE=16,BM=64' -> ('v1', {'TILE': 16, 'BM': 64})."""
    name, _, rest = text.partition(":")
    if not name.strip():
        raise GpulabError(f"'{text}' names no variant; write it as VARIANT or VARIANT:NAME=VALUE,...")
    params: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise GpulabError(f"'{text}': params after ':' look like NAME=VALUE (e.g. v1:TILE=16)")
        try:
            params[k.strip().upper()] = int(v)
        except ValueError:
            raise GpulabError(f"'{text}': {k.strip()}={v} is not a whole number") from None
    return name.strip(), params


def single_params(texts: list[str]) -> dict[str, int]:
    """--param NAME=V (repeatable), one value each."""
    from gpulab.lab import parse_param_overrides

    out = {}
    for name, values in parse_param_overrides(texts).items():
        if len(values) != 1:
            raise GpulabError(f"--param {name}: one config at a time (one value, e.g. {name}={values[0]})")
        out[name] = values[0]
    return out


def spec_for(experiment, variant_text: str, param_texts: list[str], shape):
    name, inline = parse_variant_arg(variant_text)
    flags = single_params(param_texts)
    clash = set(inline) & set(flags)
    if clash:
        raise GpulabError(f"{', '.join(sorted(clash))} given both in '{variant_text}' and as --param; give it once")
    return make_spec(experiment, name, inline | flags, shape)


__all__ = [
    "COUNTED", "HEADLINE", "STALLS", "Profile", "metric_names", "predicted_counters", "profile",
    "parse_variant_arg", "spec_for", "upsert_records",
]
