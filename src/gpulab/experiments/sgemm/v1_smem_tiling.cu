// v1 shared-memory tiling: each block stages TILE x TILE tiles of A and B in shared memory.
//
// Changed from v0: A and B are read from global memory once per tile step instead of once per
// multiply-add, so global loads per thread fall from 2K to 2*ceil(K/TILE).
// Expected effect: global traffic drops by TILE; the shared-memory pipe (two LDS per FMA) becomes
// the limit, so a stall on the MIO queue is the expected top reason. Larger tiles reuse more but
// hold more threads at each barrier; TILE=8 gives 64-thread blocks, too few warps to hide latency.
// Params: TILE (8, 16 or 32): the block is TILE x TILE threads and the tiles TILE x TILE floats.
// Shapes: any M, N, K >= 1; ragged edges load zeros into the tiles and skip the store.
#include "common.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, const float* __restrict__ A,
                                 const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx;
    const int row = blockIdx.y * TILE + ty;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Every thread reaches both barriers: the guards cover the loads, never __syncthreads().
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int p = 0; p < TILE; ++p) acc += As[ty][p] * Bs[p][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
