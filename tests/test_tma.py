"""gpulab.gpu.tma's checks and layout (the driver's encoding itself needs a GPU machine: see
tests/gpu/test_wgmma_gpu.py), launch.by_value, and what an arch-specific variant needs of the harness."""

import struct

import numpy as np
import pytest

from gpulab.errors import GpulabError
from gpulab.experiments.base import Launch, Variant
from gpulab.gpu.launch import argument_bytes, by_value
from gpulab.gpu.tma import L2_PROMOTION_BYTES, TENSOR_MAP_BYTES, bf16_matrix_map, l2_promotion, tensor_map_bytes


def test_map_of_a_row_major_matrix_puts_columns_first_and_the_pitch_in_bytes():
    spec = bf16_matrix_map(0x7F0000000000, rows=4096, cols=1000, box_rows=128, box_cols=64)
    assert spec.dims == (1000, 4096)  # the driver's dimension 0 is the innermost
    assert spec.row_pitch_bytes == 2000
    assert spec.box == (64, 128)
    assert spec.box_bytes == 64 * 128 * 2  # the whole box, what the mbarrier expects


@pytest.mark.parametrize("cols", [1, 7, 777, 4097])
def test_a_row_pitch_tma_cannot_describe_is_refused_in_one_line(cols):
    with pytest.raises(GpulabError) as info:
        bf16_matrix_map(0, rows=64, cols=cols, box_rows=64, box_cols=64)
    message = str(info.value)
    assert "\n" not in message and f"{cols} columns" in message and "multiple of 8" in message


@pytest.mark.parametrize("kwargs, words", [
    (dict(box_rows=257, box_cols=64), "1 to 256 rows"),
    (dict(box_rows=0, box_cols=64), "1 to 256 rows"),
    (dict(box_rows=64, box_cols=32), "64 columns wide"),
    (dict(box_rows=64, box_cols=128), "64 columns wide"),
])
def test_boxes_tma_or_the_swizzle_cannot_take_are_refused(kwargs, words):
    with pytest.raises(GpulabError, match=words):
        bf16_matrix_map(0, rows=64, cols=64, **kwargs)


def test_a_misaligned_base_or_an_empty_matrix_is_refused():
    with pytest.raises(GpulabError, match="16-byte aligned"):
        bf16_matrix_map(8, rows=64, cols=64, box_rows=64, box_cols=64)
    with pytest.raises(GpulabError, match="at least one row"):
        bf16_matrix_map(0, rows=0, cols=64, box_rows=64, box_cols=64)


def test_a_tensor_map_becomes_the_128_bytes_of_its_struct():
    # A real cuda.bindings CUtensorMap (building one needs no driver), its words set by hand.
    from cuda.bindings import driver

    tensor_map = driver.CUtensorMap()
    tensor_map.opaque = [driver.cuuint64_t(w) for w in range(1, 17)]
    blob = tensor_map_bytes(tensor_map)
    assert len(blob) == TENSOR_MAP_BYTES
    assert struct.unpack("<16Q", blob) == tuple(range(1, 17))


def test_by_value_is_one_element_holding_the_bytes():
    # CuPy passes a host array by value only when it has one element (else it refuses it as a
    # host array passed for a device pointer); the driver then copies the parameter's size from it.
    blob = bytes(range(128))
    arg = by_value(blob)
    assert isinstance(arg, np.ndarray) and arg.size == 1 and arg.itemsize == 128
    assert arg.tobytes() == blob


def _variant(**kw) -> Variant:
    return Variant(name="x", file="x.cu", summary="", launch=lambda p, s: Launch((1, 1, 1), (1, 1, 1)), **kw)


def test_an_arch_specific_variant_runs_on_its_own_arch_only_and_compiles_for_its_a_target():
    v = _variant(min_sm=90, min_sm_for="wgmma", arch_specific=True)
    assert v.arch_reason("sm_90") is None
    assert "sm_90a" in v.arch_reason("sm_80") and "sm_90 only" in v.arch_reason("sm_100")
    assert v.compile_arch("sm_90") == "sm_90a" and v.compile_arch("sm_90a") == "sm_90a"
    assert v.arch_label == "sm_90a"
    plain = _variant(min_sm=80, min_sm_for="cp.async")
    assert plain.arch_reason("sm_90") is None and plain.compile_arch("sm_90") == "sm_90"
    assert plain.arch_label == "sm_80+" and _variant().arch_label == ""
    assert plain.extra_args({}, None, None, {}) == ()


def test_a_programmatic_launch_passes_each_argument_as_the_kernel_holds_it():
    # cuLaunchKernelEx takes a pointer per parameter: a device array's address (8 bytes), a numpy
    # scalar's own bytes, a by_value struct's whole blob.
    class DeviceArray:  # what argument_bytes reads of a CuPy array
        class data:
            ptr = 0x7F00_0000_1234

    assert argument_bytes(DeviceArray()) == struct.pack("<Q", 0x7F00_0000_1234)
    assert argument_bytes(np.int32(-3)) == struct.pack("<i", -3)
    assert argument_bytes(np.float32(1.5)) == struct.pack("<f", 1.5)
    blob = bytes(range(128))
    assert argument_bytes(by_value(blob)) == blob
    with pytest.raises(GpulabError, match="numpy scalar"):
        argument_bytes(3)  # a bare int: its width is unknown


def test_each_l2_promotion_names_its_own_driver_setting():
    driver = pytest.importorskip("cuda.bindings.driver")  # the enums need no GPU
    kinds = driver.CUtensorMapL2promotion
    assert [l2_promotion(driver, n) for n in (0, 64, 128, 256)] == [
        kinds.CU_TENSOR_MAP_L2_PROMOTION_NONE, kinds.CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        kinds.CU_TENSOR_MAP_L2_PROMOTION_L2_128B, kinds.CU_TENSOR_MAP_L2_PROMOTION_L2_256B]
    # What every bench row was measured with (docs/notes/gemm_bf16-notes.md, "The L2 promotion").
    assert l2_promotion(driver, L2_PROMOTION_BYTES) == kinds.CU_TENSOR_MAP_L2_PROMOTION_L2_256B
    with pytest.raises(KeyError):
        l2_promotion(driver, 32)
