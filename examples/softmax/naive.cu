/* gpulab variant
summary: one block per row, three passes over it (max, sum of exp, output)
param:   THREADS = 256 in 128, 256, 512, 1024 | threads per block, one block per row
grid:    M
block:   THREADS
*/
// The plain way: each pass reads the whole row again. Expected: about a third of the copy ceiling's
// rate for rows that must come from DRAM each time; rows of a few KB stay in L1/L2 between passes,
// so it does better there than the byte count says.
#include "block_reduce.cuh"  // block_max, block_sum, NEG_INF

extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ out, int M, int N) {
    __shared__ float scratch[32];
    const float* row = x + (size_t)blockIdx.x * N;
    float* dst = out + (size_t)blockIdx.x * N;
    float m = NEG_INF;
    for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, row[i]);
    m = block_max(m, scratch);
    float s = 0.0f;
    for (int i = threadIdx.x; i < N; i += blockDim.x) s += expf(row[i] - m);
    s = block_sum(s, scratch);
    const float inv = 1.0f / s;
    for (int i = threadIdx.x; i < N; i += blockDim.x) dst[i] = expf(row[i] - m) * inv;
}
