"""scripts/trace_t4.py without a GPU: its trace patch still applies to t4's source and the traced copy
compiles (a change to t4 that breaks the patch fails here, not on the card), and its summary of
events recorded on the H200 (tests/fixtures/trace_t4_h200_events.csv: blocks 0-5 of one traced launch
at 4096^3 with SCHEDULE=0 and with SCHEDULE=1, 2026-12-01)."""

import importlib.util
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from gpulab.experiments.base import Shape
from gpulab.experiments.gemm_bf16.tma_rungs import T4
from gpulab.gpu.compile import compile_kernel
from gpulab.records import read_csv

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / "tests" / "fixtures" / "trace_t4_h200_events.csv"


def _script():
    """scripts/trace_t4.py (a script, not a package module)."""
    path = ROOT / "scripts" / "trace_t4.py"
    spec = importlib.util.spec_from_file_location("trace_t4", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TT = _script()


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch on PATH")
@pytest.mark.parametrize("schedule", [0, 1])
def test_the_trace_patch_applies_to_t4_and_compiles(tmp_path, schedule):
    source = TT.traced_source(tmp_path)
    text = source.read_text()
    assert "unsigned long long* __restrict__ trace" in text  # the launcher's extra argument
    params = T4.default_params() | {"SCHEDULE": schedule}
    compiled = compile_kernel(source, "gemm_bf16", params, arch=T4.compile_arch("sm_90"))
    assert compiled.resources.registers > 0


def _runs() -> dict:
    runs = defaultdict(list)
    for r in TT.read_events(EVENTS):
        runs[r["params"]].append(r)
    return runs


def test_whole_tiles_run_the_mainloop_at_the_tensor_cores_peak():
    rows = TT.summarize(_runs()["SCHEDULE=0"], Shape(("M", "N", "K"), (4096, 4096, 4096)))
    assert [r["kind"] for r in rows] == ["whole tile"]
    whole = rows[0]
    assert whole["units"] == 6 * 2 * 4  # 6 blocks, 2 consumer warpgroups, 4 tiles each at 4096^3
    # 128 x 256 x 64 per k-tile at 4,096 flops per cycle per SM is 1,024 cycles.
    assert 1000 <= whole["cycles_per_k_tile"] <= 1050
    assert 3500 <= whole["epilogue_cycles"] <= 5500  # 128 KiB of FP32 out through TMA stores
    assert whole["flag_wait_cycles"] is None and whole["add_cycles"] is None
    assert whole["lag_cycles"] < 0  # consumer 1 ends its mainloop before consumer 0


def test_the_stream_k_schedule_shows_its_heads_and_tails():
    rows = {r["kind"]: r for r in TT.summarize(_runs()["SCHEDULE=1"], Shape(("M", "N", "K"), (4096, 4096, 4096)))}
    assert set(rows) == {"whole tile", "stream-K head", "stream-K tail"}
    # Each of the 6 blocks' 2 consumers: 3 whole tiles (two data-parallel, one in its share), a head
    # and a tail; but cluster 0 (blocks 0 and 1) starts its share at the first split tile's k-tile 0,
    # so it has no tail to finish.
    assert rows["stream-K head"]["units"] == 12
    assert rows["whole tile"]["units"] == 36
    tail = rows["stream-K tail"]
    assert tail["units"] == 4 * 2
    assert tail["flag_wait_cycles"] > 0 and tail["add_cycles"] > 0
    assert all(1000 <= r["cycles_per_k_tile"] <= 1100 for r in rows.values())


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "trace_t4.py"), *args],
                          capture_output=True, text=True, env={**os.environ, "GPULAB_NO_GPU": "1"})


CARD = ("--card", "NVIDIA H200", "--driver", "580.159.04", "--date", "2026-12-01")


def test_a_damaged_events_file_is_refused_in_one_line_and_the_summary_kept(tmp_path):
    """Cut off, a column gone, a unit half there: one line, exit 1, the summary already there untouched."""
    text = EVENTS.read_text()
    lines = text.splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    drop = header.index("clock")
    first_main_done = next(i for i, line in enumerate(lines) if ",C_MAIN_DONE," in line)
    damaged = {
        "cut": text[: len(text) // 2],
        "no_clock": "".join(",".join(c for i, c in enumerate(line.rstrip("\n").split(",")) if i != drop) + "\n"
                            for line in lines),
        "half_unit": "".join(line for i, line in enumerate(lines) if i != first_main_done),
    }
    summary = tmp_path / "summary.csv"
    summary.write_text("kept\n")
    for name, body in damaged.items():
        events = tmp_path / f"{name}.csv"
        events.write_text(body)
        done = _cli("--from-events", str(events), *CARD, "--summary", str(summary))
        assert done.returncode == 1, (name, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("trace_t4.py: "), (name, done.stderr)
        assert "Traceback" not in done.stderr
        assert summary.read_text() == "kept\n"


def test_tracing_without_a_gpu_says_so_in_one_line():
    done = _cli("4096x4096x4096")
    assert done.returncode == 1 and done.stderr.startswith("trace_t4.py: no NVIDIA GPU"), done.stderr


def test_the_summary_of_recorded_events_is_written(tmp_path):
    summary = tmp_path / "summary.csv"
    done = _cli("--from-events", str(EVENTS), *CARD, "--summary", str(summary))
    assert done.returncode == 0, done.stderr
    rows = read_csv(summary, required=("shape", "params", "kind", "cycles_per_k_tile", "gpu", "driver", "date"))
    assert {(r["params"], r["kind"]) for r in rows} == {
        ("SCHEDULE=0", "whole tile"), ("SCHEDULE=1", "whole tile"), ("SCHEDULE=1", "stream-K head"),
        ("SCHEDULE=1", "stream-K tail")}
    assert {r["gpu"] for r in rows} == {"NVIDIA H200"}
