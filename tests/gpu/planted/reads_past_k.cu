// Planted out-of-bounds read whose values pass the check: v1's tiling, but the tile of A is loaded
// without the k < K guard. The value loaded past the K edge is then replaced by the zero pad, so
// every output is right and the value checker passes it; the load itself still happens, and for
// the last row of A it reads past the end of A's allocation when K is not a multiple of TILE.
// The value checker cannot see this; compute-sanitizer memcheck reports it.
#define TILE 16
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = blockIdx.x * TILE + tx, row = blockIdx.y * TILE + ty;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        float a = 0.0f;
        // The bug: no k0 + tx < K here. volatile keeps the load even though its value may be dropped.
        if (row < M) a = *(const volatile float*)&A[(size_t)row * K + k0 + tx];
        As[ty][tx] = (k0 + tx < K) ? a : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int p = 0; p < TILE; ++p) acc += As[ty][p] * Bs[p][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
