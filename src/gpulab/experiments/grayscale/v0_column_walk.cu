// v0 column walk: RGBA uint8 -> gray uint8, the 256 threads of a block walking DOWN one column.
//
// The block is 1 x 256 threads, so the 32 lanes of a warp are 32 consecutive rows of one column.
// Changed from the previous rung: nothing; the unaligned baseline of NVIDIA's Nsight Compute memory talk.
// Expected effect: a warp's 4-byte pixel loads hit 32 different rows, 32 sectors per instruction
// (1 KiB moved for 128 B used); its 1-byte stores hit 32 sectors for 32 B written. The neighbouring
// column's block uses the other bytes of those sectors soon after, so L2 (which holds the whole
// 41.5 MB 3840x2160 problem) serves them again: DRAM sees ~1x, the L1<->L2 path ~8x on loads and
// ~32x on stores. The talk measured the row walk about 8x faster than this on its card.
// Params: none; blocks of 1 x 256 threads, grid (width, ceil(height / 256)).
// Shapes: any width, height >= 1 (height <= 65535 for the row walk's grid; same limit here).
#include "common.cuh"

// BT.601 luma in 8-bit fixed point: (77 R + 150 G + 29 B + 128) >> 8. The weights sum to 256, so
// white stays 255; + 128 rounds half up; alpha is ignored. The numpy reference does the same
// integer arithmetic, so the check is exact.
__device__ __forceinline__ unsigned char luma(uchar4 p) {
    return (unsigned char)((77u * p.x + 150u * p.y + 29u * p.z + 128u) >> 8);
}

extern "C" __global__ void grayscale(const uchar4* __restrict__ rgba, unsigned char* __restrict__ gray,
                                     int width, int height) {
    const int x = blockIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y >= height) return;
    const size_t p = (size_t)y * width + x;
    gray[p] = luma(rgba[p]);
}
