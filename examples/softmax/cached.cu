/* gpulab variant
summary: the online pass with the row held in registers: each element read once, written once
param:   THREADS = 256 in 128, 256, 512, 1024 | threads per block, one block per row
param:   ITEMS = 16 in 4, 8, 16, 32 | elements each thread holds
grid:    M
block:   THREADS
require: N <= THREADS * ITEMS | a row must fit in the block's registers (THREADS x ITEMS elements)
*/
// From online: the row is loaded once into registers (ITEMS per thread, the warp's loads still
// contiguous), the max and the sum come from those registers, and the output is written from them.
// DRAM sees each element once each way, the least a softmax can move: expected near the copy
// ceiling for rows past L2. The limit: N <= THREADS * ITEMS (4,096 at the defaults).
#include "block_reduce.cuh"  // block_max, block_sum, NEG_INF

extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ out, int M, int N) {
    __shared__ float scratch[32];
    const float* row = x + (size_t)blockIdx.x * N;
    float* dst = out + (size_t)blockIdx.x * N;
    float v[ITEMS];
    float m = NEG_INF;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const int i = threadIdx.x + j * THREADS;
        v[j] = i < N ? row[i] : NEG_INF;
        m = fmaxf(m, v[j]);
    }
    m = block_max(m, scratch);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        v[j] = expf(v[j] - m);  // exp(-inf - m) = 0 for the places past the row's end
        s += v[j];
    }
    const float inv = 1.0f / block_sum(s, scratch);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const int i = threadIdx.x + j * THREADS;
        if (i < N) dst[i] = v[j] * inv;
    }
}
