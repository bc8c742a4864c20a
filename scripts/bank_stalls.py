"""Which register-bank rule the card's dispatch stalls follow, from one SGEMM hot loop: joins Nsight
Compute's per-instruction stall samples (`gpulab profile ... --sass --sass-csv FILE`, captured on the
card) with the same kernel's disassembly compiled here (reuse flags, which ncu's text leaves out),
and prints the mean dispatch-stall samples of the loop's FFMAs grouped by how many registers each
reads from the register file (an operand marked .reuse on the previous FFMA in the same slot comes
from the reuse cache) and how many of those reads share a bank, under two rules: even/odd register
numbers (reg % 2) and four banks (reg % 4). The rule under which "shares a bank" separates stalled
from unstalled FFMAs is the one the card follows.
Compile here with the card's NVRTC (13.0 for the H200, scripts/README.md says how): the rows are
joined by position and the script checks that every instruction matches.
Usage (repository root):
    PYTHONPATH=src python scripts/bank_stalls.py SASS_CSV sgemm v13 [NAME=VALUE ...] [--nvdisasm PATH]"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sass_banks import ffma_reads, opcode, parse  # noqa: E402  (a sibling script, not a package)

from gpulab.experiments import get_experiment  # noqa: E402
from gpulab.gpu.compile import compile_kernel  # noqa: E402


def _plain(text: str) -> str:
    """What ncu's text and nvdisasm's share: an FFMA without reuse flags and spacing; of any other
    instruction its opcode (ncu orders some operands differently, LDGSTS's for one, and branch
    targets are absolute addresses there)."""
    text = re.sub(r"\s+", " ", re.sub(r"\.reuse", "", text)).strip().rstrip(";").strip()
    return text if opcode(text) == "FFMA" else opcode(text)


def same_bank(regs: list[int], banks: int) -> int:
    return max(Counter(r % banks for r in regs).values(), default=0)


def hot_loop_dispatch(local: list[str], rows: list[dict]) -> tuple[list[float], dict[int, list[int]]]:
    """The hottest loop's dispatch-stall samples per instruction (in order) and, by position in it, the
    registers each FFMA reads from the register file. `local` is this build's disassembly (with reuse
    flags), `rows` ncu's per-instruction CSV rows of the same code; ValueError where they differ."""
    if len(rows) != len(local) or any(_plain(r["instruction"]) != _plain(t) for r, t in zip(rows, local)):
        raise ValueError(f"the capture is not this build's code ({len(rows)} instructions there, {len(local)} here)")
    hottest = max(float(r["executed"]) for r in rows)
    loop = [i for i, r in enumerate(rows) if float(r["executed"]) >= 0.99 * hottest]
    return [float(rows[i]["stall_dispatch"] or 0) for i in loop], ffma_reads([local[i] for i in loop])


def by_bank_class(stalls: list[float], reads: dict[int, list[int]]) -> dict[tuple[int, int, int], list[float]]:
    """(register-file reads, most of them in one bank by reg % 2, by reg % 4) -> the FFMAs' samples."""
    groups = defaultdict(list)
    for pos, regs in reads.items():
        groups[(len(regs), same_bank(regs, 2), same_bank(regs, 4))].append(stalls[pos])
    return dict(groups)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sass_csv")
    ap.add_argument("experiment")
    ap.add_argument("variant")
    ap.add_argument("params", nargs="*", help="NAME=VALUE over the variant's defaults (as profiled)")
    ap.add_argument("--nvdisasm", default=os.environ.get("NVDISASM") or shutil.which("nvdisasm")
                    or "/usr/local/cuda/bin/nvdisasm")
    args = ap.parse_args()
    exp = get_experiment(args.experiment)
    variant = exp.variant(args.variant)
    params = variant.default_params() | {k: int(v) for k, v in (p.split("=", 1) for p in args.params)}
    compiled = compile_kernel(exp.source(variant), exp.entry, params)
    sass = subprocess.run([args.nvdisasm, "-c", str(compiled.cubin_path)], capture_output=True, text=True,
                          check=True).stdout
    try:
        with open(args.sass_csv, newline="") as f:
            rows = list(csv.DictReader(f))
        stalls, reads = hot_loop_dispatch([text for _, text in parse(sass)[0]], rows)
    except OSError as exc:
        print(f"{args.sass_csv}: cannot read it ({exc.strerror}): pass the file `gpulab profile ... --sass-csv` wrote",
              file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"{args.sass_csv}: no column {exc}: pass the file `gpulab profile ... --sass-csv` wrote", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"{args.sass_csv}: {exc}: compile with the card's NVRTC and the profiled params", file=sys.stderr)
        return 2
    on_ffma = sum(stalls[p] for p in reads)
    print(f"{variant.name} {variant.params_label(params)}: hot loop of {len(stalls)} instructions, {len(reads)} FFMA "
          f"({on_ffma:,.0f} dispatch-stall samples; the loop's other instructions {sum(stalls) - on_ffma:,.0f})")
    print("register-file reads | most in one bank, reg%2 | reg%4 | FFMAs | mean dispatch samples")
    for key, values in sorted(by_bank_class(stalls, reads).items()):
        print(f"{key[0]:>19} | {key[1]:>23} | {key[2]:>5} | {len(values):>5} | {sum(values) / len(values):>8.1f}")
    for banks in (2, 4):
        hit = [stalls[p] for p, regs in reads.items() if same_bank(regs, banks) >= 2]
        miss = [stalls[p] for p, regs in reads.items() if same_bank(regs, banks) < 2]
        ratio = (sum(hit) / len(hit)) / (sum(miss) / len(miss)) if hit and miss and sum(miss) else float("nan")
        print(f"reg % {banks}: {len(hit)} FFMAs with two reads in one bank, mean {sum(hit) / max(1, len(hit)):.1f}; "
              f"{len(miss)} without, mean {sum(miss) / max(1, len(miss)):.1f} ({ratio:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
