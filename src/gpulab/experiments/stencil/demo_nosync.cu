// demo nosync: v1's shared tile with its barrier removed. A DEMONSTRATION, expected to be wrong.
//
// Changed from v1: no __syncthreads() between filling the tile and reading it. A thread still sees
// its own slot, but the last 2R lanes of each warp read slots the next warp fills, and the last 2R
// threads of the block read the halo that warp 0 fills in its second pass; any of those can be read
// before it is written and return whatever an earlier block left in that shared memory.
// Expected effect: a few per cent of outputs wrong, a different count on every run (the memory-hierarchy lesson saw
// 228,782 of 16.8M on a T4), and a time no better than v1's: the barrier was not what cost time.
// gpulab reports the wrong count it observed and never passes this variant.
// Params: R (1..32); 256 threads per block.
// Shapes: any N >= 1 (N < 2^31).
#include "common.cuh"

#define BLOCK 256

extern "C" __global__ void stencil(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float tile[BLOCK + 2 * R];
    const int first = (int)blockIdx.x * BLOCK - R;
    for (int k = threadIdx.x; k < BLOCK + 2 * R; k += BLOCK) {
        const int j = first + k;
        tile[k] = (j >= 0 && j < n) ? in[j] : 0.0f;
    }
    // The missing barrier: this is the bug on display.

    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k <= 2 * R; ++k) sum += tile[threadIdx.x + k];
    out[i] = sum / (float)(2 * R + 1);
}
