"""scripts/trace_t4.py without a GPU: its trace patch still applies to t4's source and the traced copy
compiles (a change to t4 that breaks the patch fails here, not on the card), and its summary of
events recorded on the H200 (tests/fixtures/trace_t4_h200_events.csv: blocks 0-5 of one traced launch
at 4096^3 with SCHEDULE=0 and with SCHEDULE=1, 2026-12-01)."""

import csv
import importlib.util
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from gpulab.experiments.base import Shape
from gpulab.experiments.gemm_bf16.tma_rungs import T4
from gpulab.gpu.compile import compile_kernel

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
    with open(EVENTS, newline="") as f:
        rows = [{**r, **{k: int(r[k]) for k in ("block", "role", "unit", "k_tiles", "ns", "clock")}}
                for r in csv.DictReader(f)]
    runs = defaultdict(list)
    for r in rows:
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
