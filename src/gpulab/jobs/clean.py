"""The sanitizer gate: no row is gpulab's best unless compute-sanitizer found its kernel clean.

The value check sees outputs at the shapes it runs. A user's v1 with the second __syncthreads() of
its loop removed passed it at 97x65x33 and was printed as that shape's best row, 163.8% of cuBLAS;
at 1025^3 it fails the check, and racecheck reports thousands of hazards on it. So before a row is
called best (the fastest of its shape in a bench or the main job's summary, gpulab's `best` row,
the winner a tune writes to tuned.json), its config must have a clean record under memcheck and
racecheck (GATE_TOOLS) at the experiment's small ragged sanitize shape
(gpulab.jobs.sanitize.sanitize_shape).

The record is results/<gpu>/sanitize.csv, keyed by the run's config and its kernel's source
fingerprint (RunSpec.source_sha: the .cu file and its headers), so a verdict holds until the kernel
changes. A config with no record for today's source is sanitized on demand, once: the two tools on
one config at one small shape, a few seconds (the rows join sanitize.csv). Where compute-sanitizer
is not installed the verdict says so ("not sanitized: compute-sanitizer not found") and nothing
fails. A config a tool found errors in is never called best. One the tools could not check (the
tool missing, a fault inside the tool, a run past its time) may still be, and says so wherever it is
shown ("not sanitized: ..." with the evidence): the tools ruled nothing out, and found nothing.

The verdict goes into the row's `sanitized` column (gpulab.quantities.SANITIZED): "clean", or why
not. gpulab.report.tables.best_per_shape crowns only rows that may be best
(gpulab.quantities.may_be_best; a row recorded before the gate, with no such column, is taken as it
was).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpulab.errors import GpulabError
from gpulab.jobs import sanitize as san
from gpulab.quantities import CLEAN, NOT_SANITIZED, SANITIZE_FILE, SANITIZED, may_be_best
from gpulab.records import BEST
from gpulab.run.lab import RunSpec
from gpulab.run.progress import QUIET, Progress

GATE_TOOLS = ("memcheck", "racecheck")
NO_SANITIZER = "not sanitized: compute-sanitizer not found"
# A child that runs longer under a tool is cut off (the verdict says so): the check before a best
# row should cost seconds; a kernel that hangs under the tool must not hold a bench for minutes.
TIMEOUT_S = 120.0


@dataclasses.dataclass(frozen=True)
class Verdict:
    clean: bool
    text: str  # CLEAN, or why not: what the `sanitized` column says

    @property
    def may_be_best(self) -> bool:
        """Clean, or not checked by the tools (gpulab.quantities.may_be_best): never after an error."""
        return may_be_best({SANITIZED: self.text})


def judge(rows: dict[str, dict]) -> Verdict:
    """The verdict of one config from its rows by tool: an error any tool reported decides it; then
    a gate tool with no row (compute-sanitizer is missing), or one that failed inside itself or
    could not finish; else clean. Texts are cut at 240 characters (a report line can be long)."""
    for tool in GATE_TOOLS:
        if (r := rows.get(tool)) is not None and r["verdict"] == san.ERRORS:
            found = (r.get("errors") or 0) + (r.get("warnings") or 0)
            first = f": {r['first_report']}" if r.get("first_report") else ""
            return Verdict(False, f"not clean: {tool} reported {found:,} error(s){first}"[:240])
    for tool in GATE_TOOLS:
        if (r := rows.get(tool)) is None:
            return Verdict(False, NO_SANITIZER)
        if r["verdict"] == san.TOOL_FAULT:
            return Verdict(False, f"not sanitized: {tool} checked nothing ({r.get('evidence') or 'a tool fault'})"[:240])
        if r["verdict"] != CLEAN:
            return Verdict(False, f"not sanitized: {tool}: {r['verdict']}"[:240])
    return Verdict(True, CLEAN)


class Gate:
    """Verdicts for runs on this card: from `folder`/sanitize.csv where it holds both tools' rows
    for the run's config and today's source, else by running them now (written there). `env`: the
    columns that say where (gpulab.records.environment), added to rows it writes."""

    def __init__(self, folder: Path | None, arch: str, env: dict | None = None, progress: Progress = QUIET,
                 sanitizer: Path | None | str = "find", off: str = ""):
        self.path = Path(folder) / SANITIZE_FILE if folder is not None else None
        self.arch, self.env, self.progress = arch, env or {}, progress
        self.sanitizer = sanitizer  # "find": where gpulab.jobs.sanitize.find_sanitizer looks; None: none
        if sanitizer == "find":
            try:
                self.sanitizer = san.find_sanitizer()
            except GpulabError:
                self.sanitizer = None
        self.recorded = san.read_recorded(self.path) if self.path is not None else []
        self._known: dict[tuple, Verdict] = {}
        # Set when the caller turned the gate off (bench --no-sanitize): every verdict says so, and
        # nothing is checked or recorded.
        self.off = off

    def verdict(self, spec: RunSpec) -> Verdict:
        """Whether `spec`'s config (its variant, params and source; not its shape) may be a best row."""
        if spec.variant is None:
            return Verdict(False, "a vendor library: gpulab holds no kernel of it to sanitize")
        if self.off:
            return Verdict(False, f"{NOT_SANITIZED}: {self.off}")
        key = (spec.experiment.name, spec.variant.name, spec.variant.params_label(spec.params), spec.source_sha())
        if key not in self._known:
            self._known[key] = self._decide(spec, key)
        return self._known[key]

    def _decide(self, spec: RunSpec, key: tuple) -> Verdict:
        rows = self._recorded(key)
        missing = [t for t in GATE_TOOLS if t not in rows]
        if missing and self.sanitizer is not None:
            rows |= {r["tool"]: r for r in self._run(spec, missing)}
        return judge(rows)  # without the tool, a recorded error still decides; else NO_SANITIZER

    def _recorded(self, key: tuple) -> dict[str, dict]:
        """The latest recorded row of each gate tool for the config `key`."""
        out = {}
        for r in self.recorded:
            if (r.get("experiment"), r.get("variant"), r.get("params") or "", r.get("source_sha")) == key \
                    and r.get("tool") in GATE_TOOLS:
                out[r["tool"]] = r
        return out

    def _run(self, spec: RunSpec, tools: list[str]) -> list[dict]:
        """`tools` on `spec`'s config at the sanitize shape, now; the rows, saved to sanitize.csv."""
        shape = san.sanitize_shape(spec.experiment, lambda s: not spec.variant.constraints(spec.params, s))
        at = RunSpec(spec.experiment, spec.variant, spec.params, shape)
        self.progress.status(f"compute-sanitizer ({', '.join(tools)}): {at.label}, before it can be a best row")
        rows = san.run_all(self.sanitizer, [at], tuple(tools), self.arch, jobs=len(tools), recorded=self.recorded,
                           timeout_s=TIMEOUT_S)
        rows = [r | self.env for r in rows]
        if self.path is not None:
            san.save(self.path, rows)
        self.recorded = self.recorded + rows
        return rows


TRIES = 3  # a tune's fastest configs checked for a clean one, at most: each check takes seconds


def first_clean(specs: list[RunSpec], gate: Gate, tries: int = TRIES) -> tuple[int, Verdict, list[tuple[RunSpec, str]]]:
    """(index, verdict, passed over) of the first of `specs` (a tune's configs, fastest first) the
    gate lets be best (clean, or not checkable by the tools: Verdict.may_be_best), among the first
    `tries`; the faster ones it passed over, with why. Where none of them may be, the fastest, with
    its verdict: tuned.json records it, and the best row refuses it (vet_best)."""
    passed = []
    for i, spec in enumerate(specs[:tries]):
        verdict = gate.verdict(spec)
        if verdict.may_be_best:
            return i, verdict, passed
        passed.append((spec, verdict.text))
    return 0, gate.verdict(specs[0]), [p for p in passed if p[0] is not specs[0]]


def vet_best(records: list[dict], specs: list[RunSpec], gate: Gate, libraries=()) -> None:
    """Mark the rows that could be called best with their verdict (the `sanitized` column), in place.

    Per shape, the correct timed rows of gpulab's own kernels, fastest first, until one may be best
    (clean, or not checkable by the tools): each walked row is marked, the rows slower than that one
    need no verdict. Every
    `best` row (gpulab.jobs.best's pick) is marked too, wherever it ranks. A row whose spec is not
    among `specs` (none ran it here) is left as it is."""
    by_key = {_key(s.base_record()): s for s in specs}
    for shape in dict.fromkeys(r.get("shape") for r in records):
        own = [r for r in records if r.get("shape") == shape and r.get("time_ms") and r.get("correct")
               and not r.get("expected_wrong") and r.get("variant") not in libraries]
        for r in sorted(own, key=lambda r: r["time_ms"]):
            if (spec := by_key.get(_key(r))) is None:
                continue
            r[SANITIZED] = gate.verdict(spec).text
            if may_be_best(r):
                break
        for r in own:
            if r.get("variant") == BEST and SANITIZED not in r and (spec := by_key.get(_key(r))) is not None:
                r[SANITIZED] = gate.verdict(spec).text


def _key(row: dict) -> tuple:
    return row.get("variant"), row.get("params") or "", row.get("shape")
