"""TMA tensor maps: the 128-byte descriptor a Hopper kernel's bulk tensor copies
(`cp.async.bulk.tensor`) read, encoded on the host by the CUDA driver (cuTensorMapEncodeTiled).

A kernel takes it by value as a `const __grid_constant__ CUtensorMap` parameter (128 bytes, 64-byte
aligned); `gpulab.gpu.launch.by_value` passes the bytes this module returns. This module knows only
matrices in device memory: a row-major `rows x cols` matrix of BF16 (2-byte) or FP32 (4-byte)
elements, copied in boxes of `box_rows x box_cols` elements between global memory and shared memory
laid out with the 128-byte swizzle (what wgmma's shared-memory descriptors read, and what a kernel
writing an FP32 output tile for a TMA store can fill without bank conflicts).

What TMA cannot take, refused here in one line before the driver sees it (the driver would only say
CUDA_ERROR_INVALID_VALUE): a row pitch that is not a multiple of 16 bytes (a BF16 matrix whose rows
are not a multiple of 8 elements), a base address not 16-byte aligned, a box side over 256 elements,
a box row wider than the 128-byte swizzle span. The constraints of each variant that uses TMA state
the same limits, so the harness skips such a shape with the reason instead of failing the launch.
"""

from __future__ import annotations

import ctypes
import dataclasses

from gpulab.errors import GpulabError

TENSOR_MAP_BYTES = 128
# What the hardware takes (CUDA driver API, cuTensorMapEncodeTiled): every global stride a multiple
# of 16 bytes, the base 16-byte aligned, each box side 1..256 elements, and with a swizzle the box's
# inner side at most the swizzle span.
STRIDE_ALIGN_BYTES = 16
BOX_SIDE_MAX = 256
SWIZZLE_128B_BYTES = 128
# How many bytes L2 fetches for a TMA request that misses: a line of 64, 128 or 256 bytes (0: no
# promotion). 256 brings in the next k-tile's 128 bytes of the same row with this one's.
L2_PROMOTION_BYTES = 256
ELEMENT_BYTES = 2  # BF16
F32_BYTES = 4
ELEMENT_NAMES = {ELEMENT_BYTES: "BF16", F32_BYTES: "FP32"}


@dataclasses.dataclass(frozen=True)
class TiledMap2D:
    """The arguments of cuTensorMapEncodeTiled for a row-major matrix, in the driver's order:
    dimension 0 is the innermost (columns), so dims are (cols, rows) and the one stride given is the
    row pitch in bytes (dimension 0's stride is the element size, implied)."""

    address: int
    dims: tuple[int, int]  # (cols, rows), elements
    row_pitch_bytes: int
    box: tuple[int, int]  # (box_cols, box_rows), elements
    element_bytes: int = ELEMENT_BYTES  # 2: BF16, 4: FP32

    @property
    def box_bytes(self) -> int:
        """What one copy writes to shared memory (and the mbarrier's expected transaction count):
        the whole box, out-of-bounds elements included (they arrive as zeros)."""
        return self.box[0] * self.box[1] * self.element_bytes


def bf16_matrix_map(address: int, rows: int, cols: int, box_rows: int, box_cols: int) -> TiledMap2D:
    """The tensor map's arguments for a dense row-major BF16 `rows x cols` matrix at device
    `address`, copied in `box_rows x box_cols` boxes with the 128-byte swizzle; a GpulabError, in one
    line that says what to change, for what TMA cannot describe."""
    return matrix_map(address, rows, cols, box_rows, box_cols, ELEMENT_BYTES)


def f32_matrix_map(address: int, rows: int, cols: int, box_rows: int, box_cols: int) -> TiledMap2D:
    """As bf16_matrix_map, for an FP32 matrix (an output tile stored by TMA): 32 columns per
    128-byte swizzled row, and a row pitch that is a multiple of 16 bytes needs cols % 4 == 0."""
    return matrix_map(address, rows, cols, box_rows, box_cols, F32_BYTES)


def matrix_map(address: int, rows: int, cols: int, box_rows: int, box_cols: int, element_bytes: int) -> TiledMap2D:
    name = ELEMENT_NAMES[element_bytes]
    if rows < 1 or cols < 1:
        raise GpulabError(f"a TMA matrix needs at least one row and column, got {rows} x {cols}")
    pitch = cols * element_bytes
    if pitch % STRIDE_ALIGN_BYTES:
        raise GpulabError(
            f"TMA cannot describe a {name} matrix with {cols} columns: its row pitch of {pitch} bytes is not a "
            f"multiple of {STRIDE_ALIGN_BYTES} (the column count must be a multiple of {STRIDE_ALIGN_BYTES // element_bytes})"
        )
    if address % STRIDE_ALIGN_BYTES:
        raise GpulabError(f"TMA needs a {STRIDE_ALIGN_BYTES}-byte aligned base address, got {address:#x}")
    for side, what in ((box_rows, "rows"), (box_cols, "columns")):
        if not 1 <= side <= BOX_SIDE_MAX:
            raise GpulabError(f"a TMA box has 1 to {BOX_SIDE_MAX} {what} per side, got {side}")
    if box_cols * element_bytes != SWIZZLE_128B_BYTES:
        # Exactly the span: a narrower box would leave the swizzled rows partly unwritten, and the
        # wgmma descriptors (SBO = 1024 bytes per 8 rows) assume full 128-byte rows.
        raise GpulabError(
            f"a 128-byte-swizzled {name} box is {SWIZZLE_128B_BYTES // element_bytes} columns wide, got {box_cols}"
        )
    return TiledMap2D(address, (cols, rows), pitch, (box_cols, box_rows), element_bytes)


def encode(spec: TiledMap2D) -> bytes:
    """The 128 bytes of the CUtensorMap the driver encodes for `spec`: BF16 or FP32 elements, no interleave,
    128-byte swizzle, L2 promotion of L2_PROMOTION_BYTES, out-of-bounds elements filled with zeros (which
    is how a tile past a ragged M, N or K edge contributes nothing to the product). Needs the CUDA
    driver (a GPU machine); cuda-bindings is one of gpulab's dependencies."""
    # Imported here, on the first encode: ~50 ms that every command importing the registry would pay.
    from cuda.bindings import driver

    # Idempotent; CuPy has usually initialized the driver already, in this same process.
    (err,) = driver.cuInit(0)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise GpulabError(f"the CUDA driver did not initialize ({err.name}): a tensor map needs a GPU machine")
    u64, u32 = driver.cuuint64_t, driver.cuuint32_t  # the binding takes these, not ints
    types = driver.CUtensorMapDataType
    dtype = types.CU_TENSOR_MAP_DATA_TYPE_FLOAT32 if spec.element_bytes == F32_BYTES else types.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    err, tensor_map = driver.cuTensorMapEncodeTiled(
        dtype,
        2,
        spec.address,
        [u64(d) for d in spec.dims],
        [u64(spec.row_pitch_bytes)],
        [u32(b) for b in spec.box],
        [u32(1), u32(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        l2_promotion(driver, L2_PROMOTION_BYTES),
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,  # NONE fills with zeros
    )
    if err != driver.CUresult.CUDA_SUCCESS:
        raise GpulabError(f"cuTensorMapEncodeTiled refused {spec}: {err.name}")
    return tensor_map_bytes(tensor_map)


def l2_promotion(driver, nbytes: int):
    """The driver's CUtensorMapL2promotion for a promotion of `nbytes` (0, 64, 128 or 256)."""
    kinds = driver.CUtensorMapL2promotion
    return {0: kinds.CU_TENSOR_MAP_L2_PROMOTION_NONE, 64: kinds.CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            128: kinds.CU_TENSOR_MAP_L2_PROMOTION_L2_128B, 256: kinds.CU_TENSOR_MAP_L2_PROMOTION_L2_256B}[nbytes]


def tensor_map_bytes(tensor_map) -> bytes:
    """A cuda.bindings CUtensorMap's 128 bytes as they lie in memory: what the kernel's parameter
    receives (its `opaque` words are binding objects, so the struct is read whole instead)."""
    return ctypes.string_at(tensor_map.getPtr(), TENSOR_MAP_BYTES)
