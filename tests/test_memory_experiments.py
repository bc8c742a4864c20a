"""The memory-hierarchy experiments (coalesce, stencil, grayscale) and the ceilings, with no GPU:
every variant compiles for sm_90 without spills; bad shapes and params are one-line errors; the
numpy references are right on cases worked by hand; launches cover every element of odd shapes;
the uint8 every-element-written check catches what a single poison misses; the ceilings CSV round
trips and is applied to records by the experiment's bound."""

import numpy as np
import pytest

from gpulab.jobs import ceilings as measuring
from gpulab.records import ceilings as table
from gpulab.errors import GpulabError
from gpulab.experiments import get_experiment
from gpulab.experiments.napkin import napkin_columns
from gpulab.run.lab import NOT_WRITTEN, RunSpec, compile_record, merge_poisoned, plan

COALESCE = get_experiment("coalesce")
STENCIL = get_experiment("stencil")
GRAYSCALE = get_experiment("grayscale")
MEMORY = (COALESCE, STENCIL, GRAYSCALE)
H200_L2 = 62_914_560


def _configs():
    """Every variant at every value of its sweep, plus the extreme radii."""
    for exp in MEMORY:
        shape = exp.default_shape_list()[0]
        for v in exp.variants:
            sweep = dict(v.sweep)
            if "R" in sweep:
                sweep["R"] = tuple(sorted(set(sweep["R"]) | {1, 32}))
            for params in v.param_grid(sweep):
                yield pytest.param(RunSpec(exp, v, params, shape),
                                   id=f"{exp.name}-{v.name}-{v.params_label(params).replace(' ', '-')}")


@pytest.mark.parametrize("spec", list(_configs()))
def test_every_variant_compiles_for_sm90_without_spills(spec):
    record = compile_record(spec, "sm_90")
    assert not record.get("skip_reason"), record.get("skip_reason")
    assert record["spill_stores_bytes"] == 0 and record["spill_loads_bytes"] == 0
    assert record["stack_frame_bytes"] == 0
    assert 0 < record["reg_per_thread"] <= 128  # regs R=32 holds a 68-float window
    if spec.variant.name in ("shared", "nosync"):
        assert record["smem_static_bytes"] == 4 * (256 + 2 * spec.params["R"])
    # The demonstration is v1 minus its barrier, and nothing else.
    if spec.variant.name == "nosync":
        assert record["barriers"] == 0
    if spec.variant.name in ("shared", "regs"):
        assert record["barriers"] == 1


@pytest.mark.parametrize("file, entry, params", [
    ("fma.cu", "fma_peak", {"CHAINS": measuring.FMA_CHAINS}),
    ("copy.cu", "copy_peak", {}),
])
def test_ceiling_kernels_compile_without_spills(file, entry, params):
    from gpulab.gpu.compile import compile_kernel

    res = compile_kernel(measuring.KERNEL_DIR / file, entry, params, "sm_90").resources
    assert res.spill_stores_bytes == 0 and res.spill_loads_bytes == 0
    if entry == "fma_peak":  # 8 blocks of 256 per SM need <= 32 registers per thread
        assert res.registers <= 32


def test_every_memory_experiment_is_registered_with_a_baseline():
    from gpulab.experiments import EXPERIMENT_MODULES

    for exp in MEMORY:
        assert exp.name in EXPERIMENT_MODULES
        assert exp.bound == "memory"
        assert exp.baseline in {v.name for v in exp.variants}
        for v in exp.variants:
            assert (exp.directory / v.file).exists()
            text = (exp.directory / v.file).read_text()
            assert f'extern "C" __global__ void {exp.entry}(' in text
            assert "Expected effect" in text and "Params:" in text and "Shapes:" in text


# -- bad input: one-line errors ------------------------------------------------------------------
def _one_line(exc_info) -> str:
    message = str(exc_info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("radius", [0, 33, -1, 64])
def test_radius_out_of_range_is_refused(radius):
    with pytest.raises(GpulabError) as info:
        plan(STENCIL, None, {"R": (radius,)}, STENCIL.default_shape_list())
    message = _one_line(info)
    assert f"R={radius} is not accepted" in message and "32" in message


def test_radius_sweep_defaults_to_3_and_8_for_every_variant():
    specs = plan(STENCIL, None, {}, [STENCIL.shape(1000)])
    assert sorted((s.name, s.params["R"]) for s in specs) == sorted(
        (v, r) for v in ("global", "shared", "regs", "shfl", "nosync") for r in (3, 8))
    assert [s.variant.expected_wrong for s in specs if s.name == "nosync"] == [True, True]


def test_stride_sweep_defaults_to_powers_of_two_up_to_128():
    specs = plan(COALESCE, ["stride"], {}, [COALESCE.shape(64, 64)])
    assert [s.params["STRIDE"] for s in specs] == [1, 2, 4, 8, 16, 32, 64, 128]
    with pytest.raises(GpulabError) as info:
        plan(COALESCE, ["stride"], {"STRIDE": (3,)}, [COALESCE.shape(64, 64)])
    assert "STRIDE=3 is not accepted" in _one_line(info)


@pytest.mark.parametrize("exp, text", [
    (COALESCE, "0x4096"), (COALESCE, "4096x0"), (STENCIL, "0"), (GRAYSCALE, "0x2160"), (GRAYSCALE, "3840x0"),
])
def test_zero_sizes_are_refused(exp, text):
    with pytest.raises(GpulabError) as info:
        exp.parse_shape(text)
    assert "must be at least 1" in _one_line(info)


@pytest.mark.parametrize("exp, text, words", [
    (COALESCE, "-5x7", "at least 1"),
    (COALESCE, "65536x65536", "at most"),
    (STENCIL, "2147483647", "larger than"),
    (GRAYSCALE, "3840x70000", "larger than 65535"),
    (GRAYSCALE, "3840", "needs 2 numbers"),
    (GRAYSCALE, "abcx5", "not a whole number"),
])
def test_bad_shapes_are_refused_in_one_line(exp, text, words):
    with pytest.raises(GpulabError) as info:
        exp.parse_shape(text)
    assert words in _one_line(info)


@pytest.mark.parametrize("width, height", [(3839, 2161), (1, 1), (3, 5), (5, 3), (7, 257), (1001, 333)])
def test_odd_image_sizes_are_accepted_by_every_variant(width, height):
    # The vectorized variant handles widths that are not a multiple of 4 (flat pixel run + tail),
    # so no variant refuses them.
    shape = GRAYSCALE.shape(width, height)
    for v in GRAYSCALE.variants:
        for params in v.param_grid(dict(v.sweep)):
            assert v.constraints(params, shape) is None
            assert v.constraints(params, None) is None


# -- launches cover every element ----------------------------------------------------------------
def _elements_per_thread(exp, variant, params) -> int:
    return {"rows": params.get("VEC", 1), "multi": params.get("PIX", 1), "vec4": 4, "regs": 4,
            "shfl": params.get("PER", 1), "wide": 4 * params.get("V", 1)}.get(variant.name, 1)


@pytest.mark.parametrize("exp", MEMORY, ids=lambda e: e.name)
def test_launch_covers_every_element_of_every_test_shape(exp):
    for dims in exp.test_shapes + exp.default_shapes:
        shape = exp.shape(*dims)
        elements = int(np.prod(shape.values))
        for v in exp.variants:
            for params in v.param_grid(dict(v.sweep)):
                launch = v.launch(params, shape)
                assert launch.threads_per_block == 256
                assert all(g >= 1 for g in launch.grid)
                assert launch.grid[1] <= 65535 and launch.grid[2] <= 65535
                per_block = launch.threads_per_block * _elements_per_thread(exp, v, params)
                if v.name == "column":  # one block column per image column
                    assert launch.grid[0] == shape["width"]
                    assert launch.grid[1] * 256 >= shape["height"] > (launch.grid[1] - 1) * 256
                elif v.name == "row":  # one block row per image row
                    assert launch.grid[1] == shape["height"]
                    assert launch.grid[0] * 256 >= shape["width"] > (launch.grid[0] - 1) * 256
                else:  # flat: enough blocks, and no block entirely idle
                    assert launch.grid[1:] == (1, 1)
                    assert launch.grid[0] * per_block >= elements > (launch.grid[0] - 1) * per_block, (v.name, dims)


def test_column_walk_launch_is_one_block_per_column():
    launch = GRAYSCALE.variant("column").launch({}, GRAYSCALE.shape(3840, 2160))
    assert launch.block == (1, 256, 1) and launch.grid == (3840, 9, 1)
    launch = GRAYSCALE.variant("row").launch({}, GRAYSCALE.shape(3840, 2160))
    assert launch.block == (256, 1, 1) and launch.grid == (15, 2160, 1)


# -- numpy references, by hand -------------------------------------------------------------------
def test_grayscale_reference_by_hand():
    from gpulab.experiments.grayscale import reference

    pixels = [  # R, G, B, A -> gray
        ((255, 255, 255, 0), 255),   # white stays white: the weights sum to 256
        ((0, 0, 0, 255), 0),         # alpha is ignored
        ((255, 0, 0, 7), 77),        # 77*255 + 128 = 19763; >> 8 = 77
        ((0, 255, 0, 0), 149),       # 150*255 + 128 = 38378; >> 8 = 149
        ((0, 0, 255, 0), 29),        # 29*255 + 128 = 7523; >> 8 = 29
        ((100, 150, 200, 9), 141),   # 7700 + 22500 + 5800 + 128 = 36128; >> 8 = 141
        ((0, 0, 128, 0), 15),        # 29*128 = 3712 = 14.5 * 256: half rounds up
        ((0, 1, 114, 0), 14),        # 3456 = 13.5 * 256: half rounds up
        ((1, 1, 1, 1), 1),           # 256 + 128 = 384; >> 8 = 1
    ]
    rgba = np.array([[p for p, _ in pixels]], dtype=np.uint8)  # 1 x 9 x 4
    gray = reference(rgba, np)
    assert gray.dtype == np.uint8 and gray.shape == (1, len(pixels))
    assert gray[0].tolist() == [g for _, g in pixels]


def test_grayscale_napkin_math():
    shape = GRAYSCALE.shape(3840, 2160)
    assert GRAYSCALE.bytes_moved(shape) == 41_472_000
    cols = napkin_columns(4 * 3840 * 2160, 3840 * 2160, l2=H200_L2)
    assert cols["napkin_read_mb"] == pytest.approx(33.1776) and cols["napkin_written_mb"] == pytest.approx(8.2944)
    assert cols["fits_in_l2"] is True and cols["writes_fit_in_l2"] is True
    big = napkin_columns(4 * 7680 * 4320, 7680 * 4320, l2=H200_L2)
    assert big["fits_in_l2"] is False and big["writes_fit_in_l2"] is True


def test_coalesce_and_stencil_napkin_math():
    assert COALESCE.bytes_moved(COALESCE.shape(8192, 8192)) == 2 * 4 * 8192 * 8192
    assert STENCIL.bytes_moved(STENCIL.shape(1 << 26)) == 2 * 4 * (1 << 26)
    dram = napkin_columns(4 * 8192 * 8192, 4 * 8192 * 8192, l2=H200_L2)
    assert dram["fits_in_l2"] is False and dram["writes_fit_in_l2"] is False
    assert 4 * 8192 * 8192 >= 256 * 2**20  # the DRAM-bound size really is >= 256 MiB
    assert napkin_columns(10, 10, l2=0).keys() == {"napkin_read_mb", "napkin_written_mb"}  # no GPU: no label


def test_stencil_reference_by_hand():
    from gpulab.experiments.stencil import reference

    x = np.array([1, 2, 3, 4, 5], dtype=np.float32)
    # R=1, zero padding: (0+1+2)/3, (1+2+3)/3, (2+3+4)/3, (3+4+5)/3, (4+5+0)/3
    assert reference(x, 1, np).tolist() == [1.0, 2.0, 3.0, 4.0, 3.0]
    # R=2: windows of 5 -> sums 6, 10, 15, 14, 12
    assert reference(x, 2, np).tolist() == pytest.approx([1.2, 2.0, 3.0, 2.8, 2.4])
    # A radius larger than the array: every output is the whole sum / (2R+1).
    assert reference(x, 32, np).tolist() == pytest.approx([15 / 65] * 5)
    # The division is float32's correctly rounded one, as in the kernels.
    third = reference(np.array([1, 0, 0], dtype=np.float32), 1, np)
    assert third.dtype == np.float32 and third[0] == np.float32(1) / np.float32(3) and third[2] == 0


@pytest.mark.parametrize("radius", [1, 3, 8, 32])
def test_stencil_exact_inputs_make_every_interior_output_exactly_r(radius):
    from gpulab.experiments.stencil import periodic_input, reference

    n = 10 * (2 * radius + 1) + 3
    for offset in (0, 5, 12345):
        x = periodic_input(n, radius, offset, np)
        assert x[:2 * radius + 1].tolist() == [float((i + offset) % (2 * radius + 1)) for i in range(2 * radius + 1)]
        ref = reference(x, radius, np)
        assert (ref[radius:n - radius] == radius).all()


def test_stencil_check_counts_wrong_outputs_exactly_in_both_modes():
    rng = np.random.default_rng(1)
    shape = STENCIL.shape(1000)
    for exact in (False, True):
        inputs = STENCIL.make_inputs(shape, rng, exact)
        out = STENCIL.output(shape, np)
        assert np.isnan(out).all()
        STENCIL.kernel_args(inputs, out, shape, {"R": 8})  # records R, builds the exact inputs
        assert inputs["R"] == 8 and inputs["x"].dtype == np.float32 and inputs["x"].shape == (1000,)
        from gpulab.experiments.stencil import reference

        out[:] = reference(inputs["x"], 8, np)
        assert STENCIL.check(out, inputs, shape, exact, np).ok
        out[[3, 500, 999]] += 1.0
        out[10] = np.nan  # never written
        result = STENCIL.check(out, inputs, shape, exact, np)
        assert not result.ok and result.wrong_count == 4 and result.first_wrong == (3,)
    # A window shifted by one is caught by the random inputs.
    inputs = STENCIL.make_inputs(shape, rng, False)
    STENCIL.kernel_args(inputs, out, shape, {"R": 3})
    shifted = np.roll(reference(inputs["x"], 3, np), 1)
    assert STENCIL.check(shifted, inputs, shape, False, np).wrong_count > 500


def test_stencil_check_without_kernel_args_is_a_clear_error():
    inputs = STENCIL.make_inputs(STENCIL.shape(10), np.random.default_rng(0), False)
    with pytest.raises(GpulabError, match="kernel_args"):
        STENCIL.check(np.zeros(10, np.float32), inputs, STENCIL.shape(10), False, np)


def test_coalesce_check_is_a_bit_exact_copy():
    rng = np.random.default_rng(2)
    shape = COALESCE.shape(33, 17)
    inputs = COALESCE.make_inputs(shape, rng, False)
    a = inputs["A"]
    assert a.dtype == np.float32 and len(np.unique(a)) > 500
    assert COALESCE.check(a.copy(), inputs, shape, False, np).ok
    out = a.copy()
    out[5, 7] = np.nextafter(out[5, 7], np.float32(2))  # one ulp off is wrong
    out[20, 1] = np.nan
    r = COALESCE.check(out, inputs, shape, False, np)
    assert not r.ok and r.wrong_count == 2 and r.first_wrong == (5, 7)
    # a transpose-shaped mistake (reading A[col][row]) is caught everywhere off the diagonal
    square = COALESCE.shape(16, 16)
    inputs = COALESCE.make_inputs(square, rng, True)
    assert COALESCE.check(inputs["A"].T.copy(), inputs, square, True, np).wrong_count > 200


def test_speedup_compares_like_with_like_radius():
    from gpulab.run.lab import derive

    def rec(variant, params, ms):
        return {"variant": variant, "params": params, "shape": "16777216", "time_ms": ms}

    rows = [rec("global", "R=3", 1.0), rec("global", "R=8", 2.0), rec("shared", "R=3", 0.5),
            rec("shared", "R=8", 1.0), {**rec("nosync", "R=8", 0.1), "expected_wrong": True}]
    records = derive([{**r, "experiment": "stencil"} for r in rows], "global")  # R from the registry
    assert [r["speedup_vs_baseline"] for r in records] == [1.0, 1.0, 2.0, 2.0, 20.0]
    assert STENCIL.problem_params == ("R",)
    # Params that the baseline does not have (sgemm's TILE vs v0's BLOCK): every baseline config counts.
    sgemm = derive([{"variant": "v0", "params": "BLOCK=16", "shape": "s", "time_ms": 4.0},
                    {"variant": "v0", "params": "BLOCK=32", "shape": "s", "time_ms": 2.0},
                    {"variant": "v1", "params": "TILE=32", "shape": "s", "time_ms": 1.0}], "v0")
    assert [r["speedup_vs_baseline"] for r in sgemm] == [0.5, 1.0, 2.0]


# -- uint8 outputs: two poisons ------------------------------------------------------------------
def test_two_poisons_catch_an_unwritten_pixel_whose_true_value_is_the_poison():
    from gpulab.experiments.grayscale import POISON, reference

    shape = GRAYSCALE.shape(4, 2)
    rgba = np.zeros((2, 4, 4), dtype=np.uint8)
    rgba[..., 0] = 255
    rgba[1, 3, :3] = (0x5A, 0x5A, 0x5A)  # gray of a neutral pixel is the pixel value: here, POISON
    ref = reference(rgba, np)
    assert ref[1, 3] == POISON
    first = GRAYSCALE.output(shape, np)
    second = np.invert(first)  # what Lab.verify does for integer outputs
    assert (first == POISON).all() and (second == 0xFF ^ POISON).all()
    for out in (first, second):  # a kernel that writes every pixel but (1, 3)
        out[...] = np.where(np.arange(8).reshape(2, 4) == 7, out, ref)
    assert GRAYSCALE.check(first, {"rgba": rgba}, shape, True, np).ok  # one poison alone is fooled
    merged, unwritten = merge_poisoned(first, second, np)
    assert unwritten == 1 and merged[1, 3] == NOT_WRITTEN and merged.dtype == np.int64
    result = GRAYSCALE.check(merged, {"rgba": rgba}, shape, True, np)
    assert not result.ok and result.wrong_count == 1 and result.first_wrong == (1, 3)


def test_napkin_lines_label_shapes_that_fit_in_l2():
    from gpulab.experiments.napkin import napkin_lines

    records = [{"shape": "3840x2160", **napkin_columns(4 * 3840 * 2160, 3840 * 2160, l2=H200_L2)},
               {"shape": "3840x2160", **napkin_columns(4 * 3840 * 2160, 3840 * 2160, l2=H200_L2)},
               {"shape": "8192x8192", **napkin_columns(4 * 8192**2, 4 * 8192**2, l2=H200_L2)},
               {"shape": "9x9", "skip_reason": "wrong output"}]
    lines = napkin_lines(records)
    assert len(lines) == 2
    assert "33.2 MB read + 8.3 MB written" in lines[0] and "FITS IN THE 62.9 MB L2" in lines[0]
    assert "DRAM-bound" in lines[1] and "FITS" not in lines[1]


def test_merge_poisoned_keeps_written_values():
    a = np.array([[0, 255, 7]], dtype=np.uint8)
    merged, unwritten = merge_poisoned(a, a.copy(), np)
    assert unwritten == 0 and merged.tolist() == [[0, 255, 7]]


# -- ceilings ------------------------------------------------------------------------------------
def _ceiling_rows(gpu="NVIDIA H200"):
    env = {"gpu": gpu, "driver": "580.159.04", "date": "2026-11-29T12:00:00+00:00", "sm_clock_mhz": 1980}
    rows = [
        {"ceiling": "copy_memcpy", "gbps": 4180.5, "time_ms": 0.5136, **env},
        {"ceiling": "copy_kernel", "gbps": 4110.25, "time_ms": 0.5224, **env},
        {"ceiling": "fma_fp32", "gflops": 64000.0, "time_ms": 4.4, **env},
    ]
    for mode, rate in (("fp32", 50000.0), ("tf32", 380000.0)):
        for n in table.GEMM_SIZES:
            rows.append({"ceiling": f"cublas_{mode}_{n}", "gflops": rate, "time_ms": 2.0 * n**3 / rate / 1e6,
                         "max_rel_err": 1e-6 if mode == "fp32" else 3e-4, "tf32_visible": mode == "tf32", **env})
    return rows


def test_ceilings_csv_round_trip(tmp_path):
    path = table.ceilings_path(tmp_path / "h200")
    table.save(path, _ceiling_rows())
    back = table.load(path)
    assert back is not None and not back.measured and back.path == path
    assert [r["ceiling"] for r in back.rows] == list(table.names())
    assert back.copy_gbps == pytest.approx(4180.5) and back.best_copy["ceiling"] == "copy_memcpy"
    assert back.fma_gflops == pytest.approx(64000.0)
    assert back.row("cublas_tf32_8192")["tf32_visible"] is True
    assert back.row("cublas_fp32_4096")["driver"] == "580.159.04"
    assert [p.name for p in path.parent.iterdir()] == ["ceilings.csv"]  # atomic: no temporary left


def test_incomplete_ceilings_file_is_not_used(tmp_path):
    path = table.ceilings_path(tmp_path)
    table.save(path, [r for r in _ceiling_rows() if r["ceiling"] != "fma_fp32"])
    assert table.load(path) is None
    assert table.load(tmp_path / "missing.csv") is None


def test_l2_ceiling_is_optional_and_read_when_present(tmp_path):
    path = table.ceilings_path(tmp_path)
    table.save(path, _ceiling_rows())
    assert table.load(path).l2_gbps is None  # a file from before the L2 ceiling is still complete
    table.save(path, _ceiling_rows() + [{"ceiling": table.L2_NAME, "gbps": 9876.5, "size_bytes": 30277632,
                                        "time_ms": 0.8, "gpu": "NVIDIA H200"}])
    assert table.load(path).l2_gbps == pytest.approx(9876.5)


@pytest.mark.parametrize("sms, l2", [(132, 60 << 20), (40, 4 << 20), (1, 64 << 10)])
def test_l2_buffer_fits_half_the_l2_in_whole_grid_strides(sms, l2):
    blocks, n4 = measuring.l2_geometry(sms, l2)
    stride = blocks * measuring.THREADS
    assert n4 % stride == 0 and n4 >= stride  # every pass reads each float4 once
    assert 16 * n4 <= l2 * measuring.L2_FRACTION
    assert blocks % sms == 0  # the same number of blocks on every SM
    if (sms, l2) == (132, 60 << 20):  # the H200: 8 blocks per SM, 7 strides, 30.3 MB
        assert blocks == 1056 and 16 * n4 == 30_277_632


def test_l2_buffer_too_small_for_one_block_per_sm_says_so():
    with pytest.raises(GpulabError, match="holds less than one float4"):
        measuring.l2_geometry(132, 1 << 20)


def test_l2_read_kernel_compiles_without_spills():
    from gpulab.gpu.compile import compile_kernel

    res = compile_kernel(measuring.KERNEL_DIR / "l2_read.cu", "l2_read", {}, "sm_90").resources
    assert res.registers > 0 and res.spill_stores_bytes == 0 and res.spill_loads_bytes == 0


class _FakeDevice:
    name = "NVIDIA H200"
    compute_capability = (9, 0)


def test_ensure_reuses_the_file_until_refresh(tmp_path, monkeypatch):
    calls = []

    def fake_measure(device, policy=None, progress=None):
        calls.append(device.name)
        # As measure_tensor writes them: the tensor row names its instruction (wgmma on this H200).
        return _ceiling_rows(device.name) + [{"ceiling": n, "gflops": 6e5, "time_ms": 1.0, "gpu": device.name,
                                              "instruction": table.tensor_instruction(device)}
                                             for n in table.tensor_names(device)]

    monkeypatch.setattr(measuring, "measure", fake_measure)
    first = measuring.ensure(_FakeDevice(), tmp_path)
    assert first.measured and calls == ["NVIDIA H200"]
    again = measuring.ensure(_FakeDevice(), tmp_path)
    assert not again.measured and calls == ["NVIDIA H200"]
    assert measuring.ensure(_FakeDevice(), tmp_path, refresh=True).measured and len(calls) == 2
    other = _FakeDevice()
    other.name = "NVIDIA H100"
    assert measuring.ensure(other, tmp_path).measured and calls[-1] == "NVIDIA H100"  # another card: measure


def test_attach_uses_copy_for_memory_and_fma_for_compute():
    c = table.Ceilings(_ceiling_rows())
    records = [
        {"variant": "rows", "gbps": 4000.0, "time_ms": 0.13},
        {"variant": "cols", "gbps": 1045.125, "time_ms": 0.5},
        {"variant": "vec4", "skip_reason": "wrong output"},
    ]
    table.attach(records, COALESCE, c)
    assert records[0]["ceiling"] == "copy_memcpy" and records[0]["ceiling_gbps"] == pytest.approx(4180.5)
    assert records[0]["pct_of_ceiling"] == pytest.approx(100 * 4000 / 4180.5)
    assert records[1]["pct_of_ceiling"] == pytest.approx(25.0, abs=0.01)
    assert "pct_of_ceiling" not in records[2]
    sgemm = get_experiment("sgemm")
    rows = [{"variant": "v1", "gflops": 16000.0, "gbps": 1.0, "time_ms": 8.0}]
    table.attach(rows, sgemm, c)
    assert rows[0]["ceiling"] == "fma_fp32" and rows[0]["pct_of_ceiling"] == pytest.approx(25.0)
    assert table.attach(rows, sgemm, None) == rows  # no ceilings: records unchanged


def test_cublas_math_mode_is_restored_without_a_gpu():
    # The compute-type switch is host-side state in CuPy; it must always be put back.
    pytest.importorskip("cupy")
    from cupy._core import _routines_linalg as linalg

    before = linalg.get_compute_type(np.float32)
    with measuring.cublas_float32_math("fp32"):
        assert linalg.get_compute_type(np.float32) == linalg.COMPUTE_TYPE_FP32
    assert linalg.get_compute_type(np.float32) == before
    try:
        with measuring.cublas_float32_math("tf32"):
            assert linalg.get_compute_type(np.float32) == linalg.COMPUTE_TYPE_TF32
    except Exception as exc:  # setting TF32 asks the device for its compute capability
        assert linalg.get_compute_type(np.float32) == before
        pytest.skip(f"CuPy needs a device to set TF32 here ({type(exc).__name__}); the GPU tests cover it")
    assert linalg.get_compute_type(np.float32) == before
