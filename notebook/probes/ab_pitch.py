"""Device probe: notebook/probes/ab_rungs.py with the staging copy's row pitch rounded up to PAD elements
instead of gemm_bf16.staging's own multiple (the kernel's k loop still runs over the logical K).
Whether a TMA rung reads a row pitch on a 32- or 128-byte boundary faster than on a 16-byte one:
each 128-byte k-tile row of a 16-byte-aligned pitch spans two L2 lines and, every other row,
five 32-byte sectors instead of four.
Usage: python3 notebook/probes/ab_pitch.py PAD [ab_rungs.py's arguments]   (PAD 8, 16 or 64)"""

import runpy
import sys
from pathlib import Path

from gpulab.arith import cdiv
from gpulab.experiments.gemm_bf16 import staging

pad = int(sys.argv.pop(1))
staging.padded_k = lambda k: cdiv(k, pad) * pad
runpy.run_path(str(Path(__file__).with_name("ab_rungs.py")), run_name="__main__")
