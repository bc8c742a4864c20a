"""Count FFMA register-bank collisions in the hot loop of a compiled SGEMM rung (no GPU needed).

An FFMA reads up to three source registers. An operand marked .reuse on one instruction is read from
the operand-reuse cache by the next instruction that names it in the same slot; the others come from
the register file, whose banks (even and odd register numbers on Volta and later: "Dissecting the
NVIDIA Volta GPU Architecture via Microbenchmarking", Jia et al., 2018, arXiv:1804.06826) serve one
read each per cycle, so two reads in one bank cost the warp a dispatch cycle. This compiles a
variant (NVRTC, the version installed), disassembles it (nvdisasm), finds the loop with the most
FFMA whose body is the shortest (the float4, no-checks path's main loop) and counts, per loop:
    instr    instructions in the loop body
    ffma     FFMA among them
    same2    FFMA with at least two register-file reads in one bank (register % 2)
    same3    FFMA with all three in one bank
    same2_4  as same2 with four banks (register % 4), for comparison
On the H200 neither count is the whole story: scripts/bank_stalls.py found v11's and v13's FFMAs with
two reads in one bank (same2_4) stalled in dispatch 4.5-4.7x as often as the others, but v9's not
(docs/notes/sgemm-notes.md, "What v13 is still short of").
One JSON line per config; NAME=V1,V2 takes every combination (as gpulab tune's --param).
Usage (repository root):
    PYTHONPATH=src python scripts/sass_banks.py sgemm v11 [BM=64,128 BN=256 ...] [--nvdisasm PATH] [--loops N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import itertools
import subprocess
import sys
from collections import Counter

from gpulab.experiments import get_experiment
from gpulab.gpu.compile import compile_kernel

_INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
_BRANCH = re.compile(r"\bBRA\s+(?:\S+,\s*)?`\((\.L_x_\d+)\)")
_REG = re.compile(r"^-?\|?R(\d+)(\.reuse)?\|?$")
_PREDICATE = re.compile(r"^@!?U?P[0-7T]\s+")


def parse(sass: str) -> tuple[list[tuple[int, str]], dict[str, int]]:
    """(address, instruction text without predicate guard) in order, and label -> address."""
    instrs, labels, pending = [], {}, []
    for line in sass.splitlines():
        if m := _LABEL.match(line):
            pending.append(m.group(1))
        elif m := _INSTR.search(line):
            addr = int(m.group(1), 16)
            labels.update((name, addr) for name in pending)
            pending = []
            instrs.append((addr, m.group(2)))
    return instrs, labels


def loops(instrs, labels) -> list[tuple[int, int]]:
    """(first, last) address of every loop: a branch back to an earlier label."""
    out = []
    for addr, text in instrs:
        if (m := _BRANCH.search(text)) and labels.get(m.group(1), addr + 1) < addr:
            out.append((labels[m.group(1)], addr))
    return out


def opcode(text: str) -> str:
    return _PREDICATE.sub("", text).split()[0].split(".")[0]


def sources(text: str) -> list[tuple[int | None, bool]]:
    """An FFMA's three source operands: (register number or None for RZ/immediate/constant, reuse)."""
    operands = [o.strip() for o in _PREDICATE.sub("", text).split(None, 1)[1].split(",")]
    out = []
    for o in operands[1:4]:
        m = _REG.match(o)
        out.append((int(m.group(1)), bool(m.group(2))) if m else (None, False))
    return out


def ffma_reads(texts: list[str]) -> dict[int, list[int]]:
    """Position in `texts` (a loop body's instructions) -> the registers each FFMA reads from the
    register file: its register operands, less those the operand-reuse cache serves (an operand
    marked .reuse on the previous FFMA, in the same slot). Any other instruction is taken to empty the
    cache (conservative)."""
    out: dict[int, list[int]] = {}
    cache: list[int | None] = [None, None, None]
    for i, text in enumerate(texts):
        if opcode(text) != "FFMA":
            cache = [None, None, None]
            continue
        srcs = sources(text)
        out[i] = sorted({reg for slot, (reg, _) in enumerate(srcs) if reg is not None and cache[slot] != reg})
        cache = [reg if reuse else None for reg, reuse in srcs]
    return out


def count(body: list[tuple[int, str]]) -> dict[str, int]:
    """The collision counts of one loop body (see the module docstring)."""
    out = Counter(instr=len(body))
    for reads in ffma_reads([text for _, text in body]).values():
        per_bank2 = Counter(r % 2 for r in reads)
        per_bank4 = Counter(r % 4 for r in reads)
        out["ffma"] += 1
        out["same2"] += max(per_bank2.values(), default=0) >= 2
        out["same3"] += max(per_bank2.values(), default=0) >= 3
        out["same2_4"] += max(per_bank4.values(), default=0) >= 2
    return {k: out[k] for k in ("instr", "ffma", "same2", "same3", "same2_4")}


def hot_loops(sass: str, n: int = 1) -> list[dict[str, int]]:
    """The counts of the n loops with the most FFMA, the shortest first among equals: the first is
    the no-checks path's main loop (a kernel with two copies of its loop, as v13, has two)."""
    instrs, labels = parse(sass)
    ranked = []
    for lo, hi in loops(instrs, labels):
        body = [(a, t) for a, t in instrs if lo <= a <= hi]
        ranked.append(((-sum(opcode(t) == "FFMA" for _, t in body), len(body), lo), body))
    ranked.sort(key=lambda item: item[0])
    return [count(body) for _, body in ranked[:n]]


def hot_loop(sass: str) -> dict[str, int]:
    """The counts of the loop with the most FFMA (the shortest of those: the no-checks path)."""
    return next(iter(hot_loops(sass)), {})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("experiment")
    ap.add_argument("variant")
    ap.add_argument("params", nargs="*", help="NAME=VALUE or NAME=V1,V2 over the variant's defaults")
    ap.add_argument("--nvdisasm", default=os.environ.get("NVDISASM") or shutil.which("nvdisasm")
                    or "/usr/local/cuda/bin/nvdisasm")
    ap.add_argument("--loops", type=int, default=1, help="report the N hottest loops (a list) instead of one")
    args = ap.parse_args()
    if not os.path.exists(args.nvdisasm):
        print(f"no nvdisasm at {args.nvdisasm}: pass --nvdisasm PATH", file=sys.stderr)
        return 2
    exp = get_experiment(args.experiment)
    variant = exp.variant(args.variant)
    names, choices = zip(*((k, [int(x) for x in v.split(",")]) for k, v in (p.split("=", 1) for p in args.params))) \
        if args.params else ((), ())
    for values in itertools.product(*choices):
        params = variant.default_params() | dict(zip(names, values))
        label = variant.params_label(params)
        if reason := variant.constraints(params, None):
            print(json.dumps({"variant": variant.name, "params": label, "rejected": reason}))
            continue
        compiled = compile_kernel(exp.source(variant), exp.entry, params)
        sass = subprocess.run([args.nvdisasm, "-c", str(compiled.cubin_path)], capture_output=True,
                              text=True, check=True).stdout
        r = compiled.resources
        print(json.dumps({"variant": variant.name, "params": label, "registers": r.registers,
                          "spill_bytes": r.spill_stores_bytes + r.spill_loads_bytes,
                          **({"loops": hot_loops(sass, args.loops)} if args.loops > 1 else hot_loop(sass))}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
