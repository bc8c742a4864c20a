"""Files written whole or not at all, one writer at a time: the primitives every module that writes
a file uses (the results' CSVs and JSON, the README, the compile cache). A file is replaced by one
rename of a finished temporary file, so an interrupted write never leaves half a file; a
read-modify-write holds the file's lock, so two processes never lose each other's update. Errors
are one line (GpulabError) saying what to do."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

from gpulab.errors import GpulabError

try:
    import fcntl
except ImportError:  # no POSIX locks (Windows)
    fcntl = None


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
