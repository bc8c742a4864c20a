"""CUDA C++ source + params -> NVRTC -> cubin for one arch, with a cache and the ptxas report.

Needs no GPU: NVRTC comes from the nvidia-cuda-nvrtc wheel through cuda-bindings. The cache key is
everything that can change the cubin: the source and every header it may include, the params, the
options and the NVRTC version.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import re
from pathlib import Path

from gpulab.errors import CompileError, GpulabError
from gpulab.files import write_atomic

DEFAULT_ARCH = "sm_90"
# Where kernels' includes are found: `#include "common.cuh"`, or a header below it by its path.
INCLUDE_DIR = Path(__file__).resolve().parent.parent / "experiments"


@dataclasses.dataclass(frozen=True)
class Resources:
    """What ptxas reported for one kernel."""

    registers: int = 0
    smem_static_bytes: int = 0
    spill_stores_bytes: int = 0
    spill_loads_bytes: int = 0
    stack_frame_bytes: int = 0
    barriers: int = 0
    cmem_bytes: int = 0

    def as_record(self) -> dict:
        return {
            "reg_per_thread": self.registers,
            "smem_static_bytes": self.smem_static_bytes,
            "spill_stores_bytes": self.spill_stores_bytes,
            "spill_loads_bytes": self.spill_loads_bytes,
            "stack_frame_bytes": self.stack_frame_bytes,
            "barriers": self.barriers,
            "cmem_bytes": self.cmem_bytes,
        }


@dataclasses.dataclass(frozen=True)
class Compiled:
    cubin_path: Path
    entry: str
    arch: str
    resources: Resources
    log: str


_ENTRY_RE = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_FUNC_PROPS_RE = re.compile(r"Function properties for (\S+)")
_STACK_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED_RE = re.compile(r"Used (\d+) registers")
_BARRIERS_RE = re.compile(r"used (\d+) barriers")
_SMEM_RE = re.compile(r"(\d+) bytes smem")
_CMEM_RE = re.compile(r"(\d+) bytes cmem\[\d+\]")


def parse_ptxas_log(log: str) -> dict[str, Resources]:
    """Parse `-Xptxas -v` output into {entry name: Resources}.

    ptxas prints, per entry, a 'Compiling entry function' line, a 'Function properties' block with
    stack/spills, and a 'Used N registers, used B barriers, S bytes smem, C bytes cmem[0]' line.
    """
    found: dict[str, dict] = {}
    current: str | None = None
    for line in log.splitlines():
        if m := _ENTRY_RE.search(line):
            current = m.group(1)
            found.setdefault(current, {})
            continue
        if m := _FUNC_PROPS_RE.search(line):
            current = m.group(1)
            found.setdefault(current, {})
            continue
        if current is None:
            continue
        fields = found[current]
        if m := _STACK_RE.search(line):
            fields["stack_frame_bytes"] = int(m.group(1))
            fields["spill_stores_bytes"] = int(m.group(2))
            fields["spill_loads_bytes"] = int(m.group(3))
        if m := _USED_RE.search(line):
            fields["registers"] = int(m.group(1))
            if b := _BARRIERS_RE.search(line):
                fields["barriers"] = int(b.group(1))
            if s := _SMEM_RE.search(line):
                fields["smem_static_bytes"] = int(s.group(1))
            fields["cmem_bytes"] = sum(int(c) for c in _CMEM_RE.findall(line))
    return {name: Resources(**fields) for name, fields in found.items()}


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise GpulabError(
            "NVRTC is not available: install gpulab's dependencies (pip install cuda-bindings "
            "nvidia-cuda-nvrtc)"
        ) from exc
    return nvrtc


@functools.cache
def nvrtc_version() -> str:
    nvrtc = _nvrtc()
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception as exc:  # the shared library itself could not be loaded
        raise GpulabError(f"libnvrtc could not be loaded ({exc}); pip install nvidia-cuda-nvrtc") from exc
    _check(nvrtc, err, "nvrtcVersion")
    return f"{major}.{minor}"


def own_cache_options(version: str) -> list[str]:
    """NVRTC 12.9 and later keep their own compile cache (beside the driver's) where a driver is
    installed; a hit skips ptxas, and with it the -v report that gpulab reads registers and spills
    from. gpulab caches cubin and report together, so NVRTC's cache is turned off. On the H200
    (NVRTC 13.0) it surfaced as 'no kernel named ...' when two pytest workers compiled the same
    kernel; a machine without a driver never showed it."""
    major, minor = (int(x) for x in version.split(".")[:2])
    return ["--no-cache"] if (major, minor) >= (12, 9) else []


def _check(nvrtc, err, what: str) -> None:
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise GpulabError(f"NVRTC {what} failed: {err}")


@functools.cache
def supported_archs() -> tuple[str, ...]:
    """The architectures this NVRTC compiles for, as sm_XY (e.g. sm_75 ... sm_120)."""
    nvrtc = _nvrtc()
    err, numbers = nvrtc.nvrtcGetSupportedArchs()
    _check(nvrtc, err, "nvrtcGetSupportedArchs")
    return tuple(f"sm_{n}" for n in numbers)


def check_arch(arch: str) -> None:
    """Refuse, in one line that lists the valid ones, an arch this NVRTC cannot compile for."""
    if not isinstance(arch, str) or not re.fullmatch(r"sm_\d+[a-z]?", arch):
        raise GpulabError(f"unknown arch '{arch}': give it as sm_XY, e.g. sm_90")
    valid = supported_archs()
    if arch.rstrip("abcdefghijklmnopqrstuvwxyz") not in valid:
        raise GpulabError(f"NVRTC {nvrtc_version()} does not support {arch}; choose one of {', '.join(valid)}")


def cache_dir() -> Path:
    """The folder of compiled kernels (GPULAB_CACHE, else ~/.cache/gpulab), which must be writable."""
    root = os.environ.get("GPULAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "gpulab"
    )
    path = Path(root) / "cubin"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise _unwritable(path, PermissionError(13, "permission denied"))
    return path


def _unwritable(path: Path, exc: OSError) -> GpulabError:
    return GpulabError(f"the kernel cache {path} is not writable ({exc.strerror or exc}); set GPULAB_CACHE to a "
                       "writable folder")


def included_headers(source: Path) -> list[Path]:
    """The shared headers `source` includes by name (`#include "sgemm/ladder.cuh"`: a folder under
    experiments/), in order, one level deep: the parts of a kernel that live outside its .cu file."""
    return [INCLUDE_DIR / name for name in re.findall(r'^#include "(\w+/[\w.]+)"', Path(source).read_text(), re.M)]


def source_fingerprint(source: Path) -> str:
    """A short hash of the kernel a source builds: its text with every `#include "..."` it and its
    headers name expanded in place (a header beside the source, else under experiments/), comments
    dropped (but a `/* gpulab variant */` declaration, which sets the launch) and whitespace
    collapsed. Recorded beside what was measured of a kernel (fidelity rows, tune rows) to tell which
    kernel it was: an edit of a comment, a reflowed line or code moved into a header it includes
    leaves the kernel, and its records, as they were; any change of code does not."""
    return hashlib.sha256(_normalized(expanded_source(Path(source))).encode()).hexdigest()[:12]


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*', re.M)


def expanded_source(source: Path) -> str:
    """`source` with each `#include "name"` replaced by that file's text (recursively, each file once,
    as `#pragma once` does); a name found neither beside the including file nor under experiments/
    stays as written."""
    seen: set[Path] = set()

    def expand(path: Path) -> str:
        path = path.resolve()
        if path in seen:
            return ""
        seen.add(path)
        text = path.read_bytes().decode("utf-8", errors="replace")

        def include(match: re.Match) -> str:
            for base in (path.parent, INCLUDE_DIR):
                if (base / match.group(1)).is_file():
                    return expand(base / match.group(1))
            return match.group(0)
        return _INCLUDE.sub(include, text)
    return expand(Path(source))


def _normalized(text: str) -> str:
    """C++ text without its comments (a `/* gpulab variant` block stays), each line stripped and its
    runs of blanks made one, blank lines gone. String and character literals are kept whole."""
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":  # a literal: copy to its closing quote, escapes included
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            if text.startswith("/* gpulab variant", i):
                out.append(text[i:end])
            else:
                out.append(" ")
            i = end
        else:
            out.append(ch)
            i += 1
    lines = (" ".join(line.split()) for line in "".join(out).splitlines())
    return "\n".join(line for line in lines if line)


def _headers(source: Path | None = None) -> dict[str, str]:
    """Every header a kernel may include, by name (their text is part of the cache key): the shared
    ones under experiments/, any other file under it that `source` includes by name, and, for a
    source outside it (a user's kernel folder), the headers beside it, which NVRTC finds for
    `#include "x.cuh"` too."""
    found = {p.relative_to(INCLUDE_DIR).as_posix(): p.read_text() for p in sorted(INCLUDE_DIR.rglob("*.cuh"))}
    if source is not None:
        # A file included by name that is not a header (sgemm's v14 includes gemm_bf16's t4 .cu).
        for path in included_headers(source):
            name = path.relative_to(INCLUDE_DIR).as_posix()
            if name not in found and path.is_file():
                found[name] = path.read_text()
        folder = Path(source).resolve().parent
        if not folder.is_relative_to(INCLUDE_DIR):
            found |= {f"{folder}/{p.name}": p.read_text() for p in sorted([*folder.glob("*.cuh"), *folder.glob("*.h")])}
    return found


def define_options(params: dict[str, int | str]) -> list[str]:
    return [f"-D{name}={value}" for name, value in sorted(params.items())]


def compile_kernel(
    source: Path,
    entry: str,
    params: dict[str, int | str] | None = None,
    arch: str = DEFAULT_ARCH,
    extra_options: tuple[str, ...] = (),
) -> Compiled:
    """Compile `source` with `params` as -D defines to a cubin for `arch`, cached on disk."""
    params = params or {}
    check_arch(arch)
    text = Path(source).read_text()
    options = [
        f"--gpu-architecture={arch}",
        "-std=c++17",
        "-lineinfo",
        "-Xptxas=-v",
        f"-I{INCLUDE_DIR}",
        *own_cache_options(nvrtc_version()),
        *define_options(params),
        *extra_options,
    ]
    key_material = json.dumps(
        {"source": text, "headers": _headers(source), # the include path is left out: the headers' text is in the key instead
         "options": [o for o in options if not o.startswith("-I")],
         "entry": entry, "nvrtc": nvrtc_version()},
        sort_keys=True,
    )
    key = hashlib.sha256(key_material.encode()).hexdigest()[:24]
    cubin_path = cache_dir() / f"{Path(source).stem}-{key}.cubin"
    cached = _from_cache(cubin_path, entry, arch)
    if cached is not None:
        return cached
    with _compile_lock(cubin_path.stem):
        # Another process may have compiled it while this one waited: compile each kernel once.
        cached = _from_cache(cubin_path, entry, arch)
        if cached is not None:
            return cached
        cubin, log = _run_nvrtc(text, str(source), options)
        per_entry = parse_ptxas_log(log)
        if entry not in per_entry:
            found = ", ".join(per_entry) or "none in the ptxas report"
            raise CompileError(f"{source}: no kernel named '{entry}' (an extern \"C\" __global__ function); "
                               f"kernels found: {found}")
        resources = per_entry[entry]
        # The report, written after the cubin, carries the cubin's hash: an entry whose cubin is not
        # the one compiled (cut short by a full disk, say) is found and compiled again.
        meta = {"resources": dataclasses.asdict(resources), "log": log,
                "cubin_sha256": hashlib.sha256(cubin).hexdigest()}
        write_atomic(cubin_path, cubin)
        write_atomic(cubin_path.with_suffix(".json"), json.dumps(meta))
    return Compiled(cubin_path, entry, arch, resources, log)


def _from_cache(cubin_path: Path, entry: str, arch: str) -> Compiled | None:
    """The cached compile, when both its cubin and its ptxas report (written after it) are there and
    whole; a damaged entry (cut short, unreadable, from an older gpulab) is discarded: None, so
    the caller compiles it again."""
    meta_path = cubin_path.with_suffix(".json")
    if not (cubin_path.exists() and meta_path.exists()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        resources = Resources(**meta["resources"])
        whole = hashlib.sha256(cubin_path.read_bytes()).hexdigest() == meta["cubin_sha256"]
        log = str(meta["log"])
    except (OSError, ValueError, TypeError, KeyError):
        whole = False
    if not whole:
        for path in (meta_path, cubin_path):
            path.unlink(missing_ok=True)
        return None
    return Compiled(cubin_path, entry, arch, resources, log)


@dataclasses.dataclass(frozen=True)
class CachedCubin:
    """A compile as it travels to another machine: its cache entry's file name, cubin and ptxas report.
    The name is the cache key, which holds nothing of the machine (not the include path), so a host
    that installs it finds it when it compiles the same kernel."""

    name: str
    cubin: bytes
    meta: bytes

    @classmethod
    def of(cls, compiled: Compiled) -> "CachedCubin":
        path = Path(compiled.cubin_path)
        return cls(path.name, path.read_bytes(), path.with_suffix(".json").read_bytes())

    def install(self) -> None:
        """Put it in this machine's cache (the cubin first: an entry counts once its report is there)."""
        path = cache_dir() / self.name
        if not path.with_suffix(".json").exists():
            write_atomic(path, self.cubin)
            write_atomic(path.with_suffix(".json"), self.meta)


@contextlib.contextmanager
def _compile_lock(name: str):
    """One NVRTC compile of a kernel at a time across processes sharing the cache (pytest -n,
    parallel tunes), so that a kernel two processes need is compiled once: the second finds the
    first's cubin. The lock is the kernel's own (`name`, its cache key), so different kernels
    compile at once on as many cores as there are compiling processes (gpulab.run.sweep)."""
    try:
        import fcntl
    except ImportError:  # no POSIX locks (Windows): compile without one
        yield
        return
    with open(cache_dir() / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run_nvrtc(text: str, name: str, options: list[str]) -> tuple[bytes, str]:
    nvrtc = _nvrtc()
    nvrtc_version()  # a clear error if libnvrtc is missing
    err, prog = nvrtc.nvrtcCreateProgram(text.encode(), name.encode(), 0, [], [])
    _check(nvrtc, err, "nvrtcCreateProgram")
    try:
        encoded = [o.encode() for o in options]
        (compile_err,) = nvrtc.nvrtcCompileProgram(prog, len(encoded), encoded)
        err, size = nvrtc.nvrtcGetProgramLogSize(prog)
        _check(nvrtc, err, "nvrtcGetProgramLogSize")
        buf = b" " * size
        (err,) = nvrtc.nvrtcGetProgramLog(prog, buf)
        log = buf.rstrip(b"\x00 ").decode(errors="replace")
        if compile_err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"{name} failed to compile: {first_errors(log)}")
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        _check(nvrtc, err, "nvrtcGetCUBINSize")
        cubin = b" " * size
        (err,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
        _check(nvrtc, err, "nvrtcGetCUBIN")
        return cubin, log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


_NVRTC_LINE_RE = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<what>(?:catastrophic )?error.*)$")


def first_errors(log: str, limit: int = 3) -> str:
    """NVRTC's first `limit` errors on one line, each as file:line: error ... (its log says
    'file(line): error ...', one per line, with the source line and a caret after each)."""
    errors = [f"{m['file']}:{m['line']}: {m['what'].strip()}"
              for m in map(_NVRTC_LINE_RE.match, log.splitlines()) if m]
    if not errors:
        return " ".join(log.split())[:400] or "no log"
    more = len(errors) - limit
    return "; ".join(errors[:limit]) + (f" (and {more} more)" if more > 0 else "")
