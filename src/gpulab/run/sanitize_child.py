"""The program `gpulab sanitize` runs under compute-sanitizer: one check of one run, nothing more.

    python -m gpulab.run.sanitize_child SPEC_FILE

SPEC_FILE holds one pickled RunSpec (it pickles by reference: gpulab.run.lab.RunSpec.__reduce__). The
check launches the kernel once (twice for integer outputs) with fresh inputs; its verdict is
printed as one JSON line. CuPy's memory pool is switched off first, so that every array is an
allocation of its own size: memcheck knows where each buffer ends only at allocation granularity,
and a read past the end of A would otherwise land silently in the pool's next block.

Exit codes: 0 the check ran (whatever its verdict), 3 the kernel faulted on the device.
"""

from __future__ import annotations

import json
import pickle
import sys

import cupy

from gpulab.errors import DeviceFault
from gpulab.run.lab import Lab, LabOptions


def main(argv: list[str]) -> int:
    with open(argv[0], "rb") as f:
        spec = pickle.load(f)
    cupy.cuda.set_allocator(None)  # one cudaMalloc per array (see the module's docstring)
    lab = Lab(LabOptions(seed=0))
    try:
        result = lab.verify(spec)
    except DeviceFault as exc:
        print(json.dumps({"faulted": exc.error}), flush=True)
        return 3
    print(json.dumps({"correct": result.ok, "detail": result.describe()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
