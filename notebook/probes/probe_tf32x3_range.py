"""Over what range of magnitudes does sgemm's v14 (3xTF32) keep FP32's accuracy? The same uniform
inputs as the check, scaled by 2^-e (A and B alike), through v14 and through the FFMA rung v13 and
cuBLAS FP32, each against a float64 product of the same FP32 inputs: the max error relative to the
largest |C|, per scale.

    python3 notebook/probes/probe_tf32x3_range.py [--size 1024] [--exponents 0,40,50,55,57,58,60,62,64]

Why it may matter: 3xTF32 adds the products A_lo B_hi and A_hi B_lo, each about 2^-11 of A B, inside
the tensor cores' FP32 accumulators; where those products fall below FP32's smallest normal, 2^-126,
an accumulator that flushes subnormals to zero drops them, and only A_hi B_hi (TF32's 2^-11 relative
error) is left. FFMA keeps subnormals (NVRTC compiles without flush-to-zero). Needs an sm_90 card.
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="M = N = K")
    parser.add_argument("--exponents", default="0,40,50,55,57,58,60,62,64",
                        help="the inputs are scaled by 2^-e for each e (comma-separated)")
    args = parser.parse_args()

    from gpulab.experiments.sgemm import EXPERIMENT as SGEMM
    from gpulab.gpu.launch import synchronize
    from gpulab.gpu.seam import cupy
    from gpulab.lab import Lab, RunSpec

    cp = cupy()
    lab = Lab()
    shape = SGEMM.square(args.size)
    specs = [RunSpec(SGEMM, SGEMM.variant(name), SGEMM.variant(name).default_params(), shape) for name in ("v14", "v13")]
    base = lab.device_inputs(specs[0], exact=False, seed=3)
    print(f"{'2^-e':>6} {'max |C|':>10}  " + "  ".join(f"{s.variant.name:>9}" for s in specs) + f"  {'cublas':>9}")
    for e in (int(x) for x in args.exponents.split(",")):
        scale = np.float32(2.0 ** -e)
        inputs = {k: (v * scale).astype(cp.float32) if hasattr(v, "dtype") else v for k, v in base.items()}
        ref = inputs["A"].astype(cp.float64) @ inputs["B"].astype(cp.float64)
        top = float(cp.abs(ref).max())
        errs = []
        for spec in specs:
            out = SGEMM.output(shape, cp)
            out.fill(cp.nan)
            lab.launcher(spec, inputs, out)()
            synchronize(spec.label)
            errs.append(float(cp.abs(out.astype(cp.float64) - ref).max()) / top)
        c = inputs["A"] @ inputs["B"]  # CuPy's float32 matmul: cuBLAS FP32 (TF32 off unless CUPY_TF32 is set)
        errs.append(float(cp.abs(c.astype(cp.float64) - ref).max()) / top)
        print(f"{e:>6} {top:>10.3g}  " + "  ".join(f"{x:>9.2e}" for x in errs), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
