"""Which cluster operation compute-sanitizer's racecheck trips on: the kernels of
probe_cluster_sanitizer.cu (a local arrive, an arrive through mapa on this block, one on the peer,
a store into the peer's shared memory, a TMA copy, a multicast TMA copy), each run alone under each
tool.

    python3 scripts/probe_cluster_sanitizer.py              # every case under every tool, a table
    python3 scripts/probe_cluster_sanitizer.py --case 2     # one case, no tool (what each run does)

Needs an sm_90 card (clusters). Each run prints one line; the table says, per case and tool, the
exit code and the tool's verdict line. t4 and v14 in clusters of two faulted under racecheck alone
(docs/notes/gemm_bf16-notes.md, "Under compute-sanitizer"); this tells which operation it is.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

from gpulab.errors import GpulabError

SOURCE = Path(__file__).resolve().parent / "probe_cluster_sanitizer.cu"
CASES = {0: "local arrive", 1: "arrive through mapa on itself", 2: "arrive on the peer's barrier",
         3: "store into the peer's shared memory", 4: "TMA copy into its own block", 5: "multicast TMA copy"}
TOOLS = ("none", "memcheck", "racecheck", "synccheck")
BLOCKS = 4  # two clusters of two


ROWS, COLS = 16, 64  # the BF16 matrix the TMA cases copy: 2 KiB, words 0 .. 1023


def expected(case: int) -> list[int]:
    """What each block writes: 1 after its wait completes, (case 3) its peer's rank + 1, (cases 4-5)
    the sum of the matrix's words."""
    if case == 3:
        return [(b % 2 ^ 1) + 1 for b in range(BLOCKS)]
    return [ROWS * COLS * (ROWS * COLS - 1) // 2] * BLOCKS if case >= 4 else [1] * BLOCKS


def run_case(case: int) -> int:
    from gpulab.gpu.compile import compile_kernel
    from gpulab.gpu.launch import by_value, load, synchronize
    from gpulab.gpu.seam import cupy
    from gpulab.gpu.tma import bf16_matrix_map, encode

    cp = cupy()
    kernel = load(compile_kernel(SOURCE, "probe", {"CASE": case}, "sm_90a"))
    out = cp.full(BLOCKS, -7, dtype=cp.int32)
    matrix = cp.arange(ROWS * COLS, dtype=cp.uint16).reshape(ROWS, COLS)
    box_rows = ROWS // 2 if case == 5 else ROWS  # the multicast case: each block's half
    tensor_map = by_value(encode(bf16_matrix_map(matrix.data.ptr, ROWS, COLS, box_rows, COLS)))
    kernel((BLOCKS, 1, 1), (32, 1, 1), (out, tensor_map))
    synchronize(f"probe case {case}")
    got = [int(v) for v in cp.asnumpy(out)]
    ok = got == expected(case)
    print(f"case {case} ({CASES[case]}): {'ok' if ok else 'WRONG'} {got}")
    return 0 if ok else 1


def verdict(text: str) -> str:
    """The tool's summary line, or the last line of the output."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    summary = [line for line in lines if "ERROR SUMMARY" in line or "RACECHECK SUMMARY" in line
               or "Internal Sanitizer Error" in line or "illegal" in line.lower()]
    return (summary or lines or ["(no output)"])[-1][:110]


def run_all(timeout: float) -> int:
    from gpulab.jobs.sanitize import find_sanitizer

    tool_path = str(find_sanitizer())
    print(f"{'case':<40} {'tool':<10} {'exit':>4}  verdict")
    for case, what in CASES.items():
        for tool in TOOLS:
            child = [sys.executable, __file__, "--case", str(case)]
            argv = child if tool == "none" else [tool_path, "--tool", tool, "--report-api-errors", "no", *child]
            try:
                r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
                code, text = r.returncode, r.stdout + r.stderr
            except subprocess.TimeoutExpired:
                code, text = -1, f"timed out after {timeout:.0f} s"
            print(f"{f'{case} {what}':<40} {tool:<10} {code:>4}  {verdict(text)}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", type=int, choices=sorted(CASES), help="run one case, no tool")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per tool run")
    args = parser.parse_args()
    try:
        return run_case(args.case) if args.case is not None else run_all(args.timeout)
    except GpulabError as exc:  # no compute-sanitizer, no GPU: one line
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
