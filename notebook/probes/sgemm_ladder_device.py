"""Check and time the SGEMM ladder on a GPU in one go (for a short lease on a lent card).

1. compiles every config below for the card (in parallel processes);
2. checks each rung's default config, and every v9 candidate, on ragged and edge shapes, random
   inputs (and small-integer exact inputs at the smaller shapes), output poisoned with NaN first,
   against a float64 reference; NaN never passes;
3. times the rung defaults and the v9 candidates at 4096^3 beside cuBLAS FP32 (CuPy, TF32 off),
   then the best v9 candidate and cuBLAS at more shapes.
Writes results.json (and a log) under --out and prints a table last.

    PYTHONPATH=src python3 notebook/probes/sgemm_ladder_device.py --out $OUT
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.timing import L2Flusher, TimingPolicy, time_it

CHECK_SHAPES = [(1, 1, 1), (17, 33, 65), (1000, 1531, 777), (1000, 1532, 776), (130, 100, 9),
                (129, 260, 33), (4097, 4097, 4097)]
EXACT_UP_TO = 2_000_000_000  # MACs: exact (small-integer) checks at the smaller shapes
TOL = 2e-5

W8x8 = dict(WM=32, WN=64, WNITER=2)
W8x16 = dict(WM=32, WN=128, WNITER=4)
CANDIDATES = {
    # alternatives to the defaults, to see what each rung could choose
    "v6": [dict(BM=64), W8x8],
    "v7": [dict(BM=64), W8x8],
    "v8": [dict(BM=64), W8x8],
    "v9": [
        dict(STAGES=2), dict(STAGES=4), dict(BK=16), dict(GROUP_M=1), dict(GROUP_M=16),
        dict(W8x16), dict(BN=256), dict(BM=128), dict(BM=128, BN=64), dict(BN=64, **W8x8),
        dict(BM=128, BN=256, MINB=1, **W8x16),
    ],
}
MORE_SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (4000, 4000, 4000), (1000, 3000, 777),
               (4097, 4097, 4097), (8192, 8192, 8192)]


def plan() -> list[tuple[str, dict, str]]:
    """(variant, params, role): role 'default' or 'candidate'."""
    out = []
    for v in SGEMM.variants:
        out.append((v.name, v.default_params(), "default"))
        for change in CANDIDATES.get(v.name, []):
            params = v.default_params() | change
            reason = v.constraints(params, None)
            if reason:
                print(f"skip {v.name} {params}: {reason}", flush=True)
                continue
            out.append((v.name, params, "candidate"))
    return out


def _compile(job):
    name, params = job
    v = SGEMM.variant(name)
    c = compile_kernel(SGEMM.source(v), SGEMM.entry, params, arch=os.environ.get("ARCH", "sm_90"))
    return str(c.cubin_path), c.resources.as_record()


def label(name, params):
    return f"{name} " + " ".join(f"{k}={v}" for k, v in params.items())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 2))
    ap.add_argument("--budget-s", type=float, default=240.0, help="stop timing extra shapes after this")
    args = ap.parse_args(argv)
    t_start = time.time()
    import cupy

    from gpulab.gpu.launch import load
    from gpulab.gpu.compile import Compiled, Resources

    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    arch = f"sm_{props['major']}{props['minor']}"
    os.environ["ARCH"] = arch
    info = {"card": props["name"].decode(), "arch": arch, "driver": cupy.cuda.runtime.driverGetVersion(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cupy": cupy.__version__}
    print(info, flush=True)

    jobs = plan()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        compiled = list(pool.map(_compile, [(n, p) for n, p, _ in jobs]))
    print(f"compiled {len(jobs)} configs in {time.time() - t_start:.0f} s", flush=True)

    kernels = {}
    for (name, params, role), (cubin, res) in zip(jobs, compiled):
        c = Compiled(Path(cubin), SGEMM.entry, arch, Resources(**{
            "registers": res["reg_per_thread"], "smem_static_bytes": res["smem_static_bytes"],
            "spill_stores_bytes": res["spill_stores_bytes"], "spill_loads_bytes": res["spill_loads_bytes"],
            "stack_frame_bytes": res["stack_frame_bytes"], "barriers": res["barriers"],
            "cmem_bytes": res["cmem_bytes"]}), "")
        kernels[label(name, params)] = (name, params, role, load(c), res)

    def run(key, a, b, c, shape):
        name, params, _, kern, _ = kernels[key]
        m, n, k = shape
        launch = SGEMM.variant(name).launch(params, SGEMM.shape(m, n, k))
        kern(launch.grid, launch.block, (np.int32(m), np.int32(n), np.int32(k), a, b, c),
             launch.smem_dynamic_bytes)

    rng = np.random.default_rng(1234)
    results = {"info": info, "checks": [], "timings": [], "resources": {}}
    for key, (_, _, role, _, res) in kernels.items():
        results["resources"][key] = res

    # -- correctness ------------------------------------------------------------------------------
    failures = 0
    for shape in CHECK_SHAPES:
        m, n, k = shape
        modes = ["random"] + (["exact"] if m * n * k <= EXACT_UP_TO else [])
        for mode in modes:
            if mode == "exact":
                a = cupy.asarray(rng.integers(-3, 4, size=(m, k)).astype(np.float32))
                b = cupy.asarray(rng.integers(-2, 3, size=(k, n)).astype(np.float32))
            else:
                a = cupy.asarray(rng.uniform(-1, 1, size=(m, k)).astype(np.float32))
                b = cupy.asarray(rng.uniform(-1, 1, size=(k, n)).astype(np.float32))
            ref = a.astype(cupy.float64) @ b.astype(cupy.float64)
            scale = float(cupy.abs(ref).max()) or 1.0
            for key, (name, params, role, _, _) in kernels.items():
                if name in ("v0", "v1") and m * n * k > 10**9:
                    continue
                c = cupy.full((m, n), cupy.nan, dtype=cupy.float32)
                try:
                    run(key, a, b, c, shape)
                    cupy.cuda.Device().synchronize()
                except Exception as exc:
                    results["checks"].append({"config": key, "shape": shape, "mode": mode, "ok": False,
                                              "error": str(exc)[:300]})
                    failures += 1
                    print(f"FAIL {key} {shape} {mode}: {exc}", flush=True)
                    continue
                diff = cupy.abs(c.astype(cupy.float64) - ref)
                bad = cupy.isnan(c) | (diff > (0 if mode == "exact" else TOL * scale))
                nbad = int(bad.sum())
                err = float(cupy.nanmax(diff)) / scale if not bool(cupy.isnan(c).all()) else float("nan")
                first = None
                if nbad:
                    idx = int(cupy.argmax(bad.ravel()))
                    first = (idx // n, idx % n)
                    failures += 1
                    print(f"FAIL {key} {shape} {mode}: {nbad} wrong, first at row,col {first}, "
                          f"max rel err {err:.3g}", flush=True)
                results["checks"].append({"config": key, "shape": shape, "mode": mode, "ok": nbad == 0,
                                          "wrong": nbad, "first_wrong": first, "max_rel_err": err})
            del a, b, ref
    cupy.get_default_memory_pool().free_all_blocks()
    print(f"checks done at {time.time() - t_start:.0f} s: {failures} failures", flush=True)

    # -- timing -----------------------------------------------------------------------------------
    policy = TimingPolicy(warmup_ms=20.0, target_ms=80.0, min_reps=5, max_reps=50)
    flusher = L2Flusher(props["l2CacheSize"])

    def time_shape(keys, shape, with_cublas=True):
        m, n, k = shape
        a = cupy.asarray(rng.uniform(-1, 1, size=(m, k)).astype(np.float32))
        b = cupy.asarray(rng.uniform(-1, 1, size=(k, n)).astype(np.float32))
        c = cupy.empty((m, n), dtype=cupy.float32)
        rows = []
        flops = 2.0 * m * n * k
        if with_cublas:
            t = time_it(lambda: cupy.matmul(a, b, out=c), policy, flusher)
            rows.append({"config": "cublas", "shape": shape, "ms": t.median_ms, "min_ms": t.min_ms,
                         "max_ms": t.max_ms, "tflops": flops / t.median_ms / 1e9})
        for key in keys:
            t = time_it(lambda: run(key, a, b, c, shape), policy, flusher)
            rows.append({"config": key, "shape": shape, "ms": t.median_ms, "min_ms": t.min_ms,
                         "max_ms": t.max_ms, "tflops": flops / t.median_ms / 1e9})
        cub = rows[0]["tflops"] if with_cublas else None
        for r in rows:
            r["pct_of_cublas"] = 100 * r["tflops"] / cub if cub else None
            print(f"{'x'.join(map(str, shape)):>16} {r['tflops']:7.2f} TFLOP/s "
                  f"{(r['pct_of_cublas'] or 0):6.1f}% of cuBLAS  {r['ms']:8.3f} ms  {r['config']}", flush=True)
        results["timings"].extend(rows)
        del a, b, c
        cupy.get_default_memory_pool().free_all_blocks()
        return rows

    big = (4096, 4096, 4096)
    rows = time_shape([k for k in kernels if not k.startswith(("v0", "v1"))], big)
    v9_rows = [r for r in rows if r["config"].startswith("v9")]
    best = max(v9_rows, key=lambda r: r["tflops"])["config"]
    ranked = sorted(v9_rows, key=lambda r: -r["tflops"])
    runner_up = ranked[1]["config"] if len(ranked) > 1 else best
    results["best_v9"] = best
    print(f"best v9 at 4096^3: {best}", flush=True)
    for shape in MORE_SHAPES:
        if time.time() - t_start > args.budget_s:
            print(f"budget reached, skipping {shape}", flush=True)
            break
        time_shape([k for k in kernels if k.startswith("v9")], shape)

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    print("\n== summary: 4096^3 ==")
    for r in sorted([r for r in results["timings"] if tuple(r["shape"]) == big], key=lambda r: -r["tflops"]):
        res = results["resources"].get(r["config"], {})
        print(f"{r['tflops']:7.2f} TFLOP/s {r['pct_of_cublas']:6.1f}%  regs={res.get('reg_per_thread', '-')} "
              f"spill={res.get('spill_stores_bytes', '-')}  {r['config']}")
    print(f"checks: {sum(c['ok'] for c in results['checks'])} ok, {failures} failed; "
          f"total {time.time() - t_start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
