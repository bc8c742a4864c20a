"""Records: one flat dict per run, and the CSV they live in (the contract everything else reads).

Columns carry their units in their names. The environment (card, driver, CUDA, versions, date) is
in every row, so a CSV row stands on its own. Files are written atomically: a temporary file in the
same folder (a unique name per writer), then a rename, so an interrupted run never leaves a
half-written file; a read-modify-write holds a lock beside the file (`locked`, `upsert`), so two
processes never lose each other's update. Reading checks every row: a damaged file is named with its
line and column (DamagedFile), never turned silently into fewer or emptier rows.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as _dt
import io
import math
import os
import socket
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

import gpulab
from gpulab.errors import GpulabError

try:
    import fcntl
except ImportError:  # no POSIX locks (Windows)
    fcntl = None

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
# host and gpu_index: which machine and which of its GPUs timed the row (sweeps over several, gpulab.sweep).
ENV_COLUMNS = ("gpu", "arch", "driver", "cuda_runtime", "nvrtc", "cupy", "gpulab", "date", "host", "gpu_index")


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
        "host": socket.gethostname(),
        "gpu_index": "",
    }
    if device is not None:
        from gpulab.gpu.device import gpu_index, nvidia_driver_string
        import cupy

        env["driver"] = nvidia_driver_string()
        env["cupy"] = cupy.__version__
        env["gpu_index"] = gpu_index()
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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Temporary files are created private (0600); a finished file gets the mode any new file would.
_FILE_MODE = 0o666 & ~_umask()


def _cannot_write(path: Path, exc: OSError) -> GpulabError:
    return GpulabError(f"cannot write {path}: {exc.strerror or exc}; choose another path or make its folder "
                       "writable")


def _writable_target(path: Path) -> Path:
    """`path` as a file gpulab may replace: not a folder, its folder created if missing."""
    path = Path(path)
    if path.is_dir():
        raise GpulabError(f"{path} is a folder; give a file name, e.g. {path / 'out.csv'}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in path.parents if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            raise GpulabError(f"cannot write {path}: {blocker} is a file, not a folder") from None
        raise _cannot_write(path, exc) from None
    if not path.parent.is_dir():
        raise GpulabError(f"cannot write {path}: {path.parent} is not a folder")
    return path


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Write a new `path` whole or not at all: yields a temporary path (unique to this writer, in the
    same folder) to write; when the block ends without an error it replaces `path` in one rename, and
    on any error or interrupt (Ctrl-C) it is removed and `path` is left as it was."""
    path = _writable_target(path)
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    finally:
        if tmp.exists():
            tmp.unlink()


def check_writable(path: Path) -> None:
    """Fail now, before any work, if `path` could not be written later (a folder, no permission),
    creating nothing: a folder that does not exist yet is made when the file is written."""
    path = Path(path)
    if path.is_dir() or path.parent.is_dir():
        try:
            with replacing(path):  # a trial write, removed again
                raise _Probe
        except _Probe:
            pass
        return
    ancestor = next((p for p in path.parents if p.exists()), Path("."))
    if not ancestor.is_dir():
        raise GpulabError(f"cannot write {path}: {ancestor} is a file, not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise GpulabError(f"cannot write {path}: {ancestor} is not writable; choose another path")


class _Probe(Exception):
    """Ends check_writable's trial write before anything is replaced."""


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` (text as UTF-8) all at once: see `replacing`."""
    with replacing(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data, encoding="utf-8")


def write_csv(path: Path, rows: list[dict]) -> None:
    write_atomic(path, to_csv_text(rows))


# -- one writer at a time -------------------------------------------------------------------------
@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the lock of `path` (a `.NAME.lock` file beside it) for a read-modify-write, so that two
    processes updating the same file never both read the old version and one update is lost.
    Readers need no lock: files are only ever replaced whole (`replacing`)."""
    path = _writable_target(path)
    lock_path = path.with_name(f".{path.name}.lock")
    try:
        handle = open(lock_path, "a")
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    with handle:
        if fcntl is not None:  # no POSIX locks (Windows): one writer at a time is up to the user
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


def upsert(path: Path, rows: list[dict], key: Callable[[dict], object]) -> list[dict]:
    """Under the file's lock: the CSV at `path` with every row whose key(row) is among the new rows'
    keys replaced by `rows` (appended); rows of other keys kept in their order. Returns what was
    written. A damaged file is refused (DamagedFile), never overwritten."""
    with locked(path):
        old = read_csv(path) if Path(path).exists() else []
        keys = {key(r) for r in rows}
        out = [r for r in old if key(r) not in keys] + list(rows)
        write_csv(path, out)
    return out


def update_text(path: Path, change: Callable[[str], str]) -> bool:
    """Under the file's lock: read `path`, apply `change` to its text, write the result if it differs.
    True when the file was rewritten."""
    with locked(path):
        text = read_text(path)
        new = change(text)
        if new == text:
            return False
        write_atomic(path, new)
    return True


def read_text(path: Path) -> str:
    """A text file's content, or one line saying why it cannot be read (GpulabError)."""
    path = Path(path)
    if path.is_dir():
        raise GpulabError(f"{path} is a folder; give a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GpulabError(f"cannot read {path}: {exc.strerror or exc}") from None
    return _decode(path, data)


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise DamagedFile(path, line, None, f"byte 0x{data[exc.start]:02x} is not UTF-8 text") from None


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


class DamagedFile(GpulabError):
    """A results file that cannot be read as gpulab wrote it: which file, line and column, and what
    to do. Nothing is written from it."""

    def __init__(self, path: Path, line: int | None, column: str | None, problem: str):
        where = ", ".join(filter(None, (f"line {line}" if line else "", f"column {column}" if column else "")))
        super().__init__(f"{path}{': ' + where if where else ''}: {problem}; restore the file (e.g. git checkout) "
                         "or run the command that writes it again")
        self.path, self.line, self.column = Path(path), line, column


# Columns whose cells are numbers (or empty), whatever file they are in; and those of them that a
# report shows as a rate or a time, where a nan can only mean damage (gpulab writes nan only for a
# check's error, max_rel_err, when the output held NaN).
NUMERIC_COLUMNS = frozenset((
    "max_rel_err", "wrong_count", "time_ms", "time_min_ms", "time_max_ms", "reps", "gflops", "gbps",
    "pct_of_cublas", "pct_of_ceiling", "speedup_vs_baseline", "reg_per_thread", "smem_static_bytes",
    "smem_dynamic_bytes", "spill_stores_bytes", "spill_loads_bytes", "stack_frame_bytes", "barriers",
    "cmem_bytes", "m", "n", "k", "theoretical_blocks_per_sm", "theoretical_occupancy_pct", "ceiling_gflops",
    "size_bytes", "predicted", "measured", "ratio",
))
FINITE_COLUMNS = frozenset((
    "time_ms", "time_min_ms", "time_max_ms", "gflops", "gbps", "pct_of_cublas", "pct_of_ceiling",
    "speedup_vs_baseline", "predicted", "measured",
))
BOOLEAN_COLUMNS = frozenset(("correct", "expected_wrong", "exact", "l2_flushed"))


def read_csv(path: Path, required: Iterable[str] = (), need_rows: bool = False) -> list[dict]:
    """Rows back as dicts, numbers as numbers, booleans as booleans, empty cells as None.

    The file is checked as it is read; a damaged one raises DamagedFile naming the line and column:
    not UTF-8, cut off (no newline at the end), a row with more or fewer cells than the header, a
    cell of a numeric or true/false column that is neither, a nan in a rate or time, a `required`
    column missing, or (need_rows) no rows at all."""
    path = Path(path)
    text = read_text(path)
    required = tuple(required)
    if not text.strip():
        if required or need_rows:
            raise DamagedFile(path, None, None, "the file is empty")
        return []
    if not text.endswith("\n"):
        raise DamagedFile(path, text.count("\n") + 1, None, "the last line ends without a newline: it was cut off")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
        rows = []
        for cells in reader:
            rows.append(_row(path, header, cells, reader.line_num))
    except csv.Error as exc:
        raise DamagedFile(path, reader.line_num, None, f"not CSV ({exc})") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise DamagedFile(path, 1, missing[0], f"the header lacks the column{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(missing)}")
    if need_rows and not rows:
        raise DamagedFile(path, 2, None, "the file has a header and no rows")
    return rows


def _row(path: Path, header: list[str], cells: list[str], line: int) -> dict:
    if len(cells) != len(header):
        raise DamagedFile(path, line, None, f"the row has {len(cells)} cells, the header {len(header)}")
    row = {}
    for name, text in zip(header, cells):
        value = _parse(text)
        if text == "":
            pass
        elif name in BOOLEAN_COLUMNS and not isinstance(value, bool):
            raise DamagedFile(path, line, name, f"'{text}' is not true or false")
        elif name in NUMERIC_COLUMNS and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise DamagedFile(path, line, name, f"'{text}' is not a number")
        elif name in FINITE_COLUMNS and not math.isfinite(value):
            raise DamagedFile(path, line, name, f"'{text}' is not a measured value")
        row[name] = value
    return row


class Records(list):
    """Records as the Python API returns them: a list of flat dicts (the CSV's rows), with
    `.to_pandas()` for a DataFrame and `path`, the file they were written to (None if none)."""

    path: Path | None = None

    def __init__(self, rows: Iterable[dict] = (), path: Path | None = None):
        super().__init__(rows)
        self.path = path

    def to_pandas(self):
        try:
            import pandas
        except ImportError:
            raise GpulabError("to_pandas() needs pandas: pip install pandas") from None
        return pandas.DataFrame(list(self))
