"""Records: one flat dict per run, and the CSV they live in (the contract everything else reads).

Columns carry their units in their names. The environment (card, driver, CUDA, versions, date) is
in every row, so a CSV row stands on its own. Files are written atomically: a temporary file in the
same folder (a unique name per writer), then a rename, so an interrupted run never leaves a
half-written file; a read-modify-write holds a lock beside the file (`locked`, `upsert`), so two
processes never lose each other's update. Reading checks every row: a damaged file is named with its
line and column (DamagedFile), never turned silently into fewer or emptier rows.
"""

from __future__ import annotations

import csv
import datetime as _dt
from collections import Counter
import io
import math
import re
import socket
from pathlib import Path
from typing import Callable, Iterable

from gpulab.errors import GpulabError
from gpulab.files import check_writable, locked, write_atomic
from gpulab.gpu.compile import nvrtc_version
from gpulab.gpu.device import gpu_index, nvidia_driver_string, probe
from gpulab.gpu.seam import cupy
from gpulab.quantities import NAME
from gpulab.version import __version__


# The leading columns, in order; anything else a record carries follows in first-seen order.
CORE_COLUMNS = (
    "experiment", "variant", "params", "picked", "shape",
    "correct", "expected_wrong", "max_rel_err", "wrong_count", "first_wrong",
    "time_ms", "time_min_ms", "time_max_ms", "reps", "blocks", "l2_flushed",
    # How far the time can be trusted (gpulab.gpu.timing): the median's 95% interval (over the
    # repetitions and between their blocks) and how far it reaches, whether the budget ran out
    # first; the card's state while timed (gpulab.gpu.nvml).
    "time_ci_low_ms", "time_ci_high_ms", "rel_noise", "hit_budget",
    "sm_clock_mhz", "power_w", "temp_c", "throttle", "retimed",
    "gflops", "gbps", "pct_of_cublas", "pct_of_ceiling", "ceiling", "pct_of_copy", "speedup_vs_baseline",
    "reg_per_thread", "smem_static_bytes", "smem_dynamic_bytes", "spill_stores_bytes",
    "spill_loads_bytes", "stack_frame_bytes", "barriers", "cmem_bytes",
    "grid", "block", "skip_reason",
)
# What an experiment's results CSV (results/<gpu>/<experiment>.csv) must hold for anything read from
# it, the pages' tables and the best-row model's calibration alike; a file without one of these is
# damage (DamagedFile), never an emptier reading. time_ms: every row bench writes has it (empty
# where the run did not finish); a file without it would read as every run untimed.
RUN_COLUMNS = ("experiment", "variant", "params", "shape", "correct", "time_ms")
# host and gpu_index: which machine and which of its GPUs timed the row (sweeps over several, gpulab.run.sweep).
ENV_COLUMNS = ("gpu", "arch", "driver", "cuda_runtime", "nvrtc", "cupy", "gpulab", "date", "host", "gpu_index")


# Where every command reads and writes its results: one folder per card model, named by its slug
# (results/h200/). Relative to the working directory, as the README's commands are run from the clone.
RESULTS_ROOT = Path("results")
# The results gpulab's own repository holds, recorded on its cards (results/h200/), where gpulab runs
# from a clone (an editable install, as the README's): src/gpulab/records/ -> the clone's results/.
# An installed wheel has no such folder (the path then does not exist).
LAB_RESULTS = Path(__file__).resolve().parents[3] / "results"


def card_folder(gpu_slug: str, root: Path | str | None = None) -> Path:
    """The results folder of one card model: results/<gpu>/ (or under `root`)."""
    return Path(RESULTS_ROOT if root is None else root) / gpu_slug


# Files only a card's folder holds (results/<gpu>/): a results root that holds one is a card's folder.
CARD_FILES = ("tuned.json", "ceilings.csv")


class SeveralCards(GpulabError):
    """No card named, no GPU here, and several cards' results under the root: which one is the
    caller's to say (`cards`: their folder names)."""

    def __init__(self, root: Path, cards: list[str]):
        super().__init__(f"{root}/ holds the results of several cards ({', '.join(cards)}) and no GPU is here to "
                         "choose: name one (--gpu on the command line, gpu= in Python)")
        self.cards = cards


def results_folder(gpu: str | None, results: str | Path | None) -> Path | None:
    """The card folder whose results a command that needs no GPU reads (best, predict's roofline):
    results/<gpu>/ of the card named, else of this machine's, else of the one card with results
    under `results` (several: one line asks which); where `results` is not given and ./results holds
    nothing of the card, the results gpulab's repository recorded (LAB_RESULTS, where gpulab runs
    from a clone): `gpulab best` on a laptop answers for the H200 from any folder, as inside the
    clone. None: none."""
    if results is not None and not isinstance(results, (str, Path)):
        raise GpulabError(f"results is a folder of results/<gpu>/ folders, e.g. 'results'; got {results!r:.60}")
    if gpu is not None and (not isinstance(gpu, str) or not gpu.strip()):
        raise GpulabError(f"gpu names a card's results folder, e.g. 'h200'; got {gpu!r:.60}")
    root = Path(results) if results is not None else RESULTS_ROOT
    if results is not None and not root.is_dir():
        raise GpulabError(f"no results folder {root}: name one that exists (a folder of results/<gpu>/ folders)")
    if results is not None and any((root / name).is_file() for name in CARD_FILES):
        raise GpulabError(f"{root} is one card's folder (it holds {', '.join(n for n in CARD_FILES if (root / n).is_file())}); "
                          f"give the folder that holds it, results={str(root.parent)!r}, and the card, gpu={root.name!r}")
    if gpu is not None:
        folder = card_folder(gpu, root)
        if results is None and not folder.is_dir() and card_folder(gpu, LAB_RESULTS).is_dir():
            return card_folder(gpu, LAB_RESULTS)
        if not folder.is_dir():
            known = [p.name for p in cards_under(root)]
            raise GpulabError(f"no results for card {gpu!r} under {root}/" + (f"; there are: {', '.join(known)}"
                                                                                if known else ""))
        return folder
    here, _ = probe()
    if here is not None:
        return card_folder(here.slug, root)
    found = cards_under(root)
    if len(found) > 1:
        raise SeveralCards(root, [p.name for p in found])
    if found or results is not None:
        return only_card(root)
    return only_card(LAB_RESULTS)


def cards_under(root: Path) -> list[Path]:
    """The card folders (results/<gpu>/) under a results root, by name; none where it does not exist."""
    return sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else []


def only_card(root: Path) -> Path | None:
    """The card folder under a results root where it holds exactly one, else None."""
    found = cards_under(root)
    return found[0] if len(found) == 1 else None


def variant_ran(record: dict) -> str | None:
    """The variant whose kernel a record timed: its own, or a best row's pick, the first word of its
    `picked` column ('v14 (tuned at 4096x4096x4096)', gpulab.jobs.best.Pick.label)."""
    picked = record.get("picked")
    return str(picked).split(" ", 1)[0] if picked else record.get("variant")


def ceiling_notes(records: list[dict]) -> list[str]:
    """What a table's '% ceiling' column adds beside each record: ' of NAME' where the records are
    held to more than one ceiling and this one's is not the one most of them share (sgemm's v14,
    held to tensor_tf32/3 among FFMA rungs held to fma_fp32), '' elsewhere."""
    names = [r.get("ceiling") for r in records if r.get("pct_of_ceiling") is not None]
    if len(set(names)) < 2:
        return [""] * len(records)
    common = Counter(names).most_common(1)[0][0]
    return [f" of {r.get('ceiling')}" if r.get("pct_of_ceiling") is not None and r.get("ceiling") != common else ""
            for r in records]


def environment(device=None, arch: str = "") -> dict:
    """Who ran where: the card and the software versions, and the date (UTC, ISO 8601)."""
    env = {
        "gpu": device.name if device else "none",
        "arch": arch or (device.arch if device else ""),
        "driver": "",
        "cuda_runtime": device.cuda_runtime_version if device else "",
        "nvrtc": nvrtc_version(),
        "cupy": "",
        "gpulab": __version__,
        "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "host": socket.gethostname(),
        "gpu_index": "",
    }
    if device is not None:
        env["driver"] = nvidia_driver_string()
        env["cupy"] = cupy().__version__
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


def write_csv(path: Path, rows: list[dict]) -> None:
    write_atomic(path, to_csv_text(rows))


def upsert(path: Path, rows: list[dict], key: Callable[[dict], object], required: Iterable[str] = ()) -> list[dict]:
    """Under the file's lock: the CSV at `path` with every row whose key(row) is among the new rows'
    keys replaced by `rows` (appended); rows of other keys kept in their order. Returns what was
    written. A damaged file is refused (DamagedFile), never overwritten; so is one whose header lacks
    a `required` column (the columns the key reads: without them every old row would key as blank)."""
    with locked(path):
        old = read_csv(path, required=required) if Path(path).exists() else []
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
    "max_rel_err", "wrong_count", "time_ms", "time_min_ms", "time_max_ms", "reps", "blocks", "gflops", "gbps",
    "pct_of_cublas", "pct_of_ceiling", "pct_of_copy", "speedup_vs_baseline", "reg_per_thread", "smem_static_bytes",
    "smem_dynamic_bytes", "spill_stores_bytes", "spill_loads_bytes", "stack_frame_bytes", "barriers",
    "cmem_bytes", "m", "n", "k", "theoretical_blocks_per_sm", "theoretical_occupancy_pct", "ceiling_gflops",
    "size_bytes", "predicted", "measured", "ratio",
    "time_ci_low_ms", "time_ci_high_ms", "rel_noise", "sm_clock_mhz", "power_w", "temp_c",
))
FINITE_COLUMNS = frozenset((
    "time_ms", "time_min_ms", "time_max_ms", "gflops", "gbps", "pct_of_cublas", "pct_of_ceiling", "pct_of_copy",
    "speedup_vs_baseline", "predicted", "measured", "time_ci_low_ms", "time_ci_high_ms",
))
BOOLEAN_COLUMNS = frozenset(("correct", "expected_wrong", "exact", "l2_flushed", "hit_budget"))
# Times and rates cannot be below zero: a negative one is damage, never a figure to publish.
NON_NEGATIVE_COLUMNS = FINITE_COLUMNS - {"predicted", "measured"}
# Columns that hold a name (an experiment's, a variant's), held to quantities.NAME.
NAME_COLUMNS = frozenset(("experiment", "variant"))
# A cell longer than this is damage: gpulab's longest (a sanitizer's first report) are under 1,000
# characters, and Python's csv module refuses fields past 131,072.
MAX_CELL = 65_536
# Characters no cell or column name holds: the C0 controls but tab, newline and carriage return.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class CsvRows(list):
    """read_csv's rows, with `lines`: the line of the file each row starts on (for a message that
    points at one), and `header`: the file's columns, rows or none."""

    lines: list[int]
    header: list[str]


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
    rows = CsvRows()
    rows.lines = []
    rows.header = []
    try:
        header = next(reader)
        _check_header(path, header)
        _check_required(path, header, required)  # before the rows: a file of another kind is told by its header
        rows.header = header
        start = reader.line_num + 1
        for cells in reader:
            rows.append(_row(path, header, cells, start))
            rows.lines.append(start)
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DamagedFile(path, reader.line_num, None, f"not CSV ({exc})") from None
    if need_rows and not rows:
        raise DamagedFile(path, 2, None, "the file has a header and no rows")
    return rows


def _shown(text: str) -> str:
    """A cell as a message quotes it: in quotes, control characters escaped, cut at 40 characters."""
    return repr(text[:40]) + (f" (and {len(text) - 40:,} more characters)" if len(text) > 40 else "")


def _check_header(path: Path, header: list[str]) -> None:
    """Every column named once, by a name without control characters: a column named twice would
    let its second cells stand for the first in every row (dict(zip(...)) keeps the last)."""
    seen: set[str] = set()
    for name in header:
        if not name.strip() or CONTROL.search(name) or len(name) > MAX_CELL:
            raise DamagedFile(path, 1, _shown(name) if name.strip() else None,
                              f"the header has a column named {_shown(name)}")
        if name in seen:
            raise DamagedFile(path, 1, name, "the header names this column twice")
        seen.add(name)


def _check_required(path: Path, header: list[str], required: tuple[str, ...]) -> None:
    missing = [c for c in required if c not in header]
    if missing:
        raise DamagedFile(path, 1, missing[0], f"the header lacks the column{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(missing)}")


def _row(path: Path, header: list[str], cells: list[str], line: int) -> dict:
    if len(cells) != len(header):
        raise DamagedFile(path, line, None, f"the row has {len(cells)} cells, the header {len(header)}")
    row = {}
    for name, text in zip(header, cells):
        value = _parse(text)
        if text == "":
            pass
        elif len(text) > MAX_CELL:
            raise DamagedFile(path, line, name, f"a cell of {len(text):,} characters (gpulab writes none over {MAX_CELL:,})")
        elif CONTROL.search(text):
            raise DamagedFile(path, line, name, f"{_shown(text)} holds a control character")
        elif name in NAME_COLUMNS and not NAME.fullmatch(text):
            raise DamagedFile(path, line, name, f"{_shown(text)} is not a name (letters, digits, _ . -, at most 64)")
        elif name in BOOLEAN_COLUMNS and not isinstance(value, bool):
            raise DamagedFile(path, line, name, f"{_shown(text)} is not true or false")
        elif name in NUMERIC_COLUMNS and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise DamagedFile(path, line, name, f"{_shown(text)} is not a number")
        elif name in FINITE_COLUMNS and not math.isfinite(value):
            raise DamagedFile(path, line, name, f"{_shown(text)} is not a measured value")
        elif name in NON_NEGATIVE_COLUMNS and value < 0:
            raise DamagedFile(path, line, name, f"{_shown(text)} is below zero, which no time or rate can be")
        row[name] = value
    return row


RUN_KEY = ("experiment", "variant", "params", "shape")
BEST = "best"  # the variant column of gpulab's best row at a shape (gpulab.jobs.best)


def upsert_runs(path: Path, rows: list[dict], key: Callable[[dict], object] | None = None) -> list[dict]:
    """upsert for the result files keyed by run (bench's CSVs, profile.csv): `key` (run_key unless
    given: the lab passes its config_run_key, which knows the variants' params), and a file without
    the RUN_KEY columns refused."""
    return upsert(path, rows, key or run_key, required=RUN_KEY)


def check_run_file(path: Path) -> None:
    """Fail now, before any work, where upsert_runs would refuse `path` later: a damaged file, one
    whose header lacks the RUN_KEY columns, or a path that cannot be written."""
    check_writable(path)
    if Path(path).exists():
        read_csv(path, required=RUN_KEY)


# gpulab best's picks (--csv): one row a shape, what it runs and why it was chosen; a file without
# one of these columns is not one gpulab best wrote (a pick without its variant or params says
# nothing), and one with a time in it holds timed runs (a bench's results): picks replace neither.
PICK_KEY = ("experiment", "variant", "params", "shape", "chosen_by")
TIMED_COLUMN = "time_ms"


def check_picks_file(path: Path) -> None:
    """Fail now, before any work, where upsert_picks would refuse `path` later: a damaged file, one
    whose header lacks the PICK_KEY columns, one that holds timed runs (a bench's results, which
    `gpulab best --csv results/h200/sgemm.csv` would otherwise have replaced with picks), or a path
    that cannot be written."""
    check_writable(path)
    if Path(path).exists():
        if TIMED_COLUMN in getattr(read_csv(path), "header", ()):  # an empty file has no header
            raise GpulabError(f"{path} holds timed runs (its {TIMED_COLUMN} column), not picks: give --csv a new "
                              "file or one that gpulab best wrote")
        read_csv(path, required=PICK_KEY)


def upsert_picks(path: Path, rows: list[dict]) -> list[dict]:
    """upsert for gpulab best's picks, keyed by (experiment, shape): a newer pick at a shape replaces
    the older one, picks of other shapes and experiments stay; what check_picks_file refuses is
    refused here too, under the file's lock."""
    check_picks_file(path)
    return upsert(path, rows, lambda r: (str(r.get("experiment")), str(r.get("shape"))), required=PICK_KEY)


def run_key(row: dict) -> tuple[str, ...]:
    """Which run a row belongs to: (experiment, variant, params, shape) as text; the key of
    `upsert` for the result files (bench's CSVs, profile.csv, fidelity.csv). A best row is gpulab's
    best at its shape whatever it ran, so its params are not part of its key: a newer best row at
    the shape replaces the older one even where the pick changed."""
    key = tuple(str(row.get(k) if row.get(k) is not None else "") for k in RUN_KEY)
    return key[:2] + ("",) + key[3:] if row.get("variant") == BEST else key


# A run that did not finish (gpulab.run.worker) has a skip_reason that begins with one of these: its
# kernel faulted on the device (or its process died), or it ran past the per-run time limit.
FAULTED, TIMED_OUT = "faulted: ", "timed out"


def did_not_finish(record: dict) -> bool:
    return str(record.get("skip_reason") or "").startswith((FAULTED, TIMED_OUT))


def status(record: dict) -> str:
    """What a run's record says of it, by precedence: 'did not finish' (a fault or a hang: a
    failure, demonstration or not), 'expected wrong' (a registered demonstration of a wrong kernel),
    'skipped' (skip_reason), 'wrong', 'ok', or '' (not checked). The tables and the HTML page word
    it each their own way, from this one ranking."""
    if did_not_finish(record):
        return "did not finish"
    if record.get("expected_wrong"):
        return "expected wrong"
    if record.get("skip_reason"):
        return "skipped"
    if record.get("correct") is False:
        return "wrong"
    return "ok" if record.get("correct") is True else ""


class Records(list):
    """Records as the Python API returns them: a list of flat dicts (the CSV's rows), with
    `.to_pandas()` for a DataFrame, `path`, the file they were written to (None if none), and
    `note`, a line about the rows as a whole ('' if none: gpulab best says there which card's
    ceilings and runs its model read)."""

    path: Path | None = None
    note: str = ""

    def __init__(self, rows: Iterable[dict] = (), path: Path | None = None, note: str = ""):
        super().__init__(rows)
        self.path = path
        self.note = note

    def to_pandas(self):
        try:
            import pandas
        except ImportError:
            raise GpulabError("to_pandas() needs pandas: pip install pandas") from None
        return pandas.DataFrame(list(self))
