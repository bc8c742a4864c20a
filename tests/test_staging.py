"""Padded staging of gemm_bf16's TMA rungs without a GPU: the padded pitch and bytes, the staging
kernel's grid and compile, and that the harness's launcher refills the staged copies before every
kernel launch and hands the kernel the copies (tests/gpu/test_wgmma_gpu.py checks the results)."""

import numpy as np

from gpulab.run import lab as lab_module
from gpulab.experiments import get_experiment
from gpulab.experiments.base import Launch, Shape, Staged, Variant, no_staging
from gpulab.experiments.gemm_bf16 import staging, tma_rungs
from gpulab.gpu.compile import compile_kernel
from gpulab.run.lab import Lab, RunSpec

GEMM = get_experiment("gemm_bf16")


def shape(m, n, k):
    return Shape(("M", "N", "K"), (m, n, k))


def test_padded_pitch_is_k_rounded_up_to_128_bytes_and_only_ragged_rows_are_staged():
    assert [staging.padded_k(k) for k in (1, 7, 9, 65, 777, 4097)] == [64, 64, 64, 128, 832, 4160]
    assert [staging.needs_staging(k) for k in (776, 777, 4096, 4097)] == [False, True, False, True]
    # What the TMA rungs read: the rows as given where TMA takes their pitch (16-byte multiples).
    assert [staging.row_pitch(k) for k in (8, 776, 777, 4097)] == [8, 776, 832, 4160]


def test_staged_bytes_are_one_read_at_pitch_k_and_one_write_at_the_padded_pitch():
    # 4097^3: A and Bt read (2 x 4097 x 4097 x 2 B), written padded (2 x 4097 x 4160 x 2 B): ~135 MB.
    assert staging.staged_bytes(shape(4097, 4097, 4097)) == 2 * 4097 * (4097 + 4160) * 2
    assert staging.staged_bytes(shape(1000, 3000, 777)) == 4000 * (777 + 832) * 2


def test_staging_grid_has_one_thread_per_16_byte_chunk_of_both_padded_operands():
    (blocks, _, _) = staging.staging_grid(shape(1000, 3000, 777))
    chunks = 4000 * 832 // 8
    assert (blocks - 1) * staging.THREADS < chunks <= blocks * staging.THREADS


def test_the_staging_kernel_compiles_with_no_spills():
    compiled = compile_kernel(staging.SOURCE, staging.ENTRY, {}, "sm_90")
    r = compiled.resources
    assert r.spill_stores_bytes == 0 and r.stack_frame_bytes == 0 and r.registers <= 32


def test_the_launcher_refills_the_staged_copies_before_every_launch_and_passes_them(monkeypatch):
    calls = []
    padded = {"A": "A padded", "Bt": "Bt padded"}

    def stage(inputs, shape, params, arch):
        calls.append(("stage", arch))
        return Staged(inputs=padded, copy=lambda: calls.append("copy"), moved_bytes=1, dependent_launch=True)

    def kernel(grid, block, args, smem, programmatic):
        calls.append(("kernel", args[3], args[4], programmatic))

    variant = Variant(name="staged", file="none.cu", summary="", launch=lambda p, s: Launch((1, 1, 1), (32, 1, 1)),
                      stage=stage)
    monkeypatch.setattr(lab_module, "compile_spec", lambda spec, arch: None)
    monkeypatch.setattr(lab_module, "load", lambda compiled: kernel)
    lab = Lab.__new__(Lab)  # no GPU: only launcher() is exercised, which reads arch alone
    lab.arch = "sm_90"
    once = lab.launcher(RunSpec(GEMM, variant, {}, GEMM.shape(8, 8, 9)), {"A": "A", "Bt": "Bt"}, np.zeros(1))
    once()
    once()
    # Staged once per run (buffers allocated once), copied before each launch, the kernel reads the
    # copies, launched as the copy's programmatic dependent (the Staged asked for it).
    assert calls == [("stage", "sm_90"), "copy", ("kernel", "A padded", "Bt padded", True),
                     "copy", ("kernel", "A padded", "Bt padded", True)]


def test_an_unstaged_variant_launches_alone_on_the_inputs(monkeypatch):
    calls = []
    variant = Variant(name="plain", file="none.cu", summary="", launch=lambda p, s: Launch((1, 1, 1), (32, 1, 1)))
    monkeypatch.setattr(lab_module, "compile_spec", lambda spec, arch: None)
    monkeypatch.setattr(lab_module, "load",
                        lambda compiled: lambda g, b, args, smem, programmatic: calls.append((args[3], programmatic)))
    lab = Lab.__new__(Lab)
    lab.arch = "sm_90"
    lab.launcher(RunSpec(GEMM, variant, {}, GEMM.shape(8, 8, 8)), {"A": "A", "Bt": "Bt"}, np.zeros(1))()
    assert calls == [("A", False)]  # nothing before it to overlap: an ordinary launch


def test_pad_k_lets_its_dependents_launch_and_every_rung_it_stages_for_waits_for_it():
    # The staged GEMM may be launched as a programmatic dependent of the copy: the copy signals it may
    # start (launch_dependents), and the GEMM must wait for the copy's writes before it reads them
    # (wait_for_prior_grid, right after its barrier setup). A rung without the wait would race.
    assert "griddepcontrol.launch_dependents" in staging.SOURCE.read_text()
    staged = [v for v in GEMM.variants if v.stage is not no_staging]
    assert [v.name for v in staged] == ["t2", "t3", "t4", "kc", "ks"]
    for v in staged:
        body = GEMM.source(v).read_text().split("__global__", 1)[1]
        setup_ends = body.index("__syncthreads();")
        wait = body.index("wait_for_prior_grid();")
        assert setup_ends < wait < body.index("tma_load_2d" if "tma_load_2d" in body else "fill_stage"), v.name


def test_only_a_gemm_whose_work_starts_in_one_round_is_launched_behind_the_copy(tma_sms):
    # Measured: one round (1000x3000x777) saved 1.7-1.9 us; 5.5 rounds (4097^3) ran slower (staging.py).
    t4 = GEMM.variant("t4").default_params()
    small, big = GEMM.shape(1000, 3000, 777), GEMM.shape(4097, 4097, 4097)
    assert tma_rungs.t4_one_round(t4 | {"BN": 192, "CLUSTER": 1}, small)  # 8 x 16 = 128 tiles, 132 blocks
    assert tma_rungs.t4_one_round(t4 | {"BN": 192}, small)  # 4 x 16 = 64 cluster tiles, 66 clusters
    assert not tma_rungs.t4_one_round(t4 | {"BN": 128, "CLUSTER": 1}, small)  # 8 x 24 = 192 tiles
    assert not tma_rungs.t4_one_round(t4 | {"BN": 192}, big)
    t2 = tma_rungs.one_wave(tma_rungs.t2_launch)
    assert t2(GEMM.variant("t2").default_params(), small)  # 128 x 256 tiles: 8 x 12 = 96 blocks
    assert not t2(GEMM.variant("t2").default_params() | {"BM": 64, "BN": 64}, small)  # 16 x 47 blocks
