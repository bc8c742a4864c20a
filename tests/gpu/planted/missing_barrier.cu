// Planted wrong kernel: v1's tiling with the barrier between loading and using the tiles removed.
// Warps read tile entries other warps have not stored yet: a race the checker must catch.
#define TILE 32
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx, row = blockIdx.y * TILE + ty;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        for (int p = 0; p < TILE; ++p) acc += As[ty][p] * Bs[p][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
