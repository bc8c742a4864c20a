"""Bad input, class by class (issue 42, section 3): each gets one line on stderr that says what to do,
the right exit code, and nothing lost or changed; input that is fine (a relative --kernel path) just
works. notebook/probes/probe_bad_input.py runs every class end to end and counts the outcomes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import gpulab
from gpulab.errors import GpulabError
from gpulab.run.lab import RunSpec, compile_record

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "GPULAB_NO_GPU": "1"}

KERNEL = """/* gpulab variant
name:    mine
summary: naive, one thread per output
param:   TILE = 16 in 8, 16 | the block side
grid:    ceil_div(N, TILE), ceil_div(M, TILE)
block:   TILE, TILE
*/
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const int col = blockIdx.x * TILE + threadIdx.x, row = blockIdx.y * TILE + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
}
"""


def gpulab_cli(*args, cwd, env=ENV, **kwargs):
    return subprocess.run([sys.executable, "-m", "gpulab.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300, **kwargs)


def one_line(r, code: int = 2, *words: str) -> None:
    """A refusal: exit `code`, one line on stderr carrying `words`, no traceback."""
    assert r.returncode == code, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


# -- a relative --kernel path ----------------------------------------------------------------------
def test_a_relative_kernel_path_compiles(tmp_path, monkeypatch):
    """`gpulab run sgemm --kernel mine.cu` in the file's folder (the README's form): the compile
    found the file under the experiment's own folder instead."""
    (tmp_path / "mine.cu").write_text(KERNEL)
    monkeypatch.chdir(tmp_path)
    exp = gpulab.experiment("sgemm", kernels=["mine.cu"])
    spec = RunSpec(exp, exp.variant("mine"), {"TILE": 8}, exp.shape(64, 64, 64))
    assert compile_record(spec, "sm_90")["reg_per_thread"] > 0
