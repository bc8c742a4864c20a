// v2 multi pixel: each thread converts PIX consecutive pixels, one 4-byte load and one 1-byte
// store per pixel.
//
// Changed from v1: PIX pixels per thread, so 1/PIX the threads and PIX independent loads in flight
// per thread. The packed image is one flat run of width*height pixels, so rows need no special case.
// Expected effect: little (in the Nsight Compute memory talk it gained little or nothing). A warp's load now spans
// 128*PIX bytes with the lanes 4*PIX bytes apart, PIX times the sectors per instruction, the rest
// of each sector reused from L1 by the next iteration. The stores are worse: each 1-byte store
// instruction touches PIX times more sectors, and L1 is write-through, so L1->L2 store traffic grows
// with PIX (the talk's profile showed it above the 8 MB written). v3 fixes both.
// Params: PIX (2, 4 or 8) pixels per thread; 256 threads per block.
// Shapes: any width, height >= 1; the last thread stops at the last pixel.
#include "common.cuh"

// BT.601 luma in 8-bit fixed point: (77 R + 150 G + 29 B + 128) >> 8, alpha ignored (see v0).
__device__ __forceinline__ unsigned char luma(uchar4 p) {
    return (unsigned char)((77u * p.x + 150u * p.y + 29u * p.z + 128u) >> 8);
}

extern "C" __global__ void grayscale(const uchar4* __restrict__ rgba, unsigned char* __restrict__ gray,
                                     int width, int height) {
    const size_t total = (size_t)width * height;
    const size_t first = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * PIX;
#pragma unroll
    for (int k = 0; k < PIX; ++k) {
        const size_t p = first + k;
        if (p < total) gray[p] = luma(rgba[p]);
    }
}
