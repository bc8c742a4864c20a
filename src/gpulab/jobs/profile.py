"""Counters for one run: capture one launch under Nsight Compute in a separate process, put the
measured quantities beside the model's predictions, and write them into the run's record.

    spec -> gpulab.run.ncu_child (the child program, under ncu: one captured launch) -> .ncu-rep
         -> gpulab.gpu.ncu_reader (NVIDIA's report interface) -> {metric: float}
         -> quantities (gpulab.quantities: the one table of what is measured)
         + predicted counters (gpulab.model.predict)
         -> one record, upserted into results/<gpu>/profile.csv (gpulab.records.upsert_runs)

Every capture's report is kept beside the rows it produced, in the folder `reports/` next to their
CSV (results/<gpu>/reports/ by default), named by the run and the job that captured it
(report_name); the row names it (column ncu_report, relative to the CSV's folder), so the numbers of
a row can be read again from the report that gave them (gpulab fidelity --rejudge, the CPU tests).

gpulab.gpu.ncu builds and runs the ncu commands; gpulab.run.args reads a run from the command
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
from gpulab.gpu import ncu_reader, ncu_source
from gpulab.gpu.device import probe
from gpulab.run.lab import config_run_key
from gpulab.model.predict import predict
from gpulab.run.ncu_child import LAUNCH_SKIP, target_argv
from gpulab.records import card_folder, check_run_file, upsert_runs


# -- predictions --------------------------------------------------------------------------------
def access_model(spec):
    """(the variant's access model at this config, '') or (None, why there is none): the vendor
    library, a variant that declares no model, or a model that declines this config (NotModelled)."""
    if spec.variant is None:
        return None, (f"{spec.library} is the vendor library: gpulab does not hold its code, so it has no access "
                      "model")
    access = spec.variant.access
    if access is None:
        return None, f"{spec.experiment.name} {spec.variant.name} declares no access model yet"
    try:
        return access(spec.params, spec.shape), ""
    except GpulabError as exc:
        return None, str(exc)


def predicted_counters(spec) -> tuple[dict | None, str]:
    """(the model's predicted counters, '') or (None, why there are none). This is the one place
    that calls gpulab.model.predict: `Variant.access(params, shape)` gives the access model."""
    model, why = access_model(spec)
    if model is None:
        return None, why
    try:
        return predict(model, launch=spec.variant.launch(spec.params, spec.shape)), ""
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
    report_path: Path | None = None  # the capture's report, where it was kept
    report_ref: str = ""  # how the row names it: its path relative to the CSV's folder, or as given (--out)
    missing: tuple[str, ...] = ()
    kernel: str = ""  # the captured kernel's name, as ncu reports it
    # A library call's other kernels (name, duration under ncu in ns), longest first: their counts,
    # bytes and times are added into `measured` (quantities.measure_call); rates and stalls are not.
    other_kernels: tuple[tuple[str, float], ...] = ()
    full: bool = False  # a `--set full` capture: the report is one to open in ncu-ui
    reader: str = ""  # the report interface that read it (gpulab.gpu.ncu_reader.Interface.describe)

    @property
    def kernels(self) -> int:
        """How many kernels the counted quantities add up: 1, or a library call's several."""
        return 1 + len(self.other_kernels)

    @property
    def name(self) -> str:
        p = self.spec.variant.params_label(self.spec.params) if self.spec.variant else ""
        return f"{self.spec.name}{' ' + p if p else ''}"

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
        r |= {"ncu_version": self.ncu_version, "ncu_launch_skip": LAUNCH_SKIP, "ncu_kernel": self.kernel,
              "ncu_other_kernels": "; ".join(name for name, _ in self.other_kernels),
              "ncu_kernels": self.kernels,
              "ncu_report": self.report_ref}
        return r | info.get("env", {})


def measure(launch: ncu_mod.KernelResult, info: dict) -> dict[str, Any]:
    """Every quantity of gpulab.quantities from one profiled launch, the driver's theoretical
    occupancy from the child's info, and the top stall."""
    m: dict[str, Any] = Q.measure(launch.metrics)
    m["theoretical_occupancy_pct"] = info.get("occupancy", {}).get("theoretical_occupancy_pct", math.nan)
    top = Q.top_stalls({r: m[Q.stall_key(r)] for r in Q.STALL_REASONS}, 1)
    m["top_stall"] = top[0][0] if top else ""
    return m


# What a library kernel's record needs that gpulab knows of its own kernels from the compile: its
# resources and launch, and the occupancy they allow, as ncu reports them.
LIBRARY_LAUNCH_METRICS = (
    "launch__registers_per_thread", "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
    "sm__maximum_warps_per_active_cycle_pct", "launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps",
)
# ncu's occupancy limits by gpulab.gpu.occupancy's names of the resources.
_LIMITS = {"warps": "launch__occupancy_limit_warps", "blocks per SM": "launch__occupancy_limit_blocks",
           "registers": "launch__occupancy_limit_registers", "shared memory": "launch__occupancy_limit_shared_mem"}


def library_facts(launch: ncu_mod.KernelResult) -> dict:
    """A library kernel's resources, launch and theoretical occupancy from its counters: the info a
    variant's child reports from the compile (gpulab.run.ncu_child.kernel_facts)."""
    def whole(metric: str) -> int | None:
        value = launch.get(metric)
        return None if math.isnan(value) else int(value)
    limits = {name: whole(metric) for name, metric in _LIMITS.items()}
    known = {k: v for k, v in limits.items() if v is not None}
    blocks = min(known.values()) if known else None
    block = launch.dims("block")
    return {
        "resources": {"reg_per_thread": whole("launch__registers_per_thread"),
                      "smem_static_bytes": whole("launch__shared_mem_per_block_static")},
        "launch": {"grid": launch.dims("grid"), "block": block,
                   "smem_dynamic_bytes": whole("launch__shared_mem_per_block_dynamic")},
        "occupancy": {
            "blocks_per_sm": blocks,
            "warps_per_block": math.ceil(math.prod(block) / 32) if block else None,
            "theoretical_occupancy_pct": launch.get("sm__maximum_warps_per_active_cycle_pct"),
            "occupancy_limiter": ", ".join(k for k, v in known.items() if v == blocks),
        },
    }


def child_env() -> dict[str, str]:
    """The profiled program imports the same gpulab as this process, installed or not."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)  # the folder that holds the package gpulab
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


# The folder beside a CSV that holds the reports its rows came from (results/<gpu>/reports/).
REPORTS_FOLDER = "reports"


def reports_folder(csv_path: Path) -> Path:
    return Path(csv_path).parent / REPORTS_FOLDER


def report_name(spec, job: str = "profile") -> str:
    """The report's file name: the run (experiment, variant, params, shape) and the job that captured
    it ('profile', 'fidelity', 'source'), so two jobs' captures of one run never overwrite each other."""
    p = "-".join(f"{k}{v}" for k, v in spec.params.items())
    name = f"{spec.experiment.name}-{spec.name}{'-' + p if p else ''}-{spec.shape.label}-{job}"
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".ncu-rep"


def capture_request(spec, info_path: Path, seed: int = 0, **mode) -> ncu_mod.CaptureRequest:
    """The capture of `spec`'s one launch by the child program (a library's: every kernel of its one
    call inside the profiler range); `mode`: metrics, full_set or source_counters
    (gpulab.gpu.ncu.CaptureRequest)."""
    target = tuple(target_argv(spec, info_path, seed))
    mode = {"metrics": ()} | mode
    if spec.variant is None:
        if mode["metrics"]:
            mode["metrics"] = (*mode["metrics"], *LIBRARY_LAUNCH_METRICS)
        return ncu_mod.CaptureRequest(target=target, kernel_name="", launch_skip=0, profiler_range=True, **mode)
    return ncu_mod.CaptureRequest(target=target, kernel_name=spec.experiment.entry, launch_skip=LAUNCH_SKIP, **mode)


def profile(spec, *, full: bool = False, report_out: Path | None = None, results_root: Path | None = None,
            seed: int = 0, ncu: str | None = None, reports_dir: Path | None = None, job: str = "profile") -> Profile:
    """Profile one launch of `spec` under ncu (with `full`, every section too: a report to open in
    ncu-ui) and read its report. The report is kept: at `report_out` (--full --out), else in
    `reports_dir` (the reports folder beside the CSV the row will join), else in
    results/<gpu>/reports/, as report_name(spec, job)."""
    ncu = ncu or ncu_mod.find_ncu()
    metrics = Q.metric_names()
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-") as tmp:
        info_path = Path(tmp) / "target.json"
        request = capture_request(spec, info_path, seed, metrics=tuple(metrics), full_set=full)
        cap = ncu_mod.capture(request, Path(tmp) / "capture.ncu-rep", ncu, child_env())
        if not info_path.exists():
            raise ncu_mod.NcuFailed("the profiled program exited without writing its info file: "
                                    + (" / ".join(ncu_mod.last_lines(cap.capture_output)) or "no output"))
        info = json.loads(info_path.read_text())
        if report_out is not None:
            saved = Path(report_out)
            saved = saved if saved.suffix == ".ncu-rep" else saved.with_name(saved.name + ".ncu-rep")
            ref = str(saved)
        else:
            folder = Path(reports_dir) if reports_dir else card_folder(info["device"]["slug"], results_root) / REPORTS_FOLDER
            saved = folder / report_name(spec, job)
            ref = f"{REPORTS_FOLDER}/{saved.name}"
        saved.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(cap.report), str(saved))  # kept before it is read: an unreadable one can be read later
    interface = ncu_reader.find_interface(ncu)
    launches = ncu_reader.read_launches(saved, interface)
    if spec.variant is None:  # a library call: the kernel it spent its time in, and the rest named
        launch, *others = ncu_mod.range_launches(launches)
    else:
        launch, others = ncu_mod.single_launch(launches, spec.experiment.entry), []
    if spec.variant is None:
        info |= library_facts(launch)
    predicted, note = predicted_counters(spec)
    measured = measure(launch, info)
    if others:  # the call's counts, bytes and time, all its kernels together
        measured |= Q.measure_call([launch.metrics, *(k.metrics for k in others)])
    return Profile(spec, measured, predicted, note, info, dict(launch.metrics), ncu_version=ncu_mod.ncu_version(ncu),
                   report_path=saved, report_ref=ref, missing=tuple(ncu_mod.missing_metrics(launch, metrics)),
                   kernel=launch.kernel, other_kernels=tuple((k.kernel, k.get("gpu__time_duration.sum")) for k in others),
                   full=full, reader=interface.describe())


def sass_profile(spec, seed: int = 0, ncu: str | None = None, reports_dir: Path | None = None):
    """The same launch as `profile` captures, counted per SASS instruction (ncu's source counters):
    (kernel name, [gpulab.gpu.ncu_source.SassRow]). The report is kept in `reports_dir` when given
    (as report_name(spec, 'source')), else dropped."""
    ncu = ncu or ncu_mod.find_ncu()
    with tempfile.TemporaryDirectory(prefix="gpulab-ncu-") as tmp:
        request = capture_request(spec, Path(tmp) / "target.json", seed, source_counters=True)
        report = Path(reports_dir) / report_name(spec, "source") if reports_dir else Path(tmp) / "source.ncu-rep"
        ncu_source.capture_source(request, report, ncu, child_env())
        return ncu_source.read_source(report, ncu_reader.find_interface(ncu))


def profile_csv_path(prof: Profile, results_root: Path | None = None) -> Path:
    return card_folder(prof.info["device"]["slug"], results_root) / Q.PROFILE_FILE


def check_profile_csv(csv_path: Path | None = None, results_root: Path | None = None) -> None:
    """Before any capture: the CSV the records will join (default: this card's profile.csv) would be
    accepted, so a damaged one is refused now, not after minutes under ncu. Without a GPU there is
    no default to check; the capture says why it cannot run."""
    if csv_path is None:
        info, _ = probe()
        if info is None:
            return
        csv_path = card_folder(info.slug, results_root) / Q.PROFILE_FILE
    check_run_file(csv_path)


def save_profiles(profiles: list[Profile], csv_path: Path | None = None) -> Path:
    """Join the profiles' records to the CSV (default: the first profile's card's profile.csv); the path."""
    path = csv_path or profile_csv_path(profiles[0])
    upsert_runs(path, [p.record() for p in profiles], key=config_run_key)
    return path
