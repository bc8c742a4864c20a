/* gpulab variant
summary: one pass for the max and the sum together (online normalizer), then the output
param:   THREADS = 256 in 128, 256, 512, 1024 | threads per block, one block per row
grid:    M
block:   THREADS
*/
// From naive: the max and the sum come from one pass, each thread keeping (max so far, sum of
// exp(x - max so far)) and rescaling the sum when the max grows; the pairs are merged across the
// block the same way. The row is read twice instead of three times: expected ~1.5x naive where the
// row comes from DRAM each pass.
#include "block_reduce.cuh"  // NEG_INF

// (m, d) merged with (m2, d2): the larger max, each sum rescaled to it. An empty side (m = -inf,
// d = 0) adds nothing; its scale factor is never computed (exp(-inf - -inf) is NaN).
__device__ void merge(float& m, float& d, float m2, float d2) {
    const float mm = fmaxf(m, m2);
    const float a = (m == NEG_INF) ? 0.0f : d * expf(m - mm);
    const float b = (m2 == NEG_INF) ? 0.0f : d2 * expf(m2 - mm);
    m = mm;
    d = a + b;
}

__device__ void block_merge(float& m, float& d, float* sm, float* sd) {
    for (int o = 16; o > 0; o >>= 1) {
        merge(m, d, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, d, o));
    }
    if ((threadIdx.x & 31) == 0) { sm[threadIdx.x >> 5] = m; sd[threadIdx.x >> 5] = d; }
    __syncthreads();
    // Every thread merges the warps' pairs itself, in one order: each needs the block's (m, d).
    m = sm[0];
    d = sd[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); ++w) merge(m, d, sm[w], sd[w]);
}

extern "C" __global__ void softmax(const float* __restrict__ x, float* __restrict__ out, int M, int N) {
    __shared__ float sm[32], sd[32];
    const float* row = x + (size_t)blockIdx.x * N;
    float* dst = out + (size_t)blockIdx.x * N;
    float m = NEG_INF, d = 0.0f;
    for (int i = threadIdx.x; i < N; i += blockDim.x) merge(m, d, row[i], 1.0f);
    block_merge(m, d, sm, sd);
    const float inv = 1.0f / d;
    for (int i = threadIdx.x; i < N; i += blockDim.x) dst[i] = expf(row[i] - m) * inv;
}
