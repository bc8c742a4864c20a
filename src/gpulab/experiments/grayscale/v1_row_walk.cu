// v1 row walk: RGBA uint8 -> gray uint8, the 256 threads of a block walking ALONG a row.
//
// Changed from v0: the block is 256 x 1 threads, so a warp is 32 neighbouring pixels of one row.
// Expected effect: each warp reads 128 contiguous bytes (4 sectors, all used) and writes 32 (1 sector):
// the minimum traffic, 33.2 MB read + 8.3 MB written at 3840x2160. The Nsight Compute talk saw ~8x over v0, the
// DRAM link near its peak. One 4-byte load per thread keeps only ~1 MB in flight over the card,
// so latency, not bandwidth, may hold it a little under the copy ceiling.
// Params: none; blocks of 256 x 1 threads, grid (ceil(width / 256), height).
// Shapes: any width >= 1, height 1..65535 (gridDim.y); a ragged last block idles its extra threads.
#include "common.cuh"

// BT.601 luma in 8-bit fixed point: (77 R + 150 G + 29 B + 128) >> 8, alpha ignored (see v0).
__device__ __forceinline__ unsigned char luma(uchar4 p) {
    return (unsigned char)((77u * p.x + 150u * p.y + 29u * p.z + 128u) >> 8);
}

extern "C" __global__ void grayscale(const uchar4* __restrict__ rgba, unsigned char* __restrict__ gray,
                                     int width, int height) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= width) return;
    const size_t p = (size_t)y * width + x;
    gray[p] = luma(rgba[p]);
}
