"""Ctrl-C, as a user presses it (and SIGTERM, as `timeout` sends it): exit 130 (143) with one
accurate line, every file either as it was or whole (no partly written plot, no temporary file left
behind)."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpulab.cli import INTERRUPTED

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "GPULAB_NO_GPU": "1"}

# `gpulab report`, stopped halfway through writing its second PNG, as a Ctrl-C there would: part of
# the file written, then KeyboardInterrupt.
INTERRUPTED_REPORT = """
import pathlib
import sys

original = pathlib.Path.write_bytes
pngs = []

def write_bytes(self, data):
    if data.startswith(b"\\x89PNG"):
        pngs.append(self)
        if len(pngs) == 2:
            original(self, data[: len(data) // 2])
            raise KeyboardInterrupt
    return original(self, data)

pathlib.Path.write_bytes = write_bytes
sys.argv = ["gpulab", "report"]
from gpulab.cli import main
main()
"""


def test_an_interrupted_report_leaves_whole_files_and_exits_130(tmp_path):
    folder = tmp_path / "results" / "h200"
    shutil.copytree(REPO / "results" / "h200", folder)
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    r = subprocess.run([sys.executable, "-c", INTERRUPTED_REPORT], capture_output=True, text=True, env=ENV,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 130, r.stdout + r.stderr
    assert r.stderr.strip() == INTERRUPTED and "Traceback" not in r.stderr
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert set(after) == set(before)  # no .tmp file
    changed = [name for name in after if after[name] != before[name]]
    assert len(changed) <= 1 and all(after[n].startswith(b"\x89PNG\r\n") for n in changed)  # the first, whole


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_a_fidelity_run_exits_128_plus_it_and_keeps_the_file(tmp_path, sig, code):
    """A real SIGINT (Ctrl-C) or SIGTERM (`timeout`, a batch scheduler) while ncu (a stand-in that
    waits) profiles the first run: the same one line and cleanup, exit 130 or 143."""
    started = tmp_path / "started"
    ncu = tmp_path / "ncu"
    ncu.write_text(f"#!/bin/sh\ntouch {started}\nsleep 60\n")
    ncu.chmod(0o755)
    out = tmp_path / "fidelity.csv"
    shutil.copy(REPO / "results" / "h200" / "fidelity.csv", out)
    before = out.read_bytes()
    # SIGINT as a terminal's Ctrl-C delivers it: a suite started as a background job (`cmd &` in a
    # script) hands its children SIGINT ignored, as POSIX has it, and this child would never see it.
    proc = subprocess.Popen([sys.executable, "-m", "gpulab.cli", "fidelity", "stencil", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**ENV, "GPULAB_NCU": str(ncu)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), proc.communicate(timeout=10)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert err.strip() == INTERRUPTED
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == \
        sorted(["fidelity.csv", "ncu", "started"])


# The `gpulab` script's entry, with the CLI's import interrupted as a Ctrl-C in gpulab's first 0.3 s
# would interrupt it (seen on 2026-12-01: a KeyboardInterrupt traceback from dataclasses, rc -2).
INTERRUPTED_IMPORT = """
import builtins
import sys

real_import = builtins.__import__

def interrupted(name, *args, **kwargs):
    if name == "gpulab.cli":
        raise KeyboardInterrupt
    return real_import(name, *args, **kwargs)

builtins.__import__ = interrupted
sys.argv = ["gpulab", "fidelity", "--rejudge"]
from gpulab.entry import main
main()
"""


def test_ctrl_c_while_gpulab_loads_is_one_line_and_exit_130(tmp_path):
    from gpulab.entry import INTERRUPTED_AT_START

    r = subprocess.run([sys.executable, "-c", INTERRUPTED_IMPORT], capture_output=True, text=True, env=ENV,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 130, r.stdout + r.stderr
    assert r.stderr.strip() == INTERRUPTED_AT_START and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []
