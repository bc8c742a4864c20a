"""The Hopper rungs of gemm_bf16 on a GPU: the 128-byte struct parameter reaches the kernel intact,
the driver encodes the tensor maps, and t2/t3/t4 are exact on ragged shapes, including M and N smaller
than one tile (boxes mostly outside the matrix), K smaller than one k-tile, and K not a multiple of 8
(padded staging: gemm_bf16/staging.py copies A and Bt into rows of K rounded up to 64 first)."""

from pathlib import Path

import numpy as np
import pytest

from gpulab.experiments import get_experiment
from gpulab.experiments.gemm_bf16 import staging
from gpulab.experiments.gemm_bf16.tma_rungs import BK, t4_stream_k_tiles, tensor_maps
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.launch import by_value, load, synchronize
from gpulab.gpu.seam import cupy
from gpulab.gpu.tma import TENSOR_MAP_BYTES, bf16_matrix_map, encode
from gpulab.run.lab import RunSpec

GEMM = get_experiment("gemm_bf16")
FOLDER = Path(staging.__file__).parent
ECHO = """
#include "gemm_bf16/hopper.cuh"
extern "C" __global__ void echo(int before, const __grid_constant__ TmaDescriptor map, int after,
                                unsigned long long* out) {
    out[threadIdx.x] = map.opaque[threadIdx.x];
    if (threadIdx.x == 0) out[16] = (unsigned long long)before << 32 | (unsigned)after;
}
"""


def test_by_value_passes_a_128_byte_struct_intact_between_other_arguments(tmp_path):
    src = tmp_path / "echo.cu"
    src.write_text(ECHO)
    kernel = load(compile_kernel(src, "echo", arch="sm_90"))
    words = np.arange(1, 17, dtype=np.uint64) * np.uint64(0x0101010101010101)
    out = cupy().zeros(17, dtype=cupy().uint64)
    kernel((1, 1, 1), (16, 1, 1), (np.int32(7), by_value(words.tobytes()), np.int32(9), out))
    synchronize("echo")
    got = out.get()
    assert got[:16].tolist() == words.tolist()
    assert int(got[16]) == (7 << 32 | 9)


def test_the_driver_encodes_a_tensor_map_for_a_device_matrix():
    a = cupy().zeros((300, 136), dtype=cupy().uint16)
    blob = encode(bf16_matrix_map(a.data.ptr, 300, 136, box_rows=128, box_cols=BK))
    assert len(blob) == TENSOR_MAP_BYTES and any(blob)


@pytest.mark.parametrize("name", ["t2", "t3", "t4"])
@pytest.mark.parametrize("shape", [(64, 128, 64), (1, 1, 8), (129, 257, 72), (200, 300, 136), (1000, 3001, 776),
                                   (256, 512, 4096), (1, 1, 1), (200, 300, 137), (1000, 3000, 777),
                                   # the ragged bench shapes (4097 and 777 staged, 4000 not)
                                   (4097, 4097, 4097), (4000, 4000, 4000)],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("exact", [True, False], ids=["exact", "random"])
def test_rung_correct(lab, name, shape, exact):
    variant = GEMM.variant(name)
    if reason := variant.arch_reason(lab.arch):
        pytest.skip(reason)
    spec = RunSpec(GEMM, variant, variant.default_params(), GEMM.shape(*shape))
    result = lab.verify(spec, exact=exact)
    assert result.ok, result.describe()


def test_tensor_maps_are_the_arguments_after_the_experiments():
    shape = GEMM.shape(64, 64, 64)
    cp = cupy()
    inputs = {"A": cp.zeros((64, 64), cp.uint16), "Bt": cp.zeros((64, 64), cp.uint16)}
    out = GEMM.output(shape, cp)
    params = GEMM.variant("t2").default_params()
    extra = tensor_maps(inputs, out, shape, params)
    assert len(extra) == 2 and all(e.itemsize == TENSOR_MAP_BYTES for e in extra)


def _t4_exact(lab, shape, changes: dict) -> None:
    """t4 at its declared params with `changes`, checked exactly (small-integer inputs) at `shape`;
    skipped with the reason on a card without sm_90a."""
    variant = GEMM.variant("t4")
    if reason := variant.arch_reason(lab.arch):
        pytest.skip(reason)
    result = lab.verify(RunSpec(GEMM, variant, variant.default_params() | changes, GEMM.shape(*shape)), exact=True)
    assert result.ok, result.describe()


# t4 on shapes with more cluster tiles than clusters (each block loops over several tiles: the ring's
# parity and the epilogue's bulk groups carry across tiles), ragged edges, each cluster size and epilogue.
@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("store", [0, 1])
@pytest.mark.parametrize("shape", [(4096, 4096, 256), (3000, 5000, 264), (200, 300, 136)],
                         ids=lambda s: "x".join(map(str, s)))
def test_t4_persistent_loop_is_exact(lab, cluster, store, shape):
    _t4_exact(lab, shape, {"CLUSTER": cluster, "STORE": store})


# t4 with 128 x 192 tiles (m64n192k16, 96 accumulators a thread, Bt boxes of 96 rows per cluster block,
# six C chunks per consumer): several tiles per cluster, ragged edges, an odd N (the copy-out epilogue)
# and a staged K, whole tiles and the stream-K tail (24 float4 of partial per thread).
@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("schedule", [0, 1])
@pytest.mark.parametrize("shape", [(4096, 4096, 256), (1000, 3000, 776), (1000, 3001, 777), (200, 300, 136)],
                         ids=lambda s: "x".join(map(str, s)))
def test_t4_bn192_is_exact(lab, cluster, schedule, shape):
    _t4_exact(lab, shape, {"BN": 192, "CLUSTER": cluster, "SCHEDULE": schedule})


# t4 with pingpong consumers (each owns whole 128 x 128 tiles, mainloops in turn): several tiles per
# consumer (the order barriers' phases and the ring's counter at tile j * k_tiles), ragged edges, a
# shape with fewer k-tiles than stages (the ring wraps within one consumer's turn).
@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("store", [0, 1])
@pytest.mark.parametrize("shape", [(4096, 4096, 256), (3000, 5000, 264), (200, 300, 136), (1000, 3001, 64)],
                         ids=lambda s: "x".join(map(str, s)))
def test_t4_pingpong_is_exact(lab, cluster, store, shape):
    _t4_exact(lab, shape, {"BN": 128, "STAGES": 6, "PINGPONG": 1, "CLUSTER": cluster, "STORE": store})


# Every K % 8 (each start of a row within a 16-byte word), rows shorter than a word, one row.
@pytest.mark.parametrize("m, n, k", [(300, 131, 777), (64, 65, 1), (7, 9, 2), (33, 17, 3), (5, 40, 130),
                                     (1, 1, 13), (129, 3, 4097), (8, 8, 1022), (2, 3, 7)], ids=str)
def test_staging_copies_every_row_and_zeroes_the_pad(lab, m, n, k):
    """pad_k.cu on its own: where it goes wrong, the first bad row and column say how."""
    cp = cupy()
    shape = GEMM.shape(m, n, k)
    rng = np.random.default_rng(5)
    inputs = {name: cp.asarray(rng.integers(1, 1 << 15, size=(rows, k), dtype=np.uint16))
              for name, rows in (("A", m), ("Bt", n))}
    staged = staging.pad_k(inputs, shape, {}, lab.arch, dependent_launch=False)  # the copy alone
    for name in ("A", "Bt"):
        staged.inputs[name].fill(0xFFFF)  # poison: the copy must write the pad as well as the data
    staged.copy()
    synchronize("pad_k")
    for name in ("A", "Bt"):
        got = staged.inputs[name].get()
        want = np.zeros_like(got)
        want[:, :k] = inputs[name].get()
        bad = np.argwhere(got != want)
        assert got.shape[1] == staging.padded_k(k) and bad.size == 0, f"{name}: first wrong [row, col] {bad[:1].tolist()}"
    assert staged.moved_bytes == staging.staged_bytes(shape)



# t4 with SCHEDULE = 1 (whole tiles, then a stream-K tail): tiles split between two clusters, the
# partial handed over through the workspace and a flag. Ragged edges, K % 8 != 0 (staged), two
# k-tiles (several stream-K units per cluster), each cluster size and epilogue; 2048^3 and one tile
# fall back to whole tiles (no more tiles than clusters). A flag or parity bug hangs or reads an
# unwritten partial (NaN or a wrong sum).
SK_SHAPES = [(4096, 4096, 128), (3000, 5000, 265), (4097, 4097, 520), (4096, 2304, 776)]


@pytest.mark.parametrize("cluster, store", [(2, 1), (2, 0), (1, 1), (1, 0)])
@pytest.mark.parametrize("shape", SK_SHAPES + [(2048, 2048, 2048), (200, 300, 136)],
                         ids=lambda s: "x".join(map(str, s)))
def test_t4_stream_k_is_exact(lab, cluster, store, shape):
    variant = GEMM.variant("t4")
    if reason := variant.arch_reason(lab.arch):
        pytest.skip(reason)
    changes = {"SCHEDULE": 1, "CLUSTER": cluster, "STORE": store}
    params, s = variant.default_params() | changes, GEMM.shape(*shape)
    if shape in SK_SHAPES:  # the shape exercises the split on this card, or the test proves nothing
        assert t4_stream_k_tiles(params, s, variant.launch(params, s).grid[0] // cluster) > 0
    _t4_exact(lab, shape, changes)


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (4097, 4097, 4097), (8192, 8192, 1024)],
                         ids=lambda s: "x".join(map(str, s)))
def test_t4_stream_k_is_correct_on_random_inputs(lab, shape):
    variant = GEMM.variant("t4")
    if reason := variant.arch_reason(lab.arch):
        pytest.skip(reason)
    params = variant.default_params() | {"SCHEDULE": 1}
    result = lab.verify(RunSpec(GEMM, variant, params, GEMM.shape(*shape)), exact=False)
    assert result.ok, result.describe()


def test_t4_stream_k_clears_its_flags_and_gives_the_same_bits_every_launch():
    """Launches on one workspace: the flags are zero after each (the next launch needs no memset),
    new inputs give their own product (a stale flag would hand over the last launch's partial) and
    the same inputs the same bits (the fixup adds in a fixed order)."""
    cp = cupy()
    variant = GEMM.variant("t4")
    params = variant.default_params() | {"SCHEDULE": 1}
    m, n, k = 4096, 4096, 512
    s = GEMM.shape(m, n, k)
    kernel = load(compile_kernel(FOLDER / variant.file, "gemm_bf16", params, arch=variant.compile_arch("sm_90")))
    launch = variant.launch(params, s)
    rng = np.random.default_rng(7)
    host = GEMM.make_inputs(s, rng, exact=True)
    dev = {name: cp.asarray(v) for name, v in host.items()}
    out = GEMM.output(s, cp)
    extra = variant.extra_args(dev, out, s, params)
    flags = extra[4]
    assert int(extra[5]) > 0 and flags.size > 1
    args = (*GEMM.kernel_args(dev, out, s, params), *extra)
    results = []
    # Exact inputs, new exact values in the same buffers, then random values launched twice.
    for draw, exact in enumerate((True, True, False, False)):
        if draw in (1, 2):
            for name, v in GEMM.make_inputs(s, rng, exact=exact).items():
                dev[name][...] = cp.asarray(v)
        out.fill(cp.nan)
        kernel(launch.grid, launch.block, args, launch.smem_dynamic_bytes)
        synchronize(f"t4 SCHEDULE=1 launch {draw}")
        assert int(cp.count_nonzero(flags)) == 0, f"launch {draw} left flags set"
        check = GEMM.check(out, dev, s, exact=exact, xp=cp)
        assert check.ok, f"launch {draw}: {check.describe()}"
        results.append(out.copy())
    assert bool(cp.array_equal(results[2], results[3])), "two launches on the same inputs differ in some bits"
