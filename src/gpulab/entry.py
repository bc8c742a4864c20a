"""The `gpulab` command's entry point. It loads the CLI inside a Ctrl-C guard: gpulab.cli imports the
whole package (about 0.3 s), and an interrupt in that time would otherwise end in a Python traceback
instead of the one line and exit code 130 that an interrupt during a command gives. Nothing has been
read or written at that point."""

from __future__ import annotations

import sys

INTERRUPTED_AT_START = "interrupted while gpulab started: nothing was read or written"


def main() -> None:
    try:
        from gpulab.cli import main as cli_main  # the one import not at the top: it is what the guard covers
    except KeyboardInterrupt:
        print(INTERRUPTED_AT_START, file=sys.stderr)  # as cli prints an interrupt: no "error:"
        sys.exit(130)
    cli_main()
