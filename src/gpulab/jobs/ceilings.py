"""Measuring the card's own ceilings on it: copy bandwidth, the L2 read rate, the FP32 FMA rate,
cuBLAS FP32 and TF32, and on tensor-core cards the BF16 (and on Hopper TF32) tensor rates and cuBLAS
BF16. What each row means, and how rows are held against them, is gpulab.records.ceilings; this
module times the kernels (experiments/ceilings/*.cu) and the library calls, checks each result, and
writes the table once per card (`ensure`), reused until `gpulab ceilings --refresh`.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from gpulab.arith import cdiv
from gpulab.check import FP32_TOLERANCE
from gpulab.errors import GpulabError
from gpulab.experiments.gemm_bf16 import EXPERIMENT as GEMM_BF16
from gpulab.experiments.gemm_bf16 import cublas_bf16
from gpulab.experiments.gemm_bf16.bf16 import to_bf16_bits
from gpulab.gpu import nvml, seam
from gpulab.gpu.compile import compile_kernel
from gpulab.gpu.device import require_gpu
from gpulab.gpu.launch import load as load_kernel
from gpulab.gpu.launch import synchronize
from gpulab.gpu.timing import L2Flusher, TimingPolicy, time_it
from gpulab.records import Records, card_folder, environment
from gpulab.records.ceilings import (
    DATASHEET_TF32_PER_BF16, GEMM_SIZES, L2_NAME, MMA_SYNC, TENSOR_BF16, TENSOR_BF16_MMA_SYNC, TENSOR_TF32, WGMMA,
    WGMMA_TF32, Ceilings, bf16_names, ceilings_path, datasheet_bf16_gflops, has_bf16_tensor_cores, load, save,
    tensor_instruction, tensor_instruction_current, tensor_names,
)

KERNEL_DIR = Path(__file__).resolve().parents[1] / "experiments" / "ceilings"
COPY_BYTES = 1 << 30  # 1 GiB each way: 17x the H200's L2
FMA_CHAINS = 8
FMA_ITERS = 1 << 16  # ~4.4 ms per launch at 64 TFLOP/s on 132 SMs; a multiple of the unroll (32)
FMA_BLOCKS_PER_SM = 8  # of 256 threads: 2048 threads, every SM full
THREADS = 256
L2_FRACTION = 0.5  # the buffer is at most this share of the L2: it stays resident in both halves' reach
L2_BLOCKS_PER_SM = 8  # of 256 threads, as the FMA kernel: every SM full of loads in flight
L2_PASSES = 256  # ~0.8 ms over 30 MB at 10 TB/s: long enough for events to time
L2_RTOL = 1e-3  # float32 sums of ~7,000 values per thread against a float64 sum of the buffer
MMA_CHAINS = 8  # independent accumulators per warp
MMA_ITERS = 1 << 14  # x 8 chains x 4096 flops x 132 x 32 warps: 2.3 TFLOP, ~4 ms at 600 TFLOP/s
MMA_BLOCKS_PER_SM = 4  # of 256 threads: 8 warps per scheduler
MMA_OPERAND = 0x3A803A80  # two BF16 2^-10: every step adds exactly 2^-16 to each accumulator
TF32_OPERAND = 0x3A800000  # one FP32 2^-10, exact in TF32: every k8 wgmma adds exactly 2^-17
WGMMA_ITERS = 1 << 12  # steps of 4 wgmma: x 524,288 FLOP x 396 warpgroups = 3.4 TFLOP, ~3.5 ms near 990 TFLOP/s
WGMMA_THREADS = 128  # one warpgroup per block, its own 128 accumulators per thread (154 registers)
WGMMA_BLOCKS_PER_SM = 3  # what 154 registers x 128 threads allow: 3 accumulator groups in flight per SM
WGMMA_SMEM_BYTES = (64 + 256) * 128 + 1024  # the A and B tiles of four k16 steps, plus 1024-byte alignment


def ensure(device, folder: Path, refresh: bool = False, progress=None) -> Ceilings:
    """The ceilings of this card: read from folder/ceilings.csv when it holds them for this GPU,
    else (or with refresh) measured now and written there."""
    path = ceilings_path(folder)
    if not refresh:
        stored = load(path)
        if stored is not None and all(r.get("gpu") == device.name for r in stored.rows):
            have = {str(r.get("ceiling")) for r in stored.rows}
            if set(tensor_names(device)) <= have and (not has_bf16_tensor_cores(device)
                                                      or tensor_instruction_current(stored, device)):
                return stored
            # A file from before the tensor ceilings (or before this card's fastest tensor instruction,
            # or its TF32 rate, was measured): measure only those and put them in place of any stored.
            replaced = (*bf16_names(), TENSOR_BF16_MMA_SYNC, TENSOR_TF32)
            rows = [r for r in stored.rows if str(r.get("ceiling")) not in replaced]
            rows += measure_tensor(device, progress=progress)
            save(path, rows)
            return Ceilings(rows, path, measured=True)
    rows = measure(device, progress=progress)
    save(path, rows)
    return Ceilings(rows, path, measured=True)


# -- measuring -----------------------------------------------------------------------------------
@contextlib.contextmanager
def cublas_float32_math(mode: str):
    """cuBLAS compute type for float32 matmuls in CuPy: 'fp32' (CUBLAS_COMPUTE_32F, TF32 off) or
    'tf32' (CUBLAS_COMPUTE_32F_FAST_TF32). The previous setting is restored on the way out, and
    checked, so the FP32 baseline elsewhere never runs in TF32 by accident."""
    linalg = seam.gpu_module("cupy._core._routines_linalg")
    wanted = {"fp32": linalg.COMPUTE_TYPE_FP32, "tf32": linalg.COMPUTE_TYPE_TF32}[mode]
    previous = linalg.get_compute_type(np.float32)
    linalg.set_compute_type(np.float32, wanted)
    try:
        yield
    finally:
        linalg.set_compute_type(np.float32, previous)
        if linalg.get_compute_type(np.float32) != previous:
            raise GpulabError("could not restore CuPy's float32 matmul compute type after the ceilings")


def measure(device, policy=None, progress=None) -> list[dict]:
    """Measure every ceiling on `device` (a gpulab.gpu.device.DeviceInfo). One row each."""
    cupy = seam.cupy()
    policy, flush, rows, say, row = _session(device, policy, progress)

    # Copy bandwidth: 1 GiB of random floats (never zeros), read once and written once.
    say("copy bandwidth (1 GiB, cudaMemcpy and gpulab's float4 kernel)")
    src = cupy.random.random(COPY_BYTES // 4, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    t = time_it(lambda: dst.data.copy_from_device_async(src.data, COPY_BYTES), policy, flush)
    row("copy_memcpy", "cudaMemcpyAsync device to device, 1 GiB; bytes read + written", t,
        size_bytes=COPY_BYTES, gbps=2 * COPY_BYTES / (t.median_ms / 1e3) / 1e9)
    synchronize("cudaMemcpy ceiling")
    if not bool(cupy.array_equal(src, dst)):
        raise GpulabError("the device-to-device copy ceiling produced a wrong copy")

    copy = load_kernel(compile_kernel(KERNEL_DIR / "copy.cu", "copy_peak", {}, device.arch))
    n4 = COPY_BYTES // 16
    dst.fill(np.nan)
    grid = (cdiv(n4, THREADS), 1, 1)
    t = time_it(lambda: copy(grid, (THREADS, 1, 1), (src, dst, np.int64(n4))), policy, flush)
    row("copy_kernel", "gpulab copy_peak: one float4 per thread, 1 GiB; bytes read + written", t,
        size_bytes=COPY_BYTES, gbps=2 * COPY_BYTES / (t.median_ms / 1e3) / 1e9)
    synchronize("copy kernel ceiling")
    if not bool(cupy.array_equal(src, dst)):
        raise GpulabError("the copy ceiling kernel produced a wrong copy")
    del src, dst

    # FP32 FMA rate.
    say("FP32 FMA rate")
    fma = load_kernel(compile_kernel(KERNEL_DIR / "fma.cu", "fma_peak", {"CHAINS": FMA_CHAINS}, device.arch))
    blocks = device.sm_count * FMA_BLOCKS_PER_SM
    out = cupy.empty(blocks * THREADS, dtype=cupy.float32)
    args = (out, np.float32(0.999999), np.float32(1e-6), np.int32(FMA_ITERS))
    t = time_it(lambda: fma((blocks, 1, 1), (THREADS, 1, 1), args), policy, flush)
    flops = 2.0 * FMA_CHAINS * FMA_ITERS * blocks * THREADS
    row("fma_fp32", f"gpulab fma_peak: {FMA_CHAINS} FFMA chains x {FMA_ITERS} steps, "
        f"{blocks} blocks of {THREADS}", t, gflops=flops / (t.median_ms / 1e3) / 1e9)
    synchronize("FMA ceiling")
    if not bool(cupy.isfinite(out).all()):
        raise GpulabError("the FMA ceiling kernel produced non-finite values")
    del out

    say("L2 read bandwidth")
    what, t, values = measure_l2(device, policy)
    row(L2_NAME, what, t, **values)

    # cuBLAS SGEMM, FP32 then TF32, checked against a float64 GEMM so the mode is proven, not assumed.
    for n in GEMM_SIZES:
        say(f"cuBLAS SGEMM {n}^3, FP32 and TF32")
        a = cupy.random.random((n, n), dtype=cupy.float32) * 2 - 1
        b = cupy.random.random((n, n), dtype=cupy.float32) * 2 - 1
        c = cupy.empty((n, n), dtype=cupy.float32)
        ref = a.astype(cupy.float64) @ b.astype(cupy.float64)
        scale = float(cupy.abs(ref).max())
        for mode in ("fp32", "tf32"):
            with cublas_float32_math(mode):
                t = time_it(lambda: cupy.matmul(a, b, out=c), policy, flush)
                c.fill(np.nan)
                cupy.matmul(a, b, out=c)
            err = float(cupy.abs(c.astype(cupy.float64) - ref).max()) / scale
            if mode == "fp32" and not err <= FP32_TOLERANCE:
                raise GpulabError(f"cuBLAS FP32 at {n}^3 has relative error {err:.2e}: it is not running in "
                                  "FP32 (is CUPY_TF32 set?); unset it and rerun")
            row(f"cublas_{mode}_{n}", f"cuBLAS SGEMM through CuPy, {mode.upper()} compute, "
                f"{n}x{n}x{n}", t, gflops=2.0 * n**3 / (t.median_ms / 1e3) / 1e9, max_rel_err=err,
                tf32_visible=err > FP32_TOLERANCE)
        del a, b, c, ref
    cupy.get_default_memory_pool().free_all_blocks()
    if has_bf16_tensor_cores(device):
        rows += measure_tensor(device, policy, progress)
    return rows


def _session(device, policy, progress):
    """What a measuring function needs: (timing policy, L2 flusher or None, the rows it fills,
    say(text) for progress, row(...) that appends one ceiling's row)."""
    policy = policy or TimingPolicy()
    flush = L2Flusher(device.l2_bytes) if policy.flush_l2 else None
    rows: list[dict] = []
    return policy, flush, rows, progress or (lambda text: None), _row_writer(device, rows)


def _row_writer(device, rows: list[dict]):
    """row(name, what, timing, **values): appends one ceiling's row to `rows`, with the card's state
    while it was timed (the timing's SM clock, power, temperature and slowdowns: what the card ran
    this ceiling at), the memory clock and the SM's maximum after it (gpulab.gpu.nvml), and the
    environment columns."""
    env = environment(device, device.arch)

    def row(name: str, what: str, timing, **values) -> None:
        rows.append({"ceiling": name, "what": what, **values, **timing.as_record(), **nvml.clock_limits(),
                     "sm_clock_spec_mhz": device.sm_clock_khz // 1000,
                     "mem_clock_spec_mhz": device.memory_clock_khz // 1000, **env})
    return row


def measure_tensor(device, policy=None, progress=None) -> list[dict]:
    """The tensor-core ceilings on `device` (sm_80 or newer; tensor_names): the BF16 rate of its
    fastest instruction (on sm_90 wgmma, then the TF32 wgmma rate and the mma.sync one), then cuBLAS
    BF16 (FP32 compute and output) at GEMM_SIZES, each checked."""
    cupy = seam.cupy()
    policy, flush, rows, say, row = _session(device, policy, progress)

    instruction = tensor_instruction(device)
    say(f"BF16 tensor-core rate ({instruction})")
    if instruction == WGMMA:
        what, t, values = measure_wgmma(device, policy)
        row(TENSOR_BF16, what, t, instruction=WGMMA, **values)
        say(f"TF32 tensor-core rate ({WGMMA_TF32}), for sgemm's 3xTF32 rung")
        what, t, values = measure_wgmma(device, policy, tf32=True)
        row(TENSOR_TF32, what, t, instruction=WGMMA_TF32, **values)
        say(f"BF16 tensor-core rate of {MMA_SYNC}, for the rungs that issue it")
    what, t, values = measure_mma_bf16(device, policy)
    row(TENSOR_BF16 if instruction == MMA_SYNC else TENSOR_BF16_MMA_SYNC, what, t, instruction=MMA_SYNC, **values)

    # The same call gemm_bf16 times as its cuBLAS row, on uniform(-1, 1) BF16 inputs, checked by
    # gemm_bf16's own check (float64 reference, FP32-accumulation tolerance).
    for n in GEMM_SIZES:
        say(f"cuBLAS BF16 GEMM {n}^3")
        shape = GEMM_BF16.square(n)
        inputs = {name: to_bf16_bits(cupy.random.random((n, n), dtype=cupy.float32) * 2 - 1, cupy)
                  for name in ("A", "Bt")}
        c = GEMM_BF16.output(shape, cupy)
        t = time_it(lambda: cublas_bf16(inputs, c, shape), policy, flush)
        c.fill(np.nan)
        cublas_bf16(inputs, c, shape)
        synchronize(f"cuBLAS BF16 {n}^3")
        result = GEMM_BF16.check(c, inputs, shape, False, cupy)
        if not result.ok:
            raise GpulabError(f"cuBLAS BF16 at {n}^3 is wrong ({result.describe()}): it cannot be a ceiling")
        row(f"cublas_bf16_{n}", f"cuBLAS BF16 GEMM (cublasGemmEx TN, BF16 in, FP32 out, COMPUTE_32F), "
            f"{n}x{n}x{n}", t, gflops=2.0 * n**3 / (t.median_ms / 1e3) / 1e9, max_rel_err=result.max_rel_err)
        del inputs, c
    cupy.get_default_memory_pool().free_all_blocks()
    return rows


def measure_mma_bf16(device, policy):
    """The mma.sync BF16 rate on `device`: (what was timed, its Timing, the row's values)."""
    cupy = seam.cupy()
    kernel = load_kernel(compile_kernel(KERNEL_DIR / "mma_bf16.cu", "mma_bf16_peak", {"CHAINS": MMA_CHAINS},
                                        device.arch))
    blocks = device.sm_count * MMA_BLOCKS_PER_SM
    out = cupy.empty(blocks * THREADS, dtype=cupy.float32)
    args = (out, np.uint32(MMA_OPERAND), np.int32(MMA_ITERS))
    launch = lambda: kernel((blocks, 1, 1), (THREADS, 1, 1), args)  # noqa: E731
    warps = blocks * THREADS // 32
    what = (f"gpulab mma_bf16_peak: {MMA_SYNC} BF16->FP32, {MMA_CHAINS} accumulators x {MMA_ITERS} "
            f"steps per warp, {blocks} blocks of {THREADS}, registers only")
    # Each step adds 2^-16 to every accumulator element.
    return _tensor_rate(device, policy, launch, out, MMA_CHAINS * 4 * MMA_ITERS * 2.0**-16,
                        2.0 * 16 * 8 * 16 * MMA_CHAINS * MMA_ITERS * warps, what)


def measure_wgmma(device, policy, tf32: bool = False):
    """The wgmma rate on `device` (sm_90), BF16 (m64n256k16) or with `tf32` TF32 (m64n256k8): (what
    was timed, its Timing, the row's values)."""
    cupy = seam.cupy()
    kernel = load_kernel(compile_kernel(KERNEL_DIR / "wgmma_peak.cu", "wgmma_peak",
                                        {"WGMMA_TF32": 1} if tf32 else {}, "sm_90a"))
    blocks = device.sm_count * WGMMA_BLOCKS_PER_SM
    out = cupy.empty(blocks * WGMMA_THREADS, dtype=cupy.float32)
    args = (out, np.uint32(TF32_OPERAND if tf32 else MMA_OPERAND), np.int32(WGMMA_ITERS))
    launch = lambda: kernel((blocks, 1, 1), (WGMMA_THREADS, 1, 1), args, WGMMA_SMEM_BYTES)  # noqa: E731
    instruction, k = (WGMMA_TF32, 8) if tf32 else (WGMMA, 16)
    what = (f"gpulab wgmma_peak: {instruction} {'TF32' if tf32 else 'BF16'}->FP32 on shared-memory operands, "
            f"4 x {WGMMA_ITERS} per warpgroup, one group in flight behind the one issuing, {blocks} blocks of "
            f"{WGMMA_THREADS}")
    # Each wgmma adds k products of 2^-10 x 2^-10 to every accumulator element.
    return _tensor_rate(device, policy, launch, out, 4 * WGMMA_ITERS * k * 2.0**-20,
                        2.0 * 64 * 256 * k * 4 * WGMMA_ITERS * blocks, what, "TF32" if tf32 else "BF16")


def _tensor_rate(device, policy, launch, out, want: float, flops: float, what: str, kind: str = "BF16"):
    """Times a tensor ceiling kernel's `launch` (no flush: it touches no global memory but its one
    store per thread), checks every thread's sum in `out` is exactly `want`: (what, Timing, values)
    with the datasheet's dense rate of `kind` (BF16 or TF32) beside where gpulab knows it."""
    t = time_it(launch, policy, None)
    synchronize(f"{kind} tensor-core ceiling ({what.split(':')[0]})")
    check_sums(out, want, what.split(":")[0])
    datasheet = datasheet_bf16_gflops(device.name)
    if datasheet and kind == "TF32":
        datasheet *= DATASHEET_TF32_PER_BF16
    values = {"gflops": flops / (t.median_ms / 1e3) / 1e9}
    if datasheet:
        what += f"; datasheet dense {kind} {datasheet / 1e3:,.0f} TFLOP/s"
        values["datasheet_gflops"] = datasheet
    return what, t, values


def check_sums(out, want: float, kernel: str) -> None:
    """Every thread of a tensor ceiling kernel must hold exactly `want` (NaN: its accumulators differ)."""
    cupy = seam.cupy()
    bad = cupy.flatnonzero(out != np.float32(want))
    if bad.size:
        first = int(bad[0])
        raise GpulabError(f"the tensor-core ceiling kernel ({kernel}) summed {float(out[first]):.9g} in thread "
                          f"{first} ({bad.size} threads wrong), expected exactly {want:.9g}")


def l2_geometry(sm_count: int, l2_bytes: int) -> tuple[int, int]:
    """(blocks, float4s in the buffer) for the L2 read: the buffer a whole number of grid strides
    and at most L2_FRACTION of the L2; fewer blocks per SM where one stride alone is too big."""
    budget = int(l2_bytes * L2_FRACTION) // 16
    for per_sm in range(L2_BLOCKS_PER_SM, 0, -1):
        stride = sm_count * per_sm * THREADS
        if stride <= budget:
            return sm_count * per_sm, stride * (budget // stride)
    raise GpulabError(f"an L2 of {l2_bytes} bytes holds less than one float4 per thread of one block per SM")


def measure_l2(device, policy):
    """The L2 read ceiling on `device`: (what was timed, its Timing, the row's values)."""
    cupy = seam.cupy()
    blocks, n4 = l2_geometry(device.sm_count, device.l2_bytes)
    size = 16 * n4
    buf = cupy.random.random(4 * n4, dtype=cupy.float32)
    out = cupy.empty(blocks * THREADS, dtype=cupy.float32)
    kernel = load_kernel(compile_kernel(KERNEL_DIR / "l2_read.cu", "l2_read", {}, device.arch))
    args = (buf, out, np.int64(n4), np.int32(L2_PASSES))
    # No flush: the buffer must be in L2, which the warm-up launches leave it in.
    t = time_it(lambda: kernel((blocks, 1, 1), (THREADS, 1, 1), args), policy, None)
    synchronize("L2 read ceiling")
    got = float(out.astype(cupy.float64).sum())
    want = L2_PASSES * float(buf.astype(cupy.float64).sum())
    if not abs(got - want) <= L2_RTOL * abs(want):
        raise GpulabError(f"the L2 read ceiling kernel summed {got:.6g}, expected {want:.6g}")
    what = (f"gpulab l2_read: float4 ld.global.cg, {L2_PASSES} passes over {size / 1e6:.1f} MB "
            f"({size / device.l2_bytes:.0%} of the L2) already in L2, {blocks} blocks of {THREADS}; bytes read")
    return what, t, {"size_bytes": size, "gbps": L2_PASSES * size / (t.median_ms / 1e3) / 1e9}


def this_card(refresh: bool = False, on_status=None) -> Records:
    """The ceilings of the GPU in this machine as records (gpulab.ceilings() in the Python API):
    measured once into results/<gpu>/ceilings.csv, reused until `refresh`; `.measured` says which,
    `.ceilings` is the Ceilings."""
    device = require_gpu()
    found = ensure(device, card_folder(device.slug), refresh=refresh,
                   progress=lambda text: on_status and on_status(f"ceilings: {text}"))
    records = Records(found.rows, found.path)
    records.measured, records.ceilings = found.measured, found
    return records
