"""Check a wgmma rung (t2, t3, t4) on the GPU on its own, without the gemm_bf16 experiment's harness, and
say where it is wrong: the first wrong (row, col) with expected and got, which rows (mod 64) and
columns (mod 8) are wrong, whether any element was never written (NaN), where the got values come
from in the reference (a fragment-mapping bug moves values) and which k16 slices of each k-tile the
product used (a descriptor bug drops or repeats slices).

    python notebook/probes/wgmma_probe.py [--variant t2|t3|t4] [--exact] [--params BM=128,BN=256,STAGES=4,GROUP_M=8 ...] MxNxK ...
Exit status 1 when any shape is wrong."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from gpulab.experiments.base import Shape
from gpulab.experiments.gemm_bf16.tma_rungs import T2, T3, T4
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.launch import load, synchronize
from gpulab.gpu.seam import cupy

FOLDER = Path(__file__).resolve().parents[1] / "src/gpulab/experiments/gemm_bf16"
VARIANTS = {v.name: v for v in (T2, T3, T4)}


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> BF16 bits by truncation (the inputs here are exact in BF16 or need not round)."""
    return (np.ascontiguousarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def from_bits(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def inputs(m: int, n: int, k: int, exact: bool, rng) -> tuple[np.ndarray, np.ndarray]:
    if exact:
        a = rng.integers(-3, 4, (m, k)).astype(np.float32)
        b = rng.integers(-3, 4, (n, k)).astype(np.float32)
    else:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((n, k)).astype(np.float32)
    return bf16_bits(a), bf16_bits(b)


def run(variant, params: dict, m: int, n: int, k: int, exact: bool, seed: int) -> bool:
    cp = cupy()
    shape = Shape(("M", "N", "K"), (m, n, k))
    label = f"{variant.name} {params} {m}x{n}x{k} {'exact' if exact else 'random'}"
    if reason := variant.constraints(params, shape):
        print(f"SKIP {label}: {reason}")
        return True
    compiled = compile_kernel(FOLDER / variant.file, "gemm_bf16", params, arch=variant.compile_arch("sm_90"))
    r = compiled.resources
    print(f"-- {label}: {r.registers} regs, {r.spill_stores_bytes}/{r.spill_loads_bytes} B spilled")
    a_bits, b_bits = inputs(m, n, k, exact, np.random.default_rng(seed))
    dev = {"A": cp.asarray(a_bits), "Bt": cp.asarray(b_bits)}
    c = cp.full((m, n), cp.nan, dtype=cp.float32)
    launch = variant.launch(params, shape)
    # K not a multiple of 8: the variant's padded staging (gemm_bf16/staging.py), as the harness runs it.
    staged = variant.stage(dev, shape, params, "sm_90")
    reads = dev if staged is None else {**dev, **staged.inputs}
    if staged is not None:
        staged.copy()
    # The experiment's argument order (gemm_bf16's kernel_args), then the variant's tensor maps.
    args = (np.int32(m), np.int32(n), np.int32(k), reads["A"], reads["Bt"], c, *variant.extra_args(reads, c, shape, params))
    if variant is T4 and params.get("SCHEDULE"):  # how many cluster tiles the stream-K tail split (0: none)
        print(f"   {launch.grid[0] // params['CLUSTER']} clusters, stream-K tiles {int(args[-1])}")
    load(compiled)(launch.grid, launch.block, args, launch.smem_dynamic_bytes)
    synchronize(label)
    got = cp.asnumpy(c).astype(np.float64)
    a, b = from_bits(a_bits).astype(np.float64), from_bits(b_bits).astype(np.float64)
    ref = a @ b.T
    if exact:
        wrong = ~(got == ref)
    else:
        tol = max(2e-5, 4.0 * k * 2.0**-24) * max(1.0, np.abs(ref).max())
        wrong = ~(np.abs(got - ref) <= tol)
    if not wrong.any():
        err = np.abs(got - ref).max() / max(1e-30, np.abs(ref).max())
        print(f"OK   {label}: max relative error {err:.2e}")
        return True
    describe(wrong, got, ref, a, b, params)
    print(f"FAIL {label}")
    return False


def describe(wrong, got, ref, a, b, params) -> None:
    m, n = ref.shape
    rows, cols = np.nonzero(wrong)
    print(f"  {wrong.sum()} of {wrong.size} wrong; {np.isnan(got).sum()} NaN (never written)")
    print(f"  first wrong (row, col) = ({rows[0]}, {cols[0]}): expected {ref[rows[0], cols[0]]:g}, got {got[rows[0], cols[0]]:g}")
    print(f"  wrong rows mod 64 (warp*16 + lane/4 [+8]): {sorted(set((rows % 64).tolist()))[:64]}")
    print(f"  wrong cols mod 8 ((lane%4)*2 [+1]): {sorted(set((cols % 8).tolist()))}; "
          f"wrong col blocks of 8 (mod {params['BN']}): {sorted(set(((cols % params['BN']) // 8).tolist()))[:32]}")
    # Rows by 128-row block, as t4's clusters stack them (rank = block % 2): a multicast or remote
    # barrier bug shows on one rank's rows, or on the columns of one Bt slice (BN / 2).
    print(f"  wrong 128-row blocks: {sorted(set((rows // 128).tolist()))[:32]}; "
          f"wrong col halves of BN: {sorted(set(((cols % params['BN']) // max(1, params['BN'] // 2)).tolist()))}")
    # A coarse map of the first 64 x 128 corner: '.' right, 'X' wrong, 'N' never written.
    print("  map of rows 0-63 (step 4) x cols 0-127 (step 2):")
    for r in range(0, min(m, 64), 4):
        line = "".join("N" if np.isnan(got[r, cc]) else ("X" if wrong[r, cc] else ".") for cc in range(0, min(n, 128), 2))
        print(f"    {r:3d} {line}")
    # Where do the wrong values come from? The same value elsewhere in the reference's first tile.
    tile = ref[: min(m, 64), : min(n, params["BN"])]
    for r, cc in list(zip(rows, cols))[:6]:
        where = np.argwhere(tile == got[r, cc])[:3].tolist()
        print(f"  got[{r},{cc}] = {got[r, cc]:g} equals ref at {where if where else 'nowhere in the first tile'}")
    # Which k16 slices of each 64-wide k-tile did the product use? Least squares over the 4 slices.
    k = a.shape[1]
    if k % 64 == 0 and m >= 64 and n >= 64:
        parts = [sum(a[:64, t + s * 16: t + s * 16 + 16] @ b[:64, t + s * 16: t + s * 16 + 16].T for t in range(0, k, 64))
                 for s in range(4)]
        design = np.stack([p.ravel() for p in parts], axis=1)
        coef, *_ = np.linalg.lstsq(design, np.nan_to_num(got[:64, :64]).ravel(), rcond=None)
        print(f"  k16-slice weights in the first 64x64 tile (1 1 1 1 is right): {np.round(coef, 3).tolist()}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="+")
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="t2")
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--params", action="append", default=[], help="BM=128,BN=256,... (repeatable: each set runs every shape)")
    ap.add_argument("--seed", type=int, default=0)
    ns = ap.parse_args()
    ok, variant = True, VARIANTS[ns.variant]
    for text_params in ns.params or [""]:
        params = variant.default_params() | {kv.split("=")[0]: int(kv.split("=")[1]) for kv in text_params.split(",") if kv}
        for text in ns.shapes:
            m, n, k = (int(x) for x in text.lower().split("x"))
            try:
                ok &= run(variant, params, m, n, k, ns.exact, ns.seed)
            except Exception as exc:  # a compile error in full, a launch refusal, a fault: say it, go on
                print(f"ERROR {variant.name} {params} {text}: {type(exc).__name__}: {exc}")
                ok = False
                if "faulted" in str(exc):
                    return 1  # the context is gone; later runs would only repeat it
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
