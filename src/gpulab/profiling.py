"""Counters for one run: capture one launch under Nsight Compute in a separate process, put the
measured quantities beside the model's predictions, and write them into the run's record.

    spec -> gpulab.ncu_child (the child program, under ncu: one captured launch) -> raw CSV
         -> {metric: float} -> quantities (gpulab.quantities: the one table of what is measured)
         + predicted counters (gpulab.model.predict)
         -> one record, upserted into results/<gpu>/profile.csv (gpulab.records.upsert)

gpulab.gpu.ncu builds and runs the ncu commands; gpulab.run_args reads a run from the command
line for both the CLI and the child; this module joins them for one run.
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

from gpulab import quantities as Q
from gpulab.errors import GpulabError
from gpulab.gpu import ncu as ncu_mod
from gpulab.gpu import ncu_source
from gpulab.model.predict import predict
from gpulab.ncu_child import LAUNCH_SKIP, target_argv
from gpulab.records import run_key, upsert


# -- predictions --------------------------------------------------------------------------------
def predicted_counters(spec) -> tuple[dict | None, str]:
    """(the model's predicted counters, '') or (None, why there are none). This is the one place
    that calls gpulab.model.predict: `Variant.access(params, shape)` gives the access model."""
    access = getattr(spec.variant, "access", None)
    if access is None:
        return None, f"{spec.experiment.name} {spec.variant.name} declares no access model yet"
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
        q = Q.BY_KEY.get(key)
        value = Q.predicted_value(q, self.predicted) if q else None
        return None if value is None else float(value)

    def stalls(self) -> dict[str, float]:
        return {r: self.measured.get(Q.stall_key(r)) for r in Q.STALL_REASONS}

    def record(self) -> dict:
        """The run's record with the counters joined: measured as ncu_<key>, predicted as pred_<model key>."""
        info = self.info
        r = self.spec.base_record()
        r |= {k: v for k, v in info.get("check", {}).items()}
        r |= info.get("resources", {})
        launch = info.get("launch", {})
        r |= {"smem_dynamic_bytes": launch.get("smem_dynamic_bytes"),
              "grid": tuple(launch.get("grid", ())), "block": tuple(launch.get("block", ()))}
        for q in Q.ALL:
            if q.key == "theoretical_occupancy_pct":
                continue
            r[f"ncu_{q.key}"] = self.measured.get(q.key)
        r["ncu_top_stall"] = self.measured.get("top_stall", "")
        occ = info.get("occupancy", {})
        r |= {"theoretical_occupancy_pct": occ.get("theoretical_occupancy_pct"),
              "blocks_per_sm": occ.get("blocks_per_sm"), "occupancy_limiter": occ.get("occupancy_limiter")}
        for q in Q.COUNTED:
            value = self.prediction(q.key)
            if value is not None:
                r[f"pred_{q.predicted_as}"] = value
        r |= {"ncu_version": self.ncu_version, "ncu_launch_skip": LAUNCH_SKIP,
              "ncu_report": str(self.report_path) if self.report_path else ""}
        return r | info.get("env", {})


def measure(launch: ncu_mod.KernelResult, info: dict) -> dict[str, Any]:
    """Every quantity of gpulab.quantities from one profiled launch, the driver's theoretical
    occupancy from the child's info, and the top stall."""
    m: dict[str, Any] = Q.measure(launch.metrics)
    m["theoretical_occupancy_pct"] = info.get("occupancy", {}).get("theoretical_occupancy_pct", math.nan)
    top = Q.top_stalls({r: m[Q.stall_key(r)] for r in Q.STALL_REASONS}, 1)
    m["top_stall"] = top[0][0] if top else ""
    return m


def child_env() -> dict[str, str]:
    """The profiled program imports the same gpulab as this process, installed or not."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)  # the folder that holds the package gpulab
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def report_name(spec) -> str:
    p = "-".join(f"{k}{v}" for k, v in spec.params.items())
    name = f"{spec.experiment.name}-{spec.variant.name}{'-' + p if p else ''}-{spec.shape.label}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".ncu-rep"


def capture_request(spec, info_path: Path, seed: int = 0, **mode) -> ncu_mod.CaptureRequest:
    """The capture of `spec`'s one launch by the child program; `mode`: metrics, full_set or
    source_counters (gpulab.gpu.ncu.CaptureRequest)."""
    return ncu_mod.CaptureRequest(target=tuple(target_argv(spec, info_path, seed)), kernel_name=spec.experiment.entry,
                                  launch_skip=LAUNCH_SKIP, **({"metrics": ()} | mode))


def profile(spec, *, full: bool = False, report_out: Path | None = None, results_root: Path = Path("results"),
            seed: int = 0, ncu: str | None = None) -> Profile:
    """Profile one launch of `spec` under ncu; with `full`, also keep a `--set full` report
    (at `report_out`, else results/<gpu>/profiles/<name>.ncu-rep)."""
    ncu = ncu or ncu_mod.find_ncu()
    metrics = Q.metric_names()
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-") as tmp:
        info_path = Path(tmp) / "target.json"
        request = capture_request(spec, info_path, seed, metrics=tuple(metrics), full_set=full)
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
    ncu = ncu or ncu_mod.find_ncu()
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-") as tmp:
        request = capture_request(spec, Path(tmp) / "target.json", seed, source_counters=True)
        return ncu_source.parse_source_csv(ncu_source.capture_source(request, ncu, child_env()))


def profile_csv_path(prof: Profile, results_root: Path = Path("results")) -> Path:
    return results_root / prof.info["device"]["slug"] / Q.PROFILE_FILE


def save_profiles(profiles: list[Profile], csv_path: Path | None = None) -> Path:
    """Join the profiles' records to the CSV (default: the first profile's card's profile.csv); the path."""
    path = csv_path or profile_csv_path(profiles[0])
    upsert(path, [p.record() for p in profiles], run_key)
    return path
