"""Which cluster operation compute-sanitizer's racecheck trips on: the kernels of
probe_cluster_sanitizer.cu (a local arrive, an arrive through mapa on this block, one on the peer,
a store into the peer's shared memory, a TMA copy, a multicast TMA copy), each run alone under each
tool; and gemm_bf16's t4 itself in clusters of two, its operands prepared each way in turn.

    python3 scripts/probe_cluster_sanitizer.py              # every case under every tool, a table
    python3 scripts/probe_cluster_sanitizer.py --case 2     # one case, no tool (what each run does)
    python3 scripts/probe_cluster_sanitizer.py --set t4     # the t4 cases under racecheck and alone
    python3 scripts/probe_cluster_sanitizer.py --t4 memcpy  # one t4 case, no tool

Needs an sm_90 card (clusters). Each run prints one line; the table says, per case and tool, the
exit code and the tool's verdict line. t4 and v14 in clusters of two faulted under racecheck alone
(docs/notes/gemm_bf16-notes.md, "Under compute-sanitizer"); no single cluster operation does
(H200, 2026-12-02). The faults came from "--launch-count 2" beside the name filter, which this probe
passed too until 2026-12-04: without it every t4 case is clean (notebook/probes/
probe_racecheck_filter.py, which runs gpulab sanitize's own child both ways). The t4 cases (T4_CASES) keep t4 and its shape and change
one thing about the operands at a time: who wrote them (pad_k, cudaMemcpy from the host, the
harness's own upload), where they lie (allocated last, or with an allocation after them), whether
a Bt box reaches past N, and whether a kernel runs just before t4 at all.
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


# -- t4 itself ----------------------------------------------------------------------------------
# name: (shape M x N x K, how the operands reach t4, what it tells). CLUSTER = 2 unless named.
T4_CASES = {
    "staged": ((17, 33, 65), "gpulab", "as gpulab stages K % 8 != 0: pad_k, then t4 (faulted, 2026-12-02)"),
    "plain": ((17, 33, 128), "gpulab", "K a multiple of 8: read as uploaded (clean, 2026-12-02)"),
    "staged-c1": ((17, 33, 65), "gpulab", "staged, clusters of one (clean, 2026-12-02)"),
    "memcpy": ((17, 33, 65), "memcpy", "the staged layout built on the host and uploaded: no kernel wrote it"),
    "pad72": ((17, 33, 72), "pad_k", "pad_k where no staging is needed (K = 72, pitch 128 as staged)"),
    "wide": ((17, 256, 65), "gpulab", "staged, N = 256: both Bt boxes wholly inside (no row past N)"),
    "last": ((17, 33, 128), "last", "not staged, operands copied into allocations made after all others"),
    "guard": ((17, 33, 65), "guard", "staged, then 64 MiB allocated after the staged buffers"),
    "kernel-before": ((17, 33, 128), "kernel-before", "not staged, pad_k run on scratch buffers just before t4"),
}


def t4_stage(how: str, t4):
    """The `stage` step of case `how` for t4 (gpulab.experiments.base.Variant.stage)."""
    from gpulab.experiments.base import Staged
    from gpulab.experiments.gemm_bf16 import staging
    from gpulab.gpu.seam import cupy

    def memcpy(inputs, shape, params, arch):  # pad on the host, upload: cudaMemcpy writes the copies
        cp, kp = cupy(), staging.padded_k(shape["K"])
        padded = {}
        for name in ("A", "Bt"):
            host = cp.asnumpy(inputs[name])
            wide = np.zeros((host.shape[0], kp), dtype=host.dtype)
            wide[:, :host.shape[1]] = host
            padded[name] = cp.asarray(wide)
        return Staged(inputs=padded, copy=lambda: None)

    def pad_k_always(inputs, shape, params, arch):  # gemm_bf16's pad_k, staging a K that needs none
        staging.needs_staging = lambda k: True
        return staging.pad_k(inputs, shape, params, arch, dependent_launch=False)

    def last(inputs, shape, params, arch):  # the same bytes in allocations made after every other
        cp = cupy()
        return Staged(inputs={n: cp.asarray(cp.asnumpy(inputs[n])) for n in ("A", "Bt")}, copy=lambda: None)

    def guard(inputs, shape, params, arch):  # gpulab's staging, then an allocation behind its buffers
        staged = t4.stage(inputs, shape, params, arch)
        kept = cupy().zeros(64 << 20, dtype=cupy().uint8)
        return Staged(staged.inputs, lambda: (kept, staged.copy())[1], staged.moved_bytes, staged.dependent_launch)

    def kernel_before(inputs, shape, params, arch):  # a kernel just before t4, on buffers t4 never reads
        cp = cupy()
        scratch = {n: cp.zeros((inputs[n].shape[0], inputs[n].shape[1] + 1), dtype=cp.uint16) for n in ("A", "Bt")}
        odd = shape.__class__(shape.names, (shape["M"], shape["N"], shape["K"] + 1))
        staging.needs_staging = lambda k: True
        other = staging.pad_k(scratch, odd, params, arch, dependent_launch=False)
        return Staged(inputs={}, copy=other.copy)

    return {"gpulab": t4.stage, "memcpy": memcpy, "pad_k": pad_k_always, "last": last, "guard": guard,
            "kernel-before": kernel_before}[how]


def run_t4_case(name: str) -> int:
    """One t4 case, checked by gpulab's own value check (as under gpulab sanitize: CuPy's memory pool
    off, one allocation per array). Prints one line."""
    import dataclasses

    from gpulab.experiments import get_experiment
    from gpulab.gpu.seam import cupy
    from gpulab.run.lab import Lab, LabOptions, RunSpec

    dims, how, _ = T4_CASES[name]
    cupy().cuda.set_allocator(None)
    exp = get_experiment("gemm_bf16")
    t4 = exp.variant("t4")
    variant = dataclasses.replace(t4, stage=t4_stage(how, t4))
    params = t4.default_params() | {"CLUSTER": 1 if name.endswith("-c1") else 2}
    result = Lab(LabOptions(seed=0)).verify(RunSpec(exp, variant, params, exp.shape(*dims)))
    print(f"t4 {name}: {'ok' if result.ok else 'WRONG ' + result.describe()}", flush=True)
    return 0 if result.ok else 1


def run_t4(timeout: float) -> int:
    """Every t4 case alone and under racecheck (t4's launches only, as gpulab sanitize runs it): one
    line each, the exit code, the tool's error count and first report (gpulab.jobs.sanitize.parse_log)."""
    import tempfile

    from gpulab.jobs.sanitize import find_sanitizer, parse_log

    tool_path = str(find_sanitizer())
    print(f"{'t4 case':<16} {'tool':<10} {'exit':>4}  {'errors':>6}  verdict")
    for name, (dims, how, what) in T4_CASES.items():
        for tool in ("none", "racecheck"):
            child = [sys.executable, __file__, "--t4", name]
            with tempfile.TemporaryDirectory() as tmp:
                log = Path(tmp) / "log.txt"
                argv = child if tool == "none" else [
                    tool_path, "--tool", tool, "--kernel-name", "kernel_name=gemm_bf16",
                    "--report-api-errors", "no", "--print-limit", "5", "--log-file", str(log), *child]
                try:
                    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
                    code, text = r.returncode, r.stdout + r.stderr
                except subprocess.TimeoutExpired:
                    code, text = -1, f"timed out after {timeout:.0f} s"
                report = parse_log(log.read_text(errors="replace")) if log.exists() else None
            errors = "" if report is None or report.errors is None else str(report.errors)
            said = (report.tool_error or report.first) if report is not None and (report.errors or report.tool_error) else ""
            print(f"{name:<16} {tool:<10} {code:>4}  {errors:>6}  {verdict(text)}{' | ' + said[:120] if said else ''}",
                  flush=True)
    print("cases: " + "; ".join(f"{n}: {'x'.join(map(str, d))}, {w}" for n, (d, _, w) in T4_CASES.items()))
    return 0


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
    parser.add_argument("--t4", choices=sorted(T4_CASES), help="run one t4 case, no tool")
    parser.add_argument("--set", choices=("kernels", "t4"), default="kernels",
                        help="the table of the minimal kernels (default) or of t4's cases")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per tool run")
    args = parser.parse_args()
    try:
        if args.t4 is not None:
            return run_t4_case(args.t4)
        if args.case is not None:
            return run_case(args.case)
        return run_t4(args.timeout) if args.set == "t4" else run_all(args.timeout)
    except GpulabError as exc:  # no compute-sanitizer, no GPU: one line
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
