"""Device probe: which BF16 tensor maps and box starts a TMA load takes (what it does not take faults
with an illegal instruction), and what a map over every eighth row brings. One process per case.

Found on the H200 (2026-12-01): any 16-byte multiple works as the row pitch, including 16 K bytes (a
map over rows j, j + 8, ...), and an odd inner dimension is fine; but a box whose first column is
not on a 16-byte boundary (column 4 or 1 of a BF16 map) faults. So rows of K % 8 != 0 elements,
most of which start mid-word, cannot be read by TMA in place: gemm_bf16 stages them (staging.py).
Usage: python3 notebook/probes/probe_tma_maps.py"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CASES = {  # name: (K of the matrix, dims, pitch bytes, box, start element, coordinates)
    "plain K=144 box 128": (144, (144, 200), 288, (64, 128), 0, (0, 0)),
    "plain K=144 box 8": (144, (144, 200), 288, (64, 8), 0, (0, 0)),
    "plain K=144 box 8 at column 8 (16 bytes)": (144, (144, 200), 288, (64, 8), 0, (8, 0)),
    "plain K=144 box 8 at column 4 (8 bytes)": (144, (144, 200), 288, (64, 8), 0, (4, 0)),
    "plain K=144 box 8 at column 1 (2 bytes)": (144, (144, 200), 288, (64, 8), 0, (1, 0)),
    "pitch 16K, K=144": (144, (144, 25), 2304, (64, 8), 0, (0, 0)),
    "odd dim0 137, pitch 288": (144, (137, 200), 288, (64, 8), 0, (0, 0)),
    "odd dim0 137, pitch 288, c0=128": (144, (137, 200), 288, (64, 8), 0, (128, 0)),
    # Rows 8 apart of a K = 137 matrix (pitch 16 K): phase 0 starts on a 16-byte boundary, phase 1
    # one element past one, which the box must then start at.
    "phase0 K=137": (137, (137, 25), 2192, (64, 8), 0, (0, 0)),
    "phase0 K=137 c0=128": (137, (137, 25), 2192, (64, 8), 0, (128, 0)),
    "phase1 K=137 at its row start (column 1)": (137, (138, 25), 2192, (64, 8), 136, (1, 0)),
    "phase1 K=137 at the 16-byte boundary (column 0)": (137, (138, 25), 2192, (64, 8), 136, (0, 0)),
}


def child(name: str) -> None:
    import cupy as cp
    from gpulab.gpu.compile import compile_kernel
    from gpulab.gpu.launch import by_value, load
    from gpulab.gpu.tma import TiledMap2D, encode

    k, dims, pitch, box, start, (c0, c1) = CASES[name]
    rows = 200
    a = cp.arange(rows * k, dtype=cp.uint16).reshape(rows, k)
    spec = TiledMap2D(a.data.ptr + 2 * start, dims, pitch, box)
    kernel = load(compile_kernel(ROOT / "notebook/probes/probe_tma_maps.cu", "tma_probe", {}, "sm_90a"))
    nbytes = box[0] * box[1] * 2
    out = cp.zeros(nbytes // 2, dtype=cp.uint16)
    try:
        kernel((1, 1, 1), (128, 1, 1), (by_value(encode(spec)), out, np.int32(c0), np.int32(c1), np.int32(nbytes)))
        cp.cuda.Device().synchronize()
    except Exception as exc:
        print(json.dumps({"name": name, "fault": str(exc)[:160]}))
        return
    got = out.get().reshape(box[1], box[0])
    # Undo the 128-byte swizzle: 16-byte chunk q of row r landed at chunk q ^ (r % 8).
    plain = np.empty_like(got)
    for r in range(box[1]):
        for q in range(8):
            plain[r, q * 8:(q + 1) * 8] = got[r, (q ^ (r % 8)) * 8:((q ^ (r % 8)) + 1) * 8]
    flat = a.get().ravel()
    want = np.zeros_like(plain)
    for r in range(box[1]):
        for c in range(box[0]):
            col, row = c0 + c, c1 + r
            if col < dims[0] and row < dims[1]:
                want[r, c] = flat[start + row * pitch // 2 + col]
    bad = np.argwhere(plain != want)
    print(json.dumps({"name": name, "ok": bad.size == 0, "first_bad": bad[:1].tolist(),
                      "row0": plain[0, :10].tolist(), "row1": plain[1, :10].tolist() if box[1] > 1 else []}))


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
        return
    for name in CASES:
        out = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, timeout=60)
        lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
        print(lines[-1] if lines else f"{name}: no result, rc {out.returncode}: {out.stderr[-400:]}", flush=True)


if __name__ == "__main__":
    main()
