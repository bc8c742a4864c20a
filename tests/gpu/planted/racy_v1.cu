/* gpulab variant
name:    racy_v1
summary: planted: sgemm v1 with the second __syncthreads() of its loop removed (a write-after-read race)
param:   TILE = 16 in 8, 16, 32 | the tile side: TILE x TILE threads and tiles
grid:    ceil_div(N, TILE), ceil_div(M, TILE)
block:   TILE, TILE
*/
// A user's kernel as issue 42 met it: sgemm's v1 (shared-memory tiling) without the barrier after
// the inner product, so a warp that finishes its products first overwrites As and Bs with the next
// k-tile while other warps of the block still read the current one. The value check can pass it at
// small shapes (one or two k-tiles, warps that happen to run in step: 97x65x33 was 163.8% of cuBLAS
// there), and fail it at larger ones (1025^3); racecheck reports the hazard at any shape. gpulab
// must never call it the best row of a shape (gpulab.jobs.clean).
extern "C" __global__ void sgemm(int M, int N, int K, const float* __restrict__ A,
                                 const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx;
    const int row = blockIdx.y * TILE + ty;

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int p = 0; p < TILE; ++p) acc += As[ty][p] * Bs[p][tx];
        // (v1 has a __syncthreads() here: the next k-tile's stores wait for every thread's reads)
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
