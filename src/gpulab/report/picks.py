"""How good gpulab's best row was: at each shape of a bench, was the kernel it picked (before
anything was timed there) within a tolerance of the fastest kernel gpulab timed at that shape?

    from gpulab.records import read_csv
    from gpulab.report.picks import pick_accuracy
    found = pick_accuracy(read_csv("results/h200/gemm_bf16-llm.csv"))
    print(found.line())   # 'the pick was within 5% of the fastest gpulab row at 37 of 40 shapes (92%) ...'

or, for several CSVs at once (what notebook/device/device_llm_suite.sh prints):

    python3 -c 'import sys; from gpulab.report.picks import summary; print(summary(sys.argv[1:]))' results/h200/*-llm.csv

Read from the CSV rows, never from printed text. A shape is judged where the best row and at least
one other of gpulab's own kernels were timed there (the vendor library does not count: the
question is whether the model chose well among gpulab's kernels); a best row that failed its check
or did not run is a miss.
"""

from __future__ import annotations

import dataclasses

from pathlib import Path

from gpulab.records import BEST, read_csv

TOLERANCE = 0.05  # within 5% of the fastest row's time


@dataclasses.dataclass(frozen=True)
class Miss:
    shape: str
    picked: str
    picked_ms: float | None
    fastest: str
    fastest_ms: float
    fastest_variant: str = ""
    chosen_by: str = ""  # the best row's: why it ran what it ran

    @property
    def slower(self) -> float | None:
        """How much slower the pick ran than the fastest (0.12: 12%), None where it did not run."""
        return self.picked_ms / self.fastest_ms - 1 if self.picked_ms else None


@dataclasses.dataclass(frozen=True)
class PickAccuracy:
    shapes: int  # shapes with a best row
    judged: int  # ... and another of gpulab's kernels timed there
    within: int
    tolerance: float
    misses: tuple[Miss, ...]

    @property
    def fraction(self) -> float | None:
        return self.within / self.judged if self.judged else None

    def line(self) -> str:
        if not self.judged:
            return (f"no shape to judge the pick at: {self.shapes} shape(s) with a best row, none with another of "
                    "gpulab's kernels timed beside it")
        text = (f"the pick was within {100 * self.tolerance:.0f}% of the fastest gpulab row at {self.within} of "
                f"{self.judged} shapes ({100 * self.fraction:.0f}%)")
        if self.judged < self.shapes:
            text += f"; {self.shapes - self.judged} shape(s) had no other kernel timed beside it"
        return text

    def retune(self, experiment: str) -> list[str]:
        """Where the best row ran past the tolerance of another of gpulab's rows: one `gpulab tune`
        command per variant that was faster, at the shapes where it was. A tune there records that
        variant's fastest config at each shape for this card, and the best row then runs it ('tuned
        here'): a card with no tune of its own picks with efficiencies another card lent it, which
        carry a variant's standing but not the new card's order of configs (d0 in G = 4, U = 1 ran
        1.44x its G = 2, U = 2 at 1x10240x8192 on an H100 that borrowed the H200's runs)."""
        shapes: dict[str, list[str]] = {}
        for miss in self.misses:
            retuned = miss.fastest_variant == miss.picked and miss.chosen_by.startswith("tuned here")
            if miss.fastest_variant and miss.picked_ms is not None and not retuned:  # not its own tune again
                shapes.setdefault(miss.fastest_variant, []).append(miss.shape)
        return [f"gpulab tune {experiment} {variant} --shape {','.join(found)}" for variant, found in shapes.items()]

    def slowest(self) -> Miss | None:
        """The miss whose best row ran the most past the fastest (a best row that did not run aside)."""
        ran = [m for m in self.misses if m.picked_ms is not None]
        return max(ran, key=lambda m: m.slower) if ran else None


def _timed(r: dict) -> bool:
    return bool(r.get("time_ms")) and r.get("correct") is True and not r.get("skip_reason")


def latest_runs(records: list[dict]) -> list[dict]:
    """Each variant's rows at each shape from its latest bench run there. A run's rows share its start
    time (`date`), so every config of one run stays (a params sweep: TILE=8, 16, 32), while a config
    that a later run replaced at a shape (a rung's default, once the rung is tuned) leaves the table
    there; the CSV keeps it. ISO dates in one zone order as text."""
    latest: dict[tuple, str] = {}
    for r in records:
        key = (r["variant"], r["shape"])
        latest[key] = max(latest.get(key, ""), str(r.get("date") or ""))
    return [r for r in records if str(r.get("date") or "") == latest[(r["variant"], r["shape"])]]


def pick_accuracy(rows: list[dict], tolerance: float = TOLERANCE, libraries: tuple[str, ...] = ("cublas",)) -> PickAccuracy:
    """At each shape with a best row: is the best row's time within `tolerance` of the fastest
    correct timed row of gpulab's own kernels there (the best row included)? Rows of several runs
    at one shape: each variant's latest run there (latest_runs, as the README's tables read them),
    so a config an earlier run timed and the latest did not is not counted against its pick."""
    latest = latest_runs(rows)
    shapes = list(dict.fromkeys(r.get("shape") for r in latest if r.get("variant") == BEST))
    judged = within = 0
    misses = []
    for shape in shapes:
        here = [r for r in latest if r.get("shape") == shape and r.get("variant") not in libraries]
        best = next(r for r in here if r.get("variant") == BEST)
        others = [r for r in here if r.get("variant") != BEST and _timed(r)]
        if not others:
            continue
        judged += 1
        timed = others + ([best] if _timed(best) else [])
        fastest = min(timed, key=lambda r: r["time_ms"])
        if _timed(best) and best["time_ms"] <= (1 + tolerance) * fastest["time_ms"]:
            within += 1
        else:
            misses.append(Miss(shape, str(best.get("picked") or ""), best.get("time_ms") if _timed(best) else None,
                               f"{fastest['variant']} {fastest.get('params') or ''}".strip(), fastest["time_ms"],
                               str(fastest["variant"]), str(best.get("chosen_by") or "")))
    return PickAccuracy(len(shapes), judged, within, tolerance, tuple(misses))


def summary(paths: list[str | Path], tolerance: float = TOLERANCE) -> str:
    """Per CSV: the line of pick_accuracy and each miss (the pick, the fastest, how much slower);
    then the figure over all of them together."""
    out, judged, within = [], 0, 0
    for path in map(Path, paths):
        found = pick_accuracy(read_csv(path), tolerance)
        judged, within = judged + found.judged, within + found.within
        out.append(f"{path.name}: {found.line()}")
        for miss in found.misses:
            ran = f"{miss.picked_ms:.4f} ms ({100 * miss.slower:+.0f}%)" if miss.picked_ms else "did not run correctly"
            out.append(f"  {miss.shape}: picked {miss.picked} {ran}; fastest {miss.fastest} {miss.fastest_ms:.4f} ms")
    if len(out) > 1 and judged:
        out.append(f"all: within {100 * tolerance:.0f}% at {within} of {judged} shapes ({100 * within / judged:.0f}%)")
    return "\n".join(out)
