"""Records: one flat dict per run, and the CSV they live in (the contract everything else reads).

Columns carry their units in their names. The environment (card, driver, CUDA, versions, date) is
in every row, so a CSV row stands on its own. Files are written atomically: a temporary file in the
same folder, then a rename, so an interrupted run never leaves a half-written CSV.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math
import os
from pathlib import Path
from typing import Iterable

import gpulab

# The leading columns, in order; anything else a record carries follows in first-seen order.
CORE_COLUMNS = (
    "experiment", "variant", "params", "shape",
    "correct", "expected_wrong", "max_rel_err", "wrong_count", "first_wrong",
    "time_ms", "time_min_ms", "time_max_ms", "reps", "l2_flushed",
    "gflops", "gbps", "pct_of_cublas", "pct_of_ceiling", "ceiling", "speedup_vs_baseline",
    "reg_per_thread", "smem_static_bytes", "smem_dynamic_bytes", "spill_stores_bytes",
    "spill_loads_bytes", "stack_frame_bytes", "barriers", "cmem_bytes",
    "grid", "block", "skip_reason",
)
ENV_COLUMNS = ("gpu", "arch", "driver", "cuda_runtime", "nvrtc", "cupy", "gpulab", "date")


def environment(device=None, arch: str = "") -> dict:
    """Who ran where: the card and the software versions, and the date (UTC, ISO 8601)."""
    from gpulab.gpu.compile import nvrtc_version

    env = {
        "gpu": device.name if device else "none",
        "arch": arch or (device.arch if device else ""),
        "driver": "",
        "cuda_runtime": device.cuda_runtime_version if device else "",
        "nvrtc": nvrtc_version(),
        "cupy": "",
        "gpulab": gpulab.__version__,
        "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
    }
    if device is not None:
        from gpulab.gpu.device import nvidia_driver_string
        import cupy

        env["driver"] = nvidia_driver_string()
        env["cupy"] = cupy.__version__
    return env


def columns_for(rows: Iterable[dict]) -> list[str]:
    seen: dict[str, None] = {}
    rows = list(rows)
    for c in CORE_COLUMNS:
        if any(c in r for r in rows):
            seen[c] = None
    for r in rows:
        for c in r:
            if c not in ENV_COLUMNS:
                seen.setdefault(c, None)
    for c in ENV_COLUMNS:
        if any(c in r for r in rows):
            seen[c] = None
    return list(seen)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return repr(round(value, 6)) if abs(value) >= 1e-3 else f"{value:.6g}"
    if isinstance(value, (tuple, list)):
        return "x".join(str(v) for v in value)
    return str(value)


def to_csv_text(rows: list[dict]) -> str:
    cols = columns_for(rows)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({c: _cell(r.get(c)) for c in cols})
    return buf.getvalue()


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` (text as UTF-8, or bytes: a PNG) all at once."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_csv(path: Path, rows: list[dict]) -> None:
    write_atomic(path, to_csv_text(rows))


def _parse(value: str):
    if value == "":
        return None
    if value in ("true", "false"):
        return value == "true"
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def read_csv(path: Path) -> list[dict]:
    """Rows back as dicts, numbers as numbers, booleans as booleans, empty cells as None."""
    with open(path, newline="") as f:
        return [{k: _parse(v) for k, v in row.items()} for row in csv.DictReader(f)]
