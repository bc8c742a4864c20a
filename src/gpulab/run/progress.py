"""What a long job tells its caller as it goes: one observer object instead of loose callbacks.

Every method of Progress does nothing, so a script that passes none stays quiet. The command line
passes one that draws a bar on a terminal and prints a line per finished run elsewhere (a pipe, a
CI log); a script that writes rows as they come, or stops a sweep early, overrides `finished`.

    class Printer(gpulab.Progress):
        def finished(self, record):
            print(record["variant"], record.get("time_ms"))

    gpulab.bench("sgemm", shapes=[1024], progress=Printer())
"""

from __future__ import annotations


class Progress:
    """The hooks of a job that runs many things: bench, run, tune, fidelity, compare, ceilings."""

    def planned(self, count: int) -> None:
        """`count` runs are about to start (said again when a job starts its next batch)."""

    def started(self, label: str) -> None:
        """One run starts; `label` names it ('sgemm v1 TILE=16 1024x1024x1024')."""

    def finished(self, record: dict | None) -> None:
        """One run finished. `record` is its raw row (before the columns that compare it with the
        vendor library and the ceilings are added), or None where a run makes no row of its own (a
        tune's config at a shape whose row was already saved)."""

    def status(self, text: str) -> None:
        """A longer step that is not a run (measuring the card's ceilings once, say)."""

    def say(self, text: str) -> None:
        """A line worth keeping on screen (what a tune found before it starts, a skipped config)."""


QUIET = Progress()
