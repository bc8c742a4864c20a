"""Where gemm_bf16 t4's time goes, unit by unit, on each block of its persistent grid (Hopper GPU).

Runs a traced copy of t4 (scripts/trace_t4.patch applied to its source: each role's leader
thread notes %globaltimer, clock64 and a tag at a unit's start, first k-tile landed, last wgmma
retired, stream-K hand-over and fixup, and epilogue end) once to warm up, flushes the L2, runs it
again and reads the trace. Prints, per shape and config:
    span          first to last event on any block (globaltimer, ns)
    per unit kind (whole tile, stream-K head, stream-K middle, stream-K tail): how many, SM cycles
                  per k-tile of the mainloop, cycles waiting for the unit's first k-tile, cycles of
                  the epilogue (or hand-over), the fixup's flag wait and add
    finish        when each block's consumers finished, as a share of the span: how long the
                  last round leaves blocks idle
    lag           consumer 1's mainloop end minus consumer 0's, per tile (STAGGER's offset)
--events FILE keeps every event (block, role, unit, k_tiles, tag, ns, clock) for a timeline (megabytes);
--summary FILE writes the printed figures as CSV, one row per shape, config and unit kind.
--from-events FILE summarizes events kept before, without a GPU; --patch FILE traces t4 with a change.

    python scripts/trace_t4.py 4096x4096x4096 [--params SCHEDULE=1,STAGGER=2 ...] [--events F] [--summary F]
    python scripts/trace_t4.py --from-events F --card "NVIDIA H200" --driver 580.159.04 --date 2026-12-01 --summary F
The trace is a copy of t4 with stores added, and its stamps cost cycles of their own (a %globaltimer
read and three stores each): its span at 4096^3 on the H200 was 183.8 us where t4 timed 184-186 us
the same day."""

from __future__ import annotations

import argparse
import datetime
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

from gpulab.errors import GpulabError
from gpulab.experiments.base import Shape
from gpulab.experiments.gemm_bf16.tma_rungs import BK, T4
from gpulab.experiments.gemm_bf16.bf16 import to_bf16_bits
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.device import nvidia_driver_string, require_gpu
from gpulab.gpu.launch import load, synchronize
from gpulab.gpu.seam import cupy
from gpulab.gpu.timing import L2Flusher
from gpulab.records import read_csv, write_csv  # written whole or not at all: a temporary file, then a rename


ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src/gpulab/experiments/gemm_bf16" / T4.file
PATCH = ROOT / "scripts/trace_t4.patch"
EVENTS, ROLES = 96, 3  # t4_trace.patch's TRACE_EVENTS and roles (producer, consumer 0, consumer 1)
TAGS = {1: "P_UNIT", 2: "P_UNIT_DONE", 10: "C_UNIT", 11: "C_FIRST", 12: "C_MAIN_DONE", 13: "C_HANDED",
        14: "C_FLAG", 15: "C_ADDED", 16: "C_STORED"}


def traced_source(folder: Path, change: str | None = None) -> Path:
    """t4's source with the trace patch applied (after `change`, a patch of a change to trace, where
    given), written into `folder`."""
    source = SOURCE
    if change:
        source = folder / "t4_changed.cu"
        subprocess.run(["patch", "-s", "-o", str(source), str(SOURCE), change], check=True)
    out = folder / "t4_trace.cu"
    subprocess.run(["patch", "-s", "-o", str(out), str(source), str(PATCH)], check=True)
    return out


def run_traced(source: Path, params: dict, shape: Shape, seed: int, l2_bytes: int) -> list[dict]:
    """One warm-up launch, an L2 flush, one traced launch: its events, one dict each."""
    cp = cupy()
    m, n, k = shape["M"], shape["N"], shape["K"]
    compiled = compile_kernel(source, "gemm_bf16", params, arch=T4.compile_arch("sm_90"))
    rng = np.random.default_rng(seed)  # random BF16 operands: never zeros, which run faster
    a_bits, b_bits = (to_bf16_bits(rng.standard_normal(dims).astype(np.float32)) for dims in ((m, k), (n, k)))
    dev = {"A": cp.asarray(a_bits), "Bt": cp.asarray(b_bits)}
    c = cp.zeros((m, n), dtype=cp.float32)
    staged = T4.stage(dev, shape, params, "sm_90")
    reads = dev if staged is None else {**dev, **staged.inputs}
    if staged is not None:
        staged.copy()
    launch = T4.launch(params, shape)
    blocks = launch.grid[0]
    trace = cp.zeros(blocks * ROLES * EVENTS * 3, dtype=cp.uint64)
    args = (np.int32(m), np.int32(n), np.int32(k), reads["A"], reads["Bt"], c,
            *T4.extra_args(reads, c, shape, params), trace)
    kernel = load(compiled)
    flush = L2Flusher(l2_bytes)
    kernel(launch.grid, launch.block, args, launch.smem_dynamic_bytes)
    trace.fill(0)
    flush()
    kernel(launch.grid, launch.block, args, launch.smem_dynamic_bytes)
    synchronize("t4 traced")
    raw = cp.asnumpy(trace).reshape(blocks, ROLES, EVENTS, 3)
    rows = []
    for b in range(blocks):
        for role in range(ROLES):
            for ns_, clock, word in raw[b, role]:
                if word == 0:
                    break
                rows.append({"block": b, "role": role, "unit": int(word >> 8) & 0xFFFF, "k_tiles": int(word >> 24),
                             "tag": TAGS[int(word) & 0xFF], "ns": int(ns_), "clock": int(clock)})
    return rows


def unit_kind(tags: set, k_tiles: int, full: int) -> str:
    if "C_HANDED" in tags:
        return "stream-K head"
    if "C_FLAG" in tags:
        return "stream-K tail"
    return "whole tile" if k_tiles == full else "stream-K middle"


def summarize(rows: list[dict], shape: Shape) -> list[dict]:
    """Prints the figures of one traced launch; returns them as rows, one per unit kind."""
    full = -(-shape["K"] // BK)
    t0 = min(r["ns"] for r in rows)
    span = max(r["ns"] for r in rows) - t0
    units = defaultdict(dict)  # (block, role, unit) -> tag -> event
    for r in rows:
        if r["role"] > 0:
            units[(r["block"], r["role"], r["unit"])][r["tag"]] = r
    by_kind = defaultdict(lambda: defaultdict(list))
    for ev in units.values():
        k_tiles = ev["C_UNIT"]["k_tiles"]
        kind = unit_kind(set(ev), k_tiles, full)
        d = by_kind[kind]
        d["main"].append((ev["C_MAIN_DONE"]["clock"] - ev["C_FIRST"]["clock"]) / k_tiles)
        d["first"].append(ev["C_FIRST"]["clock"] - ev["C_UNIT"]["clock"])
        end = ev.get("C_HANDED") or ev["C_STORED"]
        d["epilogue"].append(end["clock"] - ev.get("C_ADDED", ev["C_MAIN_DONE"])["clock"])
        if "C_FLAG" in ev:
            d["flag"].append(ev["C_FLAG"]["clock"] - ev["C_MAIN_DONE"]["clock"])
            d["add"].append(ev["C_ADDED"]["clock"] - ev["C_FLAG"]["clock"])
    # SM clock: cycles per ns over each consumer's whole trace
    mhz = []
    for (b, role), evs in _by_role(rows).items():
        if role > 0 and len(evs) > 1 and evs[-1]["ns"] > evs[0]["ns"]:
            mhz.append(1e3 * (evs[-1]["clock"] - evs[0]["clock"]) / (evs[-1]["ns"] - evs[0]["ns"]))
    print(f"span {span / 1e3:.1f} us, SM clock ~{statistics.median(mhz):.0f} MHz (median over warpgroups)")
    fmt = lambda x: "-" if x is None else f"{x:,.0f}"
    print(f"{'unit kind':16} {'units':>5} {'cyc/k-tile':>10} {'first wait':>10} {'epilogue':>9} {'flag wait':>9} {'add':>7}")
    out = []
    finish = sorted((max(e["ns"] for e in evs) - t0) / span for (b, role), evs in _by_role(rows).items() if role > 0)
    idle = 1 - statistics.mean(finish)
    lag = [units[(b, 2, u)]["C_MAIN_DONE"]["clock"] - ev["C_MAIN_DONE"]["clock"]
           for (b, role, u), ev in units.items() if role == 1 and (b, 2, u) in units]
    for kind, d in sorted(by_kind.items()):
        row = {"kind": kind, "units": len(d["main"]), **{name: _median(d.get(key)) for name, key in (
            ("cycles_per_k_tile", "main"), ("first_wait_cycles", "first"), ("epilogue_cycles", "epilogue"),
            ("flag_wait_cycles", "flag"), ("add_cycles", "add"))},
               "span_us": round(span / 1e3, 2), "sm_mhz": round(statistics.median(mhz)), "idle_pct": round(100 * idle, 2),
               "lag_cycles": _median(lag)}
        out.append(row)
        print(f"{kind:16} {row['units']:5d} {fmt(row['cycles_per_k_tile']):>10} {fmt(row['first_wait_cycles']):>10} "
              f"{fmt(row['epilogue_cycles']):>9} {fmt(row['flag_wait_cycles']):>9} {fmt(row['add_cycles']):>7}")
    print(f"consumers finish at {finish[0]:.3f} (first) / {statistics.median(finish):.3f} (median) of the span; "
          f"mean idle after finishing {100 * idle:.1f}% of the span")
    if lag:
        print(f"consumer 1's mainloop ends {fmt(_median(lag))} cycles after consumer 0's (median over units; "
              f"quartiles {np.percentile(lag, 25):,.0f} .. {np.percentile(lag, 75):,.0f})")
    return out


def _median(xs) -> float | None:
    return round(statistics.median(xs), 1) if xs else None


def _by_role(rows: list[dict]) -> dict:
    out = defaultdict(list)
    for r in rows:
        out[(r["block"], r["role"])].append(r)
    return out


def shape_of(text: str) -> Shape:
    return Shape(("M", "N", "K"), tuple(int(x) for x in text.lower().split("x")))


def traced(ns, l2_bytes: int) -> list[dict]:
    """Trace every config at every shape on this GPU: the events, each row with its shape and params."""
    events = []
    with tempfile.TemporaryDirectory() as tmp:
        source = traced_source(Path(tmp), ns.patch)
        for text_params in ns.params or [""]:
            given = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in text_params.split(",") if kv}
            for text in ns.shapes:
                rows = run_traced(source, T4.default_params() | given, shape_of(text), ns.seed, l2_bytes)
                events += [r | {"shape": text, "params": text_params} for r in rows]
    return events


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="*")
    ap.add_argument("--params", action="append", default=[], help="SCHEDULE=1,STAGGER=2 (repeatable)")
    ap.add_argument("--events", help="write every event here (rows carry shape and params)")
    ap.add_argument("--summary", help="write the summary rows here")
    ap.add_argument("--patch", help="trace t4 with this change applied first (a patch of its source)")
    ap.add_argument("--from-events", help="summarize this events file instead of tracing (no GPU)")
    ap.add_argument("--card", help="the GPU's name (default: this machine's)")
    ap.add_argument("--driver", help="its driver version (default: this machine's)")
    ap.add_argument("--date", help="when the events were taken (default: today)")
    ap.add_argument("--seed", type=int, default=0)
    ns = ap.parse_args()
    try:
        return run(ap, ns)
    except GpulabError as exc:  # no GPU, a damaged events file: one line, nothing written
        sys.exit(f"trace_t4.py: {exc}")


def run(ap: argparse.ArgumentParser, ns: argparse.Namespace) -> int:
    if ns.from_events:
        if not (ns.card and ns.driver and ns.date):
            ap.error("--from-events needs --card, --driver and --date: the events do not say where they were taken")
        events = read_events(Path(ns.from_events))
        card = {"gpu": ns.card, "driver": ns.driver, "date": ns.date}
    elif ns.shapes:
        info = require_gpu()
        card = {"gpu": ns.card or info.name, "driver": ns.driver or nvidia_driver_string(),
                "date": ns.date or datetime.date.today().isoformat()}
        events = traced(ns, info.l2_bytes)
        if ns.events:
            write_csv(Path(ns.events), events)
    else:
        ap.error("name shapes to trace, or --from-events FILE")
    runs = defaultdict(list)
    for r in events:
        runs[(r["shape"], r["params"])].append(r)
    summary = []
    for (text, text_params), rows in runs.items():
        print(f"-- t4 {text_params or 'defaults'} {text}")
        summary += [{"shape": text, "params": text_params, **row, **card} for row in summarize(rows, shape_of(text))]
    if ns.summary and summary:
        write_csv(Path(ns.summary), summary)
    return 0


EVENT_COLUMNS = ("block", "role", "unit", "k_tiles", "tag", "ns", "clock", "shape", "params")


def read_events(path: Path) -> list[dict]:
    """Events kept with --events, checked as gpulab checks its own CSVs (a cut-off or damaged file, a
    missing column), and each unit complete: a file that is not a whole trace is refused, not
    summarized into wrong figures."""
    rows = read_csv(path, required=EVENT_COLUMNS, need_rows=True)
    for r in rows:
        r["params"] = r["params"] or ""
        if r["tag"] not in TAGS.values():
            raise GpulabError(f"{path}: unknown event tag {r['tag']!r}; is this a trace_t4.py --events file?")
    seen = defaultdict(set)
    for r in rows:
        if r["role"] > 0:
            seen[(r["shape"], r["params"], r["block"], r["role"], r["unit"])].add(r["tag"])
    for key, tags in seen.items():
        if missing := {"C_UNIT", "C_FIRST", "C_MAIN_DONE"} - tags:
            raise GpulabError(f"{path}: unit {key[4]} of block {key[2]} ({key[0]} {key[1]}) lacks "
                              f"{', '.join(sorted(missing))}: the file is not a whole trace")
    return rows


if __name__ == "__main__":
    sys.exit(main())
